// The cost rules every model importer shares. An importer translates each node
// of its source graph into an ImportedNode in ONNX's op vocabulary ("Conv",
// "Gemm", "BatchNormalization", ...) with the tensors it reads and the static
// shapes it writes; add_imported_node() then adds the forward op with its FLOPs,
// bytes, shape parameters and gradient recipe to a GraphBuilder, and
// finish_imported() adds the loss, the backward pass and the updates by the
// zoo's rules. So an ONNX file and a TorchScript file of one model give the
// same training step, op for op.
//
// Not thread-safe (a GraphBuilder is not); no ONNX or LibTorch header here.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "datasets/builder.h"
#include "datasets/model_import.h"

namespace aware::datasets_detail {

// One forward node of an imported model.
struct ImportedNode {
  std::string op;    // ONNX op type: "Conv", "ConvTranspose", "Gemm", "MatMul", "Relu", "Add", ...
  std::string name;  // unique enough to name the op; made unique by the builder
  // By the node's input slot: the tensor read, or nullopt for a constant, a
  // buffer (running statistics) or a shape computation, which cost nothing.
  std::vector<std::optional<Tensor>> inputs;
  std::vector<std::vector<double>> outputs;  // static shapes of the outputs the step uses
  // "group" (Conv), "window" (pooling: elements per output), "transA" (Gemm),
  // "hidden_size" (LSTM/GRU/RNN).
  std::map<std::string, double> attrs;

  double attr(const std::string& key, double fallback) const {
    const auto it = attrs.find(key);
    return it == attrs.end() ? fallback : it->second;
  }
};

// A node the rules cannot take (a view that changes the element count, a
// constant where an activation is needed); the importer adds the file and node.
class ImportNodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The optimizer of --optimizer: sgd, momentum, rmsprop or adam; throws ConfigError.
Optimizer optimizer_named(const std::string& name);

// "[8,3,224,224]".
std::string dims_text(const std::vector<double>& dims);

// Views that are free (no op, no bytes): Identity, Dropout, Flatten, Reshape, ...
bool is_free_view(const std::string& op);

// Adds the forward op of `node` (none for a free view) and returns one tensor per
// entry of node.outputs. An op type without a cost rule is costed by the bytes
// it moves, with a gradient of the same bytes, and counted in `uncosted`.
// Throws ImportNodeError.
std::vector<Tensor> add_imported_node(GraphBuilder& b, const ImportedNode& node,
                                      std::map<std::string, int>& uncosted);

// The loss (softmax cross-entropy of each output seen as {rows, classes}
// against label ids, named after `names`), then finish(): backward and updates.
OpGraph finish_imported(GraphBuilder& b, const std::vector<Tensor>& outputs,
                        const std::vector<std::string>& names);

// The checks of the shape options every importer runs before reading the file,
// each a ConfigError naming `path` and the option: --batch is 0 (none) or a
// whole number >= 1; every --input-shape passes check_input_size().
void check_shape_options(const std::string& path, const ModelImportOptions& options);

// --batch and each --input-shape agree on the input's first dimension. Each
// importer calls it once it has checked that every --input-shape names one of
// the model's inputs, so that a misspelt name is reported as such first.
void check_batch_agrees_with_shapes(const std::string& path, const ModelImportOptions& options);

// A data input's final shape: every dimension >= 1 and at most
// kMaxInputElements elements in all (computed without overflow). Throws
// ConfigError naming `path` and the input.
void check_input_size(const std::string& path, const std::string& name,
                      const std::vector<std::int64_t>& dims);

// What every importer class holds and how it ends: the file, the options and
// the report it fills, its errors (ParseError naming the file) and the last
// step of its build. An importer derives from it and adds run().
class ImporterBase {
 public:
  ImporterBase(std::string path, const ModelImportOptions& options, ModelImportReport& report)
      : path_(std::move(path)), options_(options), report_(report) {}

 protected:
  // Throws ParseError "PATH: what".
  [[noreturn]] void fail(const std::string& what) const { throw ParseError(path_ + ": " + what); }

  // The end of build(): refuses a model with no trainable parameters, or with no
  // `outputs` (then fails with `no_outputs`), else finish_imported() with the
  // file as the graph's source. Throws ParseError.
  OpGraph finish_model(GraphBuilder& b, const std::vector<Tensor>& outputs,
                       const std::vector<std::string>& names, const std::string& no_outputs) const {
    if (report_.params <= 0) fail("the model has no trainable parameters: nothing to train");
    if (outputs.empty()) fail(no_outputs);
    OpGraph g = finish_imported(b, outputs, names);
    g.set_source(path_);
    return g;
  }

  std::string path_;
  const ModelImportOptions& options_;
  ModelImportReport& report_;  // the caller's, filled as the import runs
};

// The entry point of an importer: checks options.optimizer and the shape
// options (check_shape_options) before any work,
// then runs `Importer(path, options, report, extra...)` (with a report of its
// own when `report` is null) and returns its graph. Throws what the importer throws.
template <class Importer, class... Extra>
OpGraph run_importer(const std::string& path, const ModelImportOptions& options,
                     ModelImportReport* report, Extra&&... extra) {
  optimizer_named(options.optimizer);  // bad options before any work
  check_shape_options(path, options);
  ModelImportReport local;
  Importer importer(path, options, report != nullptr ? *report : local,
                    std::forward<Extra>(extra)...);
  return importer.run();
}

}  // namespace aware::datasets_detail
