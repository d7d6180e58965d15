#include "datasets/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "datasets/builder.h"
#include "datasets/import_rules.h"

namespace aware {
namespace {

using datasets_detail::GraphBuilder;
using datasets_detail::Tensor;

// Supported default-domain opsets: what libonnx 1.12's schemas and shape
// inference cover.
constexpr int kMinOpset = 7, kMaxOpset = 17;

double product(const std::vector<double>& dims, size_t from = 0, size_t to = std::string::npos) {
  double p = 1;
  for (size_t i = from; i < std::min(to, dims.size()); ++i) p *= dims[i];
  return p;
}

// Which inputs of a node are parameters (trainable), and which are buffers.
struct Slots {
  std::vector<int> trainable, buffers;
};
Slots weight_slots(const std::string& op) {
  if (op == "Conv" || op == "ConvTranspose") return {{1, 2}, {}};
  if (op == "Gemm") return {{1, 2}, {}};
  if (op == "MatMul") return {{1}, {}};
  if (op == "BatchNormalization") return {{1, 2}, {3, 4}};
  if (op == "LayerNormalization" || op == "InstanceNormalization") return {{1, 2}, {}};
  if (op == "LSTM" || op == "GRU" || op == "RNN") return {{1, 2, 3}, {}};
  if (op == "PRelu") return {{1}, {}};
  if (op == "Gather") return {{0}, {}};  // an embedding table
  return {};
}

std::string node_label(const onnx::NodeProto& n, int index) {
  return "node '" + (n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name()) + "' (" + n.op_type() + ")";
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
std::int64_t int_attr(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback) {
  const auto* a = attribute(n, name);
  return a != nullptr ? a->i() : fallback;
}
std::vector<std::int64_t> ints_attr(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attribute(n, name);
  return a != nullptr ? std::vector<std::int64_t>(a->ints().begin(), a->ints().end()) : std::vector<std::int64_t>{};
}

class Importer : public datasets_detail::ImporterBase {
 public:
  using ImporterBase::ImporterBase;

  OpGraph run() {
    read_model();
    check_opset();
    try {
      onnx::checker::check_model(model_);
    } catch (const std::exception& e) {
      throw ParseError(path_ + ": the ONNX checker refuses the model: " + first_line(e.what()));
    }
    classify_tensors();
    set_input_shapes();
    infer_shapes();
    return build();
  }

 private:
  [[noreturn]] void fail_node(int index, const std::string& what) const {
    throw ParseError(path_ + ": " + node_label(graph().node(index), index) + ": " + what);
  }

  const onnx::GraphProto& graph() const { return model_.graph(); }

  void read_model() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw ParseError(path_ + ": cannot open");
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.empty()) throw ParseError(path_ + ": empty file (not an ONNX model)");
    if (!model_.ParseFromString(bytes) || !model_.has_graph() || model_.graph().node_size() == 0)
      throw ParseError(path_ + ": not an ONNX model, or truncated (the protobuf does not parse to a graph with nodes)");
  }

