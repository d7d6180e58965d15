// GraphBuilder: the machinery every model builder in datasets/ shares (internal
// to the folder). A builder adds the forward ops of a model, each with a recipe
// for its gradient ops; finish() then derives the backward pass and the
// parameter updates, so every model gets the same, consistent training step.
//
// How a training step is laid out:
// - A trainable parameter is a "Variable" forward op (no inputs, param_bytes =
//   its weights, output = the weights). Ops that use it take it as an input, so a
//   weight read across devices costs a transfer, and a weight shared across time
//   steps is one variable.
// - finish(loss) walks the forward ops in reverse creation order (a topological
//   order). The gradient of each forward output is the sum of what its consumers'
//   gradient ops produce for it: one contribution is used as is, several are
//   summed by an "AddN" op (activations) or, for a variable with more than two
//   contributions (a weight shared across time steps), by a chain of
//   "AccumulateGrad" adds, so each partial gradient dies as soon as it is added.
// - Each variable gets one update op (the optimizer's Apply* op) reading the
//   variable and its gradient; its param_bytes is the optimizer's slot state.
// - Backward and update ops carry forward_of, block and layer of their forward op.
//
// Not thread-safe; a builder builds one graph and is then spent.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/op_graph.h"

namespace aware::datasets_detail {

constexpr double kFloatBytes = 4;  // tensors are fp32 unless a builder asks for 16-bit ones

// The bytes of one element of the tensors being built: 4 (fp32), or 2 while a
// ElementBytes scope of 2 is alive (mixed precision: bf16 weights, activations
// and gradients; the optimizer keeps fp32 master weights and moments).
double element_bytes();
class ElementBytes {
 public:
  explicit ElementBytes(double bytes);
  ~ElementBytes();
  ElementBytes(const ElementBytes&) = delete;
  ElementBytes& operator=(const ElementBytes&) = delete;

 private:
  double saved_;
};

// A forward tensor: output `output` of forward op `op`, with its dimensions.
struct Tensor {
  int op = -1;
  int output = 0;
  std::vector<double> dims;

  double elements() const;
  double bytes() const { return elements() * element_bytes(); }
  double dim(int i) const { return dims.at(static_cast<std::size_t>(i)); }
};

// One gradient op of a forward op.
struct GradSpec {
  std::string type;    // "Conv2DBackpropInput", ...
  std::string suffix;  // name suffix, e.g. "grad_input"
  double flops = 0;
  double temp_bytes = 0;
  std::vector<int> grad_of;        // forward input indices whose gradient it outputs
  std::vector<double> grad_bytes;  // optional override of those outputs' sizes (sparse grads)
  std::vector<int> reads;          // forward input indices whose values it reads
  bool reads_output = false;       // reads the forward op's output 0
};

// A forward op and the recipe for its gradient.
struct ForwardSpec {
  std::string name;  // base name; made unique under the current scope
  std::string type;
  std::vector<Tensor> inputs;
  std::vector<std::vector<double>> output_dims;  // one entry per output
  double flops = 0;
  double temp_bytes = 0;
  double bytes_accessed = -1;  // < 0: inputs + outputs; set it when an op reads only part
  std::map<std::string, double> shape;
  std::vector<GradSpec> grads;
  std::vector<int> passthrough;  // inputs whose gradient is output 0's gradient unchanged
};

// The optimizer named in update ops, with its per-parameter slot count and flops.
enum class Optimizer { kSgd, kMomentum, kRmsProp, kAdam };

class GraphBuilder {
 public:
  GraphBuilder(std::string graph_name, Optimizer optimizer);

  // Block / layer recorded on the forward ops added from now on.
  void set_block(std::string block, int layer = -1);
  // Name prefix ("mixed_5b/branch_1") for the forward ops added from now on.
  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  // The samples one step processes (recorded as the graph's batch).
  void set_batch(double samples) { graph_.set_batch(samples); }
  const std::string& prefix() const { return prefix_; }

  // A non-trainable input (images, token ids, labels, an all-zero initial state).
  Tensor input(const std::string& name, std::vector<double> dims);
  // A trainable parameter of the given dimensions.
  Tensor variable(const std::string& name, std::vector<double> dims);
  // Adds a forward op; returns its outputs.
  std::vector<Tensor> add(const ForwardSpec& spec);
  Tensor add1(const ForwardSpec& spec) { return add(spec).at(0); }

  // Adds the gradient ops and update ops for `loss`, validates the graph and
  // returns it (with source "zoo:<name>" left for the caller to set).
  OpGraph finish(const Tensor& loss);

  int num_forward_ops() const { return graph_.num_ops(); }

 private:
  struct GradRef {
    int op;
    int output;
    double bytes;
  };
  struct Record {
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
    std::vector<GradSpec> grads;
    std::vector<int> passthrough;
    bool variable = false;
    bool trainable_path = false;  // a variable, or fed by one
  };

  std::string unique_name(const std::string& base);
  int add_backward_op(Op op, int forward_of);
  // The gradient of output `output` of forward op `fwd`, summing contributions; -1 op if none.
  GradRef output_gradient(int fwd, int output);
  void add_update(int var, const GradRef& grad);

  OpGraph graph_;
  Optimizer optimizer_;
  std::string block_;
  int layer_ = -1;
  std::string prefix_;
  std::map<std::string, int> name_counts_;
  std::vector<Record> records_;
  std::vector<std::vector<std::vector<GradRef>>> contributions_;  // [fwd op][output]
};

}  // namespace aware::datasets_detail
