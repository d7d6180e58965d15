#include "datasets/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cctype>
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

// Whether `text` is well-formed UTF-8: no stray continuation byte, no overlong
// form, no surrogate, nothing past U+10FFFF.
bool valid_utf8(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    size_t extra = 0;
    std::uint32_t code = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      extra = 1, code = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      extra = 2, code = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      extra = 3, code = lead & 0x07;
    } else {
      return false;
    }
    if (i + extra >= text.size()) return false;  // cut short
    for (size_t k = 1; k <= extra; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return false;
      code = (code << 6) | (byte(i + k) & 0x3F);
    }
    const std::uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
    if (code < smallest[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

// Ops whose output size is known only when the model runs, whatever the input
// shapes: a dynamic dimension they give comes from the data.
bool sized_by_data(const std::string& op) {
  static const std::set<std::string> ops = {"NonZero",
                                            "Loop",
                                            "If",
                                            "Scan",
                                            "Unique",
                                            "Compress",
                                            "NonMaxSuppression",
                                            "SequenceAt",
                                            "SplitToSequence",
                                            "ConcatFromSequence",
                                            "StringSplit",
                                            "TfIdfVectorizer"};
  return ops.count(op) > 0;
}

// Ops that take their output size from an input tensor's values: with static
// input shapes, shape inference (which propagates constants and shapes) leaves
// their output dynamic only when those values are computed from the data.
bool sized_by_input_values(const std::string& op) {
  static const std::set<std::string> ops = {
      "TopK",       "Range",         "ConstantOfShape", "Reshape",      "Expand",    "Tile",
      "Slice",      "Resize",        "Upsample",        "Pad",          "OneHot",    "Squeeze",
      "Unsqueeze",  "Split",         "ReduceSum",       "ReduceMean",   "ReduceMax", "ReduceMin",
      "ReduceProd", "CenterCropPad", "RandomNormal",    "RandomUniform"};
  return ops.count(op) > 0;
}

bool fully_static(const std::vector<double>& dims) {
  return std::all_of(dims.begin(), dims.end(), [](double d) { return d >= 0; });
}

// "[2,?]": a shape with its unknown dimensions.
std::string shape_text(const std::vector<double>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ',';
    out += dims[i] < 0 ? std::string("?") : std::to_string(static_cast<long long>(dims[i]));
  }
  return out + "]";
}

// The output shape of an Einsum, which libonnx 1.12's shape inference leaves
// with unknown dimensions: each output letter takes its size from the inputs.
// nullopt for an equation it does not take (an ellipsis); `conflict` says which
// letter has two sizes.
std::optional<std::vector<double>> einsum_shape(std::string equation,
                                                const std::vector<std::vector<double>>& inputs,
                                                std::string& conflict) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  if (equation.find('.') != std::string::npos) return std::nullopt;
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back() += c;
  }
  if (terms.size() != inputs.size()) return std::nullopt;
  std::map<char, double> size;
  std::map<char, int> count;
  for (size_t t = 0; t < terms.size(); ++t) {
    if (terms[t].size() != inputs[t].size()) return std::nullopt;
    for (size_t k = 0; k < terms[t].size(); ++k) {
      const char c = terms[t][k];
      if (!std::isalpha(static_cast<unsigned char>(c))) return std::nullopt;
      ++count[c];
      const double d = inputs[t][k];
      if (d < 0) return std::nullopt;
      const auto it = size.find(c);
      if (it == size.end() || it->second == 1)
        size[c] = d;
      else if (d != 1 && d != it->second) {
        conflict = std::string(1, c) + " is " + std::to_string(static_cast<long long>(it->second)) +
                   " in one input and " + std::to_string(static_cast<long long>(d)) + " in input " +
                   std::to_string(t);
        return std::nullopt;
      }
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = equation.substr(arrow + 2);
  } else {  // implicit: the letters used once, in alphabetical order
    for (const auto& [c, n] : count)
      if (n == 1) out += c;
  }
  std::vector<double> dims;
  for (char c : out) {
    if (!size.count(c)) return std::nullopt;
    dims.push_back(size[c]);
  }
  return dims;
}