  void check_opset() {
    bool found = false;
    for (const auto& o : model_.opset_import()) {
      if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
      found = true;
      if (o.version() < kMinOpset || o.version() > kMaxOpset)
        throw ParseError(path_ + ": opset " + std::to_string(o.version()) + " is not supported (this build reads opsets " +
                         std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
    }
    if (!found) throw ParseError(path_ + ": no default-domain opset_import (not an ONNX model of standard ops)");
  }

  // Parameters, buffers, constants and data inputs.
  void classify_tensors() {
    for (const auto& init : graph().initializer()) {
      initializers_.insert(init.name());
      std::vector<double> dims;
      for (auto d : init.dims()) dims.push_back(static_cast<double>(d));
      shapes_[init.name()] = dims;
      if (init.data_type() == onnx::TensorProto::FLOAT || init.data_type() == onnx::TensorProto::FLOAT16 ||
          init.data_type() == onnx::TensorProto::DOUBLE || init.data_type() == onnx::TensorProto::BFLOAT16)
        float_initializers_.insert(init.name());
    }
    std::set<std::string> produced;
    for (const auto& n : graph().node())
      for (const auto& o : n.output()) produced.insert(o);
    std::set<std::string> graph_inputs;
    for (const auto& in : graph().input()) graph_inputs.insert(in.name());
    const auto outside = [&](const std::string& name) {
      return !name.empty() && !produced.count(name) && (initializers_.count(name) || graph_inputs.count(name));
    };
    for (const auto& n : graph().node()) {
      const Slots slots = weight_slots(n.op_type());
      for (int i : slots.trainable)
        if (i < n.input_size() && outside(n.input(i))) params_.insert(n.input(i));
      for (int i : slots.buffers)
        if (i < n.input_size() && outside(n.input(i))) buffers_.insert(n.input(i));
      // A float initializer added to or multiplied into an activation: a bias or a scale.
      if (n.op_type() == "Add" || n.op_type() == "Mul" || n.op_type() == "Sub")
        for (const auto& in : n.input())
          if (float_initializers_.count(in) && product(shapes_[in]) > 1) params_.insert(in);
    }
    // A Gather reads an embedding only when its table is a parameter-like float
    // tensor; a Gather on a shape (int64) stays a shape computation.
    for (const auto& in : graph().input())
      if (!params_.count(in.name()) && !buffers_.count(in.name()) && !initializers_.count(in.name()))
        data_inputs_.push_back(in.name());
    if (data_inputs_.empty()) throw ParseError(path_ + ": the model has no data input (every graph input is a parameter)");
    for (const auto& [name, shape] : options_.input_shapes)
      if (std::find(data_inputs_.begin(), data_inputs_.end(), name) == data_inputs_.end()) {
        std::string known;
        for (const auto& d : data_inputs_) known += (known.empty() ? "" : ", ") + d;
        throw ConfigError("--input-shape " + name + ": " + path_ + " has no data input of that name (its inputs: " + known + ")");
      }
  }

  // Data inputs get their shapes (--input-shape, --batch on the first dimension);
  // parameter inputs must have theirs in the file.
  void set_input_shapes() {
    auto* g = model_.mutable_graph();
    for (int i = 0; i < g->input_size(); ++i) {
      auto* in = g->mutable_input(i);
      const std::string& name = in->name();
      if (initializers_.count(name)) continue;
      const bool data = std::find(data_inputs_.begin(), data_inputs_.end(), name) != data_inputs_.end();
      auto* shape = in->mutable_type()->mutable_tensor_type()->mutable_shape();
      if (data && options_.input_shapes.count(name)) {
        shape->clear_dim();
        for (auto d : options_.input_shapes.at(name)) {
          if (d <= 0) throw ConfigError("--input-shape " + name + ": every dimension must be positive");
          shape->add_dim()->set_dim_value(d);
        }
      }
      std::vector<double> dims;
      for (int k = 0; k < shape->dim_size(); ++k) {
        auto* dim = shape->mutable_dim(k);
        const bool known = dim->has_dim_value() && dim->dim_value() > 0;
        if (data && k == 0 && options_.batch > 0 && !options_.input_shapes.count(name)) {
          dim->clear_dim_param();
          dim->set_dim_value(static_cast<std::int64_t>(options_.batch));
        } else if (!known) {
          const std::string what = dim->has_dim_param() ? "'" + dim->dim_param() + "'" : "unknown";
          if (data)
            throw ConfigError(path_ + ": input '" + name + "' has a dynamic dimension " + std::to_string(k) + " (" + what +
                              "): give " + (k == 0 ? "--batch N or " : "") + "--input-shape " + name + "=AxBx...");
          throw ParseError(path_ + ": parameter input '" + name + "' has no static shape (dimension " + std::to_string(k) + ")");
        }
        dims.push_back(static_cast<double>(dim->dim_value()));
      }
      shapes_[name] = dims;
      if (data) report_.data_inputs.push_back(name + datasets_detail::dims_text(dims));
    }
  }

  void infer_shapes() {
    onnx::ShapeInferenceOptions options;
    options.check_type = false;
    options.error_mode = 1;
    options.enable_data_propagation = true;
    try {
      onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception& e) {
      throw ParseError(path_ + ": shape inference failed: " + first_line(e.what()));
    }
    const auto take = [&](const onnx::ValueInfoProto& v) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
      std::vector<double> dims;
      for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? static_cast<double>(d.dim_value()) : -1);
      shapes_[v.name()] = dims;
    };
    for (const auto& v : graph().value_info()) take(v);
    for (const auto& v : graph().output()) take(v);
  }

  std::vector<double> shape_of(int node, const std::string& tensor) const {
    const auto it = shapes_.find(tensor);
    if (it == shapes_.end()) fail_node(node, "output '" + tensor + "' has no shape after shape inference (give --input-shape)");
    for (double d : it->second)
      if (d <= 0)
        fail_node(node, "output '" + tensor + "' has a dynamic shape " + datasets_detail::dims_text(it->second) +
                            " after shape inference (give --batch or --input-shape)");
    return it->second;
  }

