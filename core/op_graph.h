// OpGraph: a training step as a DAG of framework-level operators.
//
// Ops and edges have dense integer ids (their index). Every number is a plain
// double with its unit in the field name. A graph is a copyable value; it is
// not thread-safe to mutate, but any number of threads may read a const graph.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aware {

// Which part of the training step an op belongs to.
enum class Phase : std::uint8_t { kForward = 0, kBackward = 1, kUpdate = 2 };

const char* phase_name(Phase phase);
// Parses "forward" / "backward" / "update"; returns false on anything else.
bool parse_phase(const std::string& text, Phase* phase);

// One operator of the training step.
struct Op {
  std::string name;  // unique in the graph
  std::string type;  // framework op type: "Conv2D", "MatMul", "LSTMCell", ...
  Phase phase = Phase::kForward;
  double flops = 0;             // floating-point operations
  double bytes_accessed = 0;    // bytes read + written from device memory
  std::vector<double> output_bytes;  // size of each output tensor, by output index
  double param_bytes = 0;       // parameters (weights) resident on the op's device
  double temp_bytes = 0;        // workspace held only while the op runs
  std::string colocation_group;  // ops sharing a non-empty group must share a device
  double compute_us = -1;       // measured time; < 0 means "use the cost model"
  std::map<std::string, double> shape;  // shape parameters (M, N, K, batch, ...)
  // Layer metadata recorded by the builders, used by the expert placer:
  std::string block;  // "embedding", "encoder", "decoder", "attention", "softmax", "" ...
  int layer = -1;     // layer index inside its block, -1 when not layered
  int forward_of = -1;  // for backward / update ops: id of the forward op they belong to
  // Which of its device's two in-order streams runs the op: 0 = compute (every model
  // op), 1 = communication (the collective steps a strategy inserts, as NCCL runs on
  // its own CUDA stream): the two run side by side, each one op at a time. The
  // analytic contention mode and SimGrid honour it; Placeto mode and the hardware
  // backends run every op in one stream.
  int stream = 0;

  bool has_measured_cost() const { return compute_us >= 0; }
  double total_output_bytes() const;
};

// A tensor flowing from output `src_output` of op `src` into op `dst`.
struct Edge {
  int src = -1;
  int dst = -1;
  int src_output = 0;
  double bytes = 0;
};

class OpGraph {
 public:
  OpGraph() = default;
  explicit OpGraph(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // Where the graph came from ("zoo:nmt4", a file path); used in error messages.
  const std::string& source() const { return source_; }
  void set_source(std::string source) { source_ = std::move(source); }
  // Samples in one training step (the global batch), or 0 when unknown. The
  // strategy rewrites (data parallel, pipeline) need it to split the batch.
  double batch() const { return batch_; }
  void set_batch(double samples);

  // Adds an op and returns its id. Throws GraphError on a duplicate or empty name.
  int add_op(Op op);
  // Adds an edge from output `src_output` of `src` to `dst`. `bytes` < 0 takes the
  // producer's output size. Throws GraphError on unknown ids or a bad output index.
  int add_edge(int src, int dst, int src_output = 0, double bytes = -1);

  int num_ops() const { return static_cast<int>(ops_.size()); }
  int num_edges() const { return static_cast<int>(edges_.size()); }
  const Op& op(int id) const { return ops_[id]; }
  Op& mutable_op(int id);
  const std::vector<Op>& ops() const { return ops_; }
  const Edge& edge(int id) const { return edges_[id]; }
  const std::vector<Edge>& edges() const { return edges_; }
  // Edge ids into / out of an op, in insertion order.
  const std::vector<int>& in_edges(int op) const { return in_edges_[op]; }
  const std::vector<int>& out_edges(int op) const { return out_edges_[op]; }
  // Op id by name, or -1.
  int find(const std::string& name) const;

  // Changes whenever the graph is mutated; two graphs never share a revision.
  // Evaluators use it to cache per-graph preparation safely.
  std::uint64_t revision() const { return revision_; }

  // Throws GraphError (naming source(), the op and the field) unless the graph is
  // a valid DAG: no cycle, every number finite and non-negative, edges in range.
  void validate() const;

  double total_flops() const;
  double total_param_bytes() const;

 private:
  void touch();

  std::string name_;
  std::string source_;
  double batch_ = 0;
  std::vector<Op> ops_;
  std::vector<Edge> edges_;
  std::vector<std::vector<int>> in_edges_;
  std::vector<std::vector<int>> out_edges_;
  std::map<std::string, int> by_name_;
  std::uint64_t revision_ = 0;
};

}  // namespace aware