class Importer : public datasets_detail::ImporterBase {
 public:
  // `bytes`, when given, is the model itself and `path` only its name in messages.
  Importer(std::string path, const ModelImportOptions& options, ModelImportReport& report,
           const std::string* bytes = nullptr)
      : ImporterBase(std::move(path), options, report), bytes_(bytes) {}

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
    std::string read;
    if (bytes_ == nullptr) {
      std::ifstream in(path_, std::ios::binary);
      if (!in) throw ParseError(path_ + ": cannot open");
      read.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::string& bytes = bytes_ != nullptr ? *bytes_ : read;
    if (bytes.empty()) throw ParseError(path_ + ": empty file (not an ONNX model)");
    if (!model_.ParseFromString(bytes) || !model_.has_graph() || model_.graph().node_size() == 0)
      throw ParseError(path_ + ": not an ONNX model, or truncated (the protobuf does not parse to a graph with nodes)");
    check_names();
  }

  // The names the graph file and messages carry are text: protobuf (proto2)
  // does not check that a string field is UTF-8, and JSON cannot hold other bytes.
  void check_names() const {
    const auto check = [&](const std::string& text, const std::string& what) {
      if (!valid_utf8(text)) throw ParseError(path_ + ": " + what + " is not valid UTF-8 text");
    };
    check(graph().name(), "the graph's name");
    for (int i = 0; i < graph().node_size(); ++i) {
      const auto& n = graph().node(i);
      const std::string which = "node " + std::to_string(i);
      check(n.name(), which + "'s name");
      check(n.op_type(), which + "'s op type");
      check(n.domain(), which + "'s domain");
      for (const auto& t : n.input()) check(t, "an input name of " + which);
      for (const auto& t : n.output()) check(t, "an output name of " + which);
      for (const auto& a : n.attribute()) check(a.name() + a.s(), "an attribute of " + which);
    }
    for (const auto& t : graph().initializer()) check(t.name(), "an initializer's name");
    for (const auto* list : {&graph().input(), &graph().output(), &graph().value_info()})
      for (const auto& v : *list) {
        check(v.name(), "a graph input, output or value name");
        if (v.type().has_tensor_type())
          for (const auto& d : v.type().tensor_type().shape().dim()) check(d.dim_param(), "the dimension names of '" + v.name() + "'");
      }
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
    datasets_detail::check_batch_agrees_with_shapes(path_, options_);
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
        for (auto d : options_.input_shapes.at(name))
          shape->add_dim()->set_dim_value(d);  // checked by run_importer
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
      if (data)
        datasets_detail::check_input_size(path_, name,
                                          std::vector<std::int64_t>(dims.begin(), dims.end()));
      shapes_[name] = dims;
      if (data) report_.data_inputs.push_back(name + datasets_detail::dims_text(dims));
    }
  }

  // ONNX shape inference, then the Einsum outputs it leaves unknown (from the
  // equation) and inference again from them, until nothing changes.
  void infer_shapes() {
    run_shape_inference();
    for (int round = 0; round < graph().node_size() && complete_einsum_shapes(); ++round)
      run_shape_inference();
  }

  void run_shape_inference() {
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

  // Writes the shape of every Einsum output that inference left unknown and
  // the equation gives; true when it wrote one.
  bool complete_einsum_shapes() {
    bool wrote = false;
    for (int i = 0; i < graph().node_size(); ++i) {
      const auto& n = graph().node(i);
      if (n.op_type() != "Einsum" || n.output_size() < 1 || n.output(0).empty()) continue;
      const auto known = shapes_.find(n.output(0));
      if (known != shapes_.end() && fully_static(known->second)) continue;
      std::vector<std::vector<double>> inputs;
      for (const auto& in : n.input()) {
        const auto it = shapes_.find(in);
        if (it == shapes_.end()) break;
        inputs.push_back(it->second);
      }
      const auto* equation = attribute(n, "equation");
      if (equation == nullptr || inputs.size() != static_cast<size_t>(n.input_size())) continue;
      std::string conflict;
      const auto dims = einsum_shape(equation->s(), inputs, conflict);
      if (!conflict.empty()) fail_node(i, "equation '" + equation->s() + "': " + conflict);
      if (!dims || !fully_static(*dims)) continue;
      onnx::ValueInfoProto* info = nullptr;
      for (auto& v : *model_.mutable_graph()->mutable_value_info())
        if (v.name() == n.output(0)) info = &v;
      for (auto& v : *model_.mutable_graph()->mutable_output())
        if (v.name() == n.output(0)) info = &v;
      if (info == nullptr) {
        info = model_.mutable_graph()->add_value_info();
        info->set_name(n.output(0));
      }
      auto* tensor_type = info->mutable_type()->mutable_tensor_type();
      tensor_type->clear_shape();
      auto* shape = tensor_type->mutable_shape();
      for (double d : *dims) shape->add_dim()->set_dim_value(static_cast<std::int64_t>(d));
      shapes_[n.output(0)] = *dims;
      wrote = true;
    }
    return wrote;
  }

  std::vector<double> shape_of(int node, const std::string& tensor) const {
    const auto it = shapes_.find(tensor);
    if (it == shapes_.end())
      fail_node(node,
                "output '" + tensor + "' has no shape after shape inference: " + why_dynamic(node));
    if (!fully_static(it->second))
      fail_node(node, "output '" + tensor + "' has no static shape " + shape_text(it->second) +
                          ": " + why_dynamic(node));
    for (double d : it->second)
      if (d == 0)
        fail_node(node, "output '" + tensor + "' is empty " + shape_text(it->second) +
                            " (a dimension of 0)");
    return it->second;
  }

  bool has_static_outputs(int index) const {
    for (const auto& o : graph().node(index).output()) {
      if (o.empty()) continue;
      const auto it = shapes_.find(o);
      if (it == shapes_.end() || !fully_static(it->second)) return false;
    }
    return true;
  }

  // Why node `index` has an output without a static shape. Every data input
  // has a static shape by now (set_input_shapes refuses a dynamic one and asks
  // for --batch or --input-shape), so the cause is among the node and the nodes
  // it reads from: the first of them, in graph order, with such an output.
  std::string why_dynamic(int index) const {
    std::map<std::string, int> producer;
    for (int i = 0; i < graph().node_size(); ++i)
      for (const auto& o : graph().node(i).output()) producer.emplace(o, i);
    std::set<int> seen{index};
    std::vector<int> todo{index};
    while (!todo.empty()) {
      const int i = todo.back();
      todo.pop_back();
      for (const auto& in : graph().node(i).input())
        if (const auto it = producer.find(in);
            it != producer.end() && seen.insert(it->second).second)
          todo.push_back(it->second);
    }
    int cause = index;
    for (int i : seen)  // ascending: the first in graph order
      if (!has_static_outputs(i)) {
        cause = i;
        break;
      }
    const auto& n = graph().node(cause);
    const std::string through = cause == index ? "" : ", through " + node_label(n, cause);
    if (sized_by_data(n.op_type()))
      return "it depends on the data" + through + " (the size of a " + n.op_type() +
             "'s output is known only when the model runs); the importer needs static shapes";
    if (sized_by_input_values(n.op_type()))
      return "it depends on the data" + through + " (a " + n.op_type() +
             " whose output size comes from values computed when the model runs); the importer "
             "needs static shapes";
    return "ONNX shape inference gives " +
           (cause == index ? std::string("this node") : node_label(n, cause)) +
           " no static output shape; the importer needs static shapes";
  }

  // The tensor a node reads: an activation, or a parameter made a variable on first use.
  std::optional<Tensor> tensor(GraphBuilder& b, const std::string& name) {
    if (name.empty()) return std::nullopt;
    if (const auto it = tensors_.find(name); it != tensors_.end()) return it->second;
    if (params_.count(name)) {
      const std::vector<double> dims = shapes_.at(name);
      for (double d : dims)
        if (!(d >= 1))
          throw ParseError(path_ + ": parameter '" + name + "' has the shape " + datasets_detail::dims_text(dims) +
                           " (an empty or negative dimension)");
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
    const std::vector<bool> live = reaches_an_output();
    for (int i = 0; i < graph().node_size(); ++i) {
      const auto& n = graph().node(i);
      ++report_.nodes;
      if (!live[static_cast<size_t>(i)]) {  // a dead branch: no part of the step
        ++report_.static_nodes;
        continue;
      }
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

  // The shape of input `slot` of node `index` when it is fully known.
  std::optional<std::vector<double>> input_shape(int index, int slot) const {
    const auto& n = graph().node(index);
    if (slot >= n.input_size() || n.input(slot).empty()) return std::nullopt;
    const auto it = shapes_.find(n.input(slot));
    if (it == shapes_.end() || !fully_static(it->second)) return std::nullopt;
    return it->second;
  }

  // What libonnx's shape inference does not check: that a Gemm, MatMul, Conv
  // or normalization reads a weight that fits its input (a Gemm with k = 17
  // against a 16x32 weight). Fails naming the node and both shapes.
  void check_operand_shapes(int index) const {
    const auto& n = graph().node(index);
    const std::string& op = n.op_type();
    const auto a = input_shape(index, 0), w = input_shape(index, 1);
    const auto mismatch = [&](const std::string& what) {
      fail_node(index, what + " (input " + shape_text(*a) + ", " + n.input(1) + " " +
                           shape_text(*w) + ")");
    };
    if (!a || !w) return;
    if (op == "Gemm") {
      if (a->size() != 2 || w->size() != 2) mismatch("Gemm takes 2-d operands");
      const bool trans_a = int_attr(n, "transA", 0) != 0, trans_b = int_attr(n, "transB", 0) != 0;
      const double k_a = (*a)[trans_a ? 0 : 1], k_b = (*w)[trans_b ? 1 : 0];
      if (k_a != k_b)
        mismatch("the inner dimensions differ: " + std::to_string(static_cast<long long>(k_a)) +
                 " in the input, " + std::to_string(static_cast<long long>(k_b)) + " in " +
                 n.input(1) + (trans_b ? " (transB=1)" : ""));
    } else if (op == "MatMul") {
      if (a->empty() || w->empty()) mismatch("MatMul takes operands of at least one dimension");
      const double k_a = a->back(), k_b = w->size() == 1 ? w->front() : (*w)[w->size() - 2];
      if (k_a != k_b)
        mismatch("the inner dimensions differ: " + std::to_string(static_cast<long long>(k_a)) +
                 " in the input, " + std::to_string(static_cast<long long>(k_b)) + " in " +
                 n.input(1));
    } else if (op == "Conv" || op == "ConvTranspose") {
      const double group = static_cast<double>(int_attr(n, "group", 1));
      if (group < 1)
        fail_node(index, "group is " + std::to_string(static_cast<long long>(group)) +
                             " (must be at least 1)");
      if (a->size() < 3 || a->size() != w->size())
        mismatch(
            "input and weight must have the same rank, at least 3 ({N, C, spatial...} and {M, "
            "C/group, kernel...})");
      if (op == "Conv" && (*a)[1] != (*w)[1] * group)
        mismatch("the input has " + std::to_string(static_cast<long long>((*a)[1])) +
                 " channels, the weight expects " +
                 std::to_string(static_cast<long long>((*w)[1] * group)));
      if (op == "ConvTranspose" && (*a)[1] != (*w)[0])
        mismatch("the input has " + std::to_string(static_cast<long long>((*a)[1])) +
                 " channels, the weight expects " +
                 std::to_string(static_cast<long long>((*w)[0])));
      const double out_channels = op == "Conv" ? (*w)[0] : (*w)[1] * group;
      if (const auto bias = input_shape(index, 2);
          bias && (bias->size() != 1 || (*bias)[0] != out_channels))
        fail_node(index, "bias " + n.input(2) + " " + shape_text(*bias) + " does not match the " +
                             std::to_string(static_cast<long long>(out_channels)) +
                             " output channels");
    } else if (op == "BatchNormalization" || op == "InstanceNormalization") {
      if (a->size() < 2) mismatch(op + " takes an input of at least 2 dimensions {N, C, ...}");
      for (int slot = 1; slot < std::min(n.input_size(), op == "BatchNormalization" ? 5 : 3);
           ++slot)
        if (const auto p = input_shape(index, slot); p && (p->size() != 1 || (*p)[0] != (*a)[1]))
          fail_node(index, "the input has " + std::to_string(static_cast<long long>((*a)[1])) +
                               " channels, " + n.input(slot) + " is " + shape_text(*p));
    }
  }

  // By node: whether a graph output reads what it writes, directly or through
  // other nodes (the checker has the nodes in topological order). A node that
  // reaches none computes nothing the loss sees, and its weights would get no
  // gradient.
  std::vector<bool> reaches_an_output() const {
    std::set<std::string> needed;
    for (const auto& out : graph().output()) needed.insert(out.name());
    std::vector<bool> live(static_cast<size_t>(graph().node_size()), false);
    for (int i = graph().node_size() - 1; i >= 0; --i) {
      const auto& n = graph().node(i);
      for (const auto& o : n.output()) live[static_cast<size_t>(i)] = live[static_cast<size_t>(i)] || needed.count(o) > 0;
      if (live[static_cast<size_t>(i)])
        for (const auto& in : n.input()) needed.insert(in);
    }
    return live;
  }

  void add_node(GraphBuilder& b, int index, const std::vector<std::optional<Tensor>>& ins) {
    const auto& n = graph().node(index);
    const std::string& op = n.op_type();
    check_operand_shapes(index);
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

  const std::string* bytes_ = nullptr;
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

OpGraph import_onnx_bytes(const std::string& bytes, const std::string& name,
                          const ModelImportOptions& options, ModelImportReport* report) {
  return datasets_detail::run_importer<Importer>(name, options, report, &bytes);
}

}  // namespace aware