  // The tensor a node reads: an activation, or a parameter made a variable on first use.
  std::optional<Tensor> tensor(GraphBuilder& b, const std::string& name) {
    if (name.empty()) return std::nullopt;
    if (const auto it = tensors_.find(name); it != tensors_.end()) return it->second;
    if (params_.count(name)) {
      const std::vector<double> dims = shapes_.at(name);
      const Tensor v = b.variable(name, dims.empty() ? std::vector<double>{1} : dims);
      report_.params += product(dims);
      tensors_[name] = v;
      return v;
    }
    return std::nullopt;  // a constant, a buffer or a shape computation: no op, no bytes
  }

  OpGraph build() {
    std::string name = graph().name().empty() ? std::filesystem::path(path_).stem().string() : graph().name();
    GraphBuilder b(name, datasets_detail::optimizer_named(options_.optimizer));
    for (const std::string& in : data_inputs_) tensors_[in] = b.input(in, shapes_.at(in));
    if (!data_inputs_.empty() && !shapes_.at(data_inputs_.front()).empty()) b.set_batch(shapes_.at(data_inputs_.front()).front());
    for (int i = 0; i < graph().node_size(); ++i) {
      const auto& n = graph().node(i);
      ++report_.nodes;
      std::vector<std::optional<Tensor>> ins;
      bool any = false;
      for (const auto& in : n.input()) {
        ins.push_back(tensor(b, in));
        any = any || (ins.back() && !params_.count(in));
      }
      if (!any) {  // shapes, constants: computed once, outside the step
        ++report_.static_nodes;
        continue;
      }
      add_node(b, i, ins);
    }
    // The loss: softmax cross-entropy of each graph output against label ids.
    std::vector<Tensor> outputs;
    std::vector<std::string> names;
    for (const auto& out : graph().output())
      if (const auto it = tensors_.find(out.name()); it != tensors_.end()) {
        outputs.push_back(it->second);
        names.push_back(out.name());
      }
    return finish_model(b, outputs, names, "no graph output is computed from the data inputs");
  }

  void add_node(GraphBuilder& b, int index, const std::vector<std::optional<Tensor>>& ins) {
    const auto& n = graph().node(index);
    const std::string& op = n.op_type();
    datasets_detail::ImportedNode node;
    node.op = op;
    node.name = n.name().empty() ? op + "_" + std::to_string(index) : n.name();
    node.inputs = ins;
    // Output 0, and every output of the ops whose later outputs are used (a
    // BatchNormalization's running statistics, a pool's indices and a dropout
    // mask are not part of the step).
    const bool first_only = op == "BatchNormalization" || op == "MaxPool" || op == "Dropout";
    for (int k = 0; k < n.output_size(); ++k)
      if (!n.output(k).empty() && (k == 0 || !first_only)) node.outputs.push_back(shape_of(index, n.output(k)));
    if (op == "Conv" || op == "ConvTranspose") node.attrs["group"] = static_cast<double>(int_attr(n, "group", 1));
    if (op == "Gemm") node.attrs["transA"] = static_cast<double>(int_attr(n, "transA", 0));
    if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
      double window = 1;
      for (auto v : ints_attr(n, "kernel_shape")) window *= static_cast<double>(v);
      node.attrs["window"] = window;
    }
    if (op == "LSTM" || op == "GRU" || op == "RNN") {
      if (const auto* h = attribute(n, "hidden_size")) node.attrs["hidden_size"] = static_cast<double>(h->i());
    }
    if (op == "Gather" && n.input_size() > 0 && params_.count(n.input(0))) node.attrs["embedding"] = 1;
    std::vector<Tensor> results;
    try {
      results = datasets_detail::add_imported_node(b, node, report_.uncosted);
    } catch (const datasets_detail::ImportNodeError& e) {
      fail_node(index, e.what());
    }
    size_t k = 0;
    for (const auto& o : n.output())
      if (!o.empty() && k < results.size()) tensors_[o] = results[k++];
  }

  onnx::ModelProto model_;
  std::set<std::string> initializers_, float_initializers_, params_, buffers_;
  std::vector<std::string> data_inputs_;
  std::map<std::string, std::vector<double>> shapes_;
  std::map<std::string, Tensor> tensors_;
};

}  // namespace

OpGraph import_onnx(const std::string& path, const ModelImportOptions& options, ModelImportReport* report) {
  return datasets_detail::run_importer<Importer>(path, options, report);
}

}  // namespace aware
