#include "datasets/import_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/errors.h"
#include "datasets/layers.h"

namespace aware::datasets_detail {
namespace {

// The same cap on a convolution's im2col workspace as the zoo's conv2d.
constexpr double kMaxConvWorkspaceBytes = 256.0 * 1024 * 1024;

double product(const std::vector<double>& dims, size_t from = 0) {
  double p = 1;
  for (size_t i = from; i < dims.size(); ++i) p *= dims[i];
  return p;
}

bool one_of(const std::string& op, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return op == n; });
}

}  // namespace

Optimizer optimizer_named(const std::string& name) {
  if (name == "sgd") return Optimizer::kSgd;
  if (name == "momentum") return Optimizer::kMomentum;
  if (name == "rmsprop") return Optimizer::kRmsProp;
  if (name == "adam") return Optimizer::kAdam;
  throw ConfigError("--optimizer: '" + name + "' unknown (sgd, momentum, rmsprop, adam)");
}

std::string dims_text(const std::vector<double>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(static_cast<long long>(dims[i]));
  return out + "]";
}

namespace {

std::string shape_text(const std::vector<std::int64_t>& dims) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? "x" : "") + std::to_string(dims[i]);
  return out.empty() ? "(a scalar)" : out;
}

std::string number_text(double v) {
  char text[64];
  std::snprintf(text, sizeof text, v < 1e15 ? "%.0f" : "%.3g", v);
  return text;
}

}  // namespace

void check_input_size(const std::string& path, const std::string& name,
                      const std::vector<std::int64_t>& dims) {
  double elements = 1;  // a double: the product of int64 dimensions may overflow any integer
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] < 1)
      throw ConfigError(path + ": data input '" + name + "' " + shape_text(dims) + ": dimension " +
                        std::to_string(k) + " is " + std::to_string(dims[k]) +
                        " (every dimension must be at least 1)");
    elements *= static_cast<double>(dims[k]);
  }
  if (elements > kMaxInputElements)
    throw ConfigError(path + ": data input '" + name + "' " + shape_text(dims) + " has " +
                      number_text(elements) + " elements, more than the " +
                      number_text(kMaxInputElements) +
                      " (2^31) an imported model's input may have");
}

void check_shape_options(const std::string& path, const ModelImportOptions& options) {
  const double batch = options.batch;
  if (!(batch == 0 || (batch >= 1 && batch == std::floor(batch))))
    throw ConfigError(path + ": --batch " + number_text(batch) + " is not a whole number >= 1");
  if (batch > kMaxInputElements)
    throw ConfigError(path + ": --batch " + number_text(batch) + " is more than the " +
                      number_text(kMaxInputElements) +
                      " (2^31) elements an imported model's input may have");
  for (const auto& [name, dims] : options.input_shapes) check_input_size(path, name, dims);
}

void check_batch_agrees_with_shapes(const std::string& path, const ModelImportOptions& options) {
  const double batch = options.batch;
  for (const auto& [name, dims] : options.input_shapes) {
    if (batch > 0 && !dims.empty() && static_cast<double>(dims.front()) != batch)
      throw ConfigError(path + ": --batch " + number_text(batch) + " and --input-shape " + name +
                        "=" + shape_text(dims) + " disagree on the first dimension of '" + name +
                        "' (" + number_text(batch) + " vs " + std::to_string(dims.front()) +
                        "): give one of them, or the same number in both");
  }
}

bool is_free_view(const std::string& op) {
  return one_of(op, {"Identity", "Dropout", "Flatten", "Reshape", "Squeeze", "Unsqueeze"});
}

namespace {
std::vector<Tensor> add_node_unchecked(GraphBuilder& b, const ImportedNode& node,
                                       std::map<std::string, int>& uncosted);
}  // namespace

std::vector<Tensor> add_imported_node(GraphBuilder& b, const ImportedNode& node, std::map<std::string, int>& uncosted) {
  if (node.outputs.empty()) throw ImportNodeError("has no output the step uses");
  for (const auto& out : node.outputs)
    for (double d : out)
      if (!(d >= 1))
        throw ImportNodeError("output " + dims_text(out) + " is empty or has no static size");
  const auto rank_at_least = [&](const std::optional<Tensor>& t, size_t rank, const char* what) {
    if (t && t->dims.size() < rank)
      throw ImportNodeError(std::string(what) + " " + dims_text(t->dims) + " has fewer than " +
                            std::to_string(rank) + " dimensions");
  };
  const auto input = [&](size_t i) {
    return i < node.inputs.size() ? node.inputs[i] : std::nullopt;
  };
  if (node.op == "Conv" || node.op == "ConvTranspose") {
    rank_at_least(input(0), 3, "the input");
    rank_at_least(input(1), 3, "the weight");
    if (node.outputs[0].size() < 3)
      throw ImportNodeError("output " + dims_text(node.outputs[0]) +
                            " has fewer than 3 dimensions");
  } else if (node.op == "Gemm" || node.op == "MatMul") {
    rank_at_least(input(0), 1, "the input");
    if (node.outputs[0].empty()) throw ImportNodeError("output is a scalar");
  } else if (node.op == "LSTM" || node.op == "GRU" || node.op == "RNN") {
    rank_at_least(input(0), 3, "the input");
    if (node.attrs.count("gates_hidden") == 0) rank_at_least(input(1), 3, "the weight");
  }
  // Any other rank the rules index past (Tensor::dim) is the node's input, not a bug.
  try {
    return add_node_unchecked(b, node, uncosted);
  } catch (const std::out_of_range&) {
    throw ImportNodeError("an input has fewer dimensions than a " + node.op + " reads");
  }
}

namespace {
std::vector<Tensor> add_node_unchecked(GraphBuilder& b, const ImportedNode& node,
                                       std::map<std::string, int>& uncosted) {
  const std::string& op = node.op;
  const auto& ins = node.inputs;
  const auto x = [&](int i) -> const Tensor& {
    if (i >= static_cast<int>(ins.size()) || !ins[static_cast<size_t>(i)])
      throw ImportNodeError("input " + std::to_string(i) +
                            " is not computed in the step (a constant where an activation was expected)");
    return *ins[static_cast<size_t>(i)];
  };
  const auto have = [&](int i) { return i < static_cast<int>(ins.size()) && ins[static_cast<size_t>(i)].has_value(); };
  if (is_free_view(op)) {
    const Tensor& in = x(0);
    if (product(node.outputs[0]) != in.elements()) throw ImportNodeError("a view that changes the element count");
    return {view(in, node.outputs[0])};
  }
  ForwardSpec spec;
  spec.name = node.name;
  spec.output_dims = node.outputs;
  std::vector<int> positions;  // spec input index -> node input slot
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i]) {
      spec.inputs.push_back(*ins[i]);
      positions.push_back(static_cast<int>(i));
    }
  const auto at = [&](int slot) {  // the spec's index of a node input slot (-1: none)
    const auto it = std::find(positions.begin(), positions.end(), slot);
    return it == positions.end() ? -1 : static_cast<int>(it - positions.begin());
  };
  const double out_elems = product(node.outputs[0]);
  std::vector<int> all;
  for (size_t i = 0; i < spec.inputs.size(); ++i) all.push_back(static_cast<int>(i));

  if (op == "Conv" || op == "ConvTranspose") {
    const Tensor& in = x(0);
    const Tensor& w = x(1);
    const double group = node.attr("group", 1);
    const double kernel = product(w.dims, 2);
    // Conv: W is {out, in/group, k...}; ConvTranspose: W is {in, out/group, k...}.
    const double flops =
        op == "Conv" ? 2 * out_elems * (in.dim(1) / group) * kernel : 2 * in.elements() * w.dim(1) * kernel;
    spec.type = op == "Conv" ? (in.dims.size() == 4 ? "Conv2D" : "Conv") : "Conv2DBackpropInput";
    spec.flops = flops + (have(2) ? out_elems : 0);
    if (op == "Conv" && kernel > 1)
      spec.temp_bytes = std::min(kMaxConvWorkspaceBytes, out_elems / node.outputs[0][1] * (in.dim(1) / group) *
                                                             kernel * kFloatBytes);
    spec.shape = {{"batch", in.dim(0)}, {"in_channels", in.dim(1)}, {"filters", node.outputs[0][1]}, {"group", group}};
    if (in.dims.size() == 4 && w.dims.size() == 4 && node.outputs[0].size() == 4) {
      // The window, in the zoo's keys, so that a real kernel (hw/aten_kernels.cc) can
      // run it; the stride as input over output size (exact for the usual paddings).
      spec.shape["height"] = in.dim(2);
      spec.shape["width"] = in.dim(3);
      spec.shape["kernel_h"] = w.dim(2);
      spec.shape["kernel_w"] = w.dim(3);
      spec.shape["out_height"] = node.outputs[0][2];
      spec.shape["out_width"] = node.outputs[0][3];
      spec.shape["stride"] = std::max(1.0, std::round(in.dim(2) / std::max(1.0, node.outputs[0][2])));
    }
    spec.grads = {grad(spec.type + "BackpropInput", "grad_input", flops, {at(0)}, {at(1)}),
                  grad(spec.type + "BackpropFilter", "grad_filter", flops, {at(1)}, {at(0)})};
    if (have(2)) spec.grads.push_back(grad("BiasAddGrad", "grad_bias", out_elems, {at(2)}));
  } else if (op == "Gemm" || op == "MatMul") {
    const Tensor& a = x(0);
    const double k = op == "Gemm" && node.attr("transA", 0) != 0 ? a.dims.front() : a.dims.back();
    const double flops = 2 * out_elems * k;
    spec.type = "MatMul";
    spec.flops = flops + (op == "Gemm" && have(2) ? out_elems : 0);
    spec.shape = {{"m", out_elems / node.outputs[0].back()}, {"n", node.outputs[0].back()}, {"k", k}};
    spec.grads = {grad("MatMulGradA", "grad_a", flops, {at(0)}, at(1) >= 0 ? std::vector<int>{at(1)} : std::vector<int>{})};
    if (at(1) >= 0) spec.grads.push_back(grad("MatMulGradB", "grad_b", flops, {at(1)}, {at(0)}));
    if (op == "Gemm" && have(2)) spec.grads.push_back(grad("BiasAddGrad", "grad_bias", out_elems, {at(2)}));
  } else if (one_of(op, {"BatchNormalization", "LayerNormalization", "InstanceNormalization"})) {
    const Tensor& in = x(0);
    spec.type = op == "BatchNormalization" ? "FusedBatchNorm" : op;
    spec.flops = 8 * in.elements();
    spec.shape = {{"elements", in.elements()}};
    if (op == "BatchNormalization" && in.dims.size() >= 2) {
      spec.shape["batch"] = in.dim(0);
      spec.shape["channels"] = in.dim(1);
    } else if (op == "LayerNormalization" && !in.dims.empty()) {
      spec.shape["cols"] = in.dims.back();
      spec.shape["rows"] = in.elements() / std::max(1.0, in.dims.back());
    }
    std::vector<int> of{at(0)};
    for (int i : {1, 2})
      if (at(i) >= 0) of.push_back(at(i));
    spec.grads = {grad(spec.type + "Grad", "grad", 12 * in.elements(), of, of)};
    spec.output_dims.resize(1);  // training mode: the running statistics are buffers
  } else if (one_of(op, {"Relu", "LeakyRelu", "Clip", "PRelu", "Abs", "Neg"})) {
    spec.type = op;
    spec.flops = out_elems;
    spec.grads = {grad(op + "Grad", "grad", out_elems, all, {}, true)};
  } else if (one_of(op, {"Sigmoid", "Tanh", "Elu", "Selu", "Softplus", "Softsign", "HardSigmoid", "HardSwish", "Silu", "Erf",
                         "Exp", "Log", "Sqrt", "Reciprocal", "Pow", "Gelu", "Mish"})) {
    spec.type = op;
    spec.flops = 4 * out_elems;
    spec.grads = {grad(op + "Grad", "grad", 3 * out_elems, all, {0}, true)};
  } else if (one_of(op, {"Add", "Sub", "Mul", "Div", "Sum", "Max", "Min", "Mean", "Where"})) {
    spec.type = op == "Add" || op == "Sum" ? "AddV2" : op;
    spec.flops = out_elems * static_cast<double>(std::max<size_t>(1, spec.inputs.size() - 1));
    const bool product_rule = one_of(op, {"Mul", "Div", "Max", "Min", "Where"});
    for (size_t i = 0; i < spec.inputs.size(); ++i) {
      std::vector<int> reads;
      if (product_rule)
        for (size_t j = 0; j < spec.inputs.size(); ++j)
          if (j != i) reads.push_back(static_cast<int>(j));
      spec.grads.push_back(grad(spec.type + "Grad", "grad_" + std::to_string(i), out_elems, {static_cast<int>(i)}, reads));
    }
  } else if (one_of(op, {"MaxPool", "AveragePool", "LpPool"})) {
    const double window = node.attr("window", 1);
    spec.type = op;
    spec.flops = out_elems * window;
    spec.shape = {{"window", window}};
    spec.grads = {grad(op + "Grad", "grad", out_elems * window, {0}, {0}, op == "MaxPool")};
    spec.output_dims.resize(1);
  } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op.rfind("Reduce", 0) == 0) {
    spec.type = op;
    spec.flops = x(0).elements();
    spec.grads = {grad(op + "Grad", "grad", x(0).elements(), {0})};
  } else if (op == "Softmax" || op == "LogSoftmax") {
    spec.type = op;
    spec.flops = 5 * out_elems;
    spec.grads = {grad(op + "Grad", "grad", 3 * out_elems, {0}, {}, true)};
  } else if (op == "Gather" && have(0) && at(0) >= 0 && node.attr("embedding", 0) != 0) {
    spec.type = "GatherV2";
    spec.flops = 0;
    GradSpec g = grad("UnsortedSegmentSum", "grad", out_elems, {at(0)});
    g.grad_bytes = {out_elems * kFloatBytes};  // sparse: only the rows read
    spec.grads = {g};
  } else if (op == "LSTM" || op == "GRU" || op == "RNN") {
    // ONNX's single layer: x [T, B, I], W [D, gates*H, I]; an importer with a
    // stacked recurrence (TorchScript's aten::lstm) gives the sizes as attributes
    // and its weights as the inputs after slot 0.
    const Tensor& in = x(0);
    const bool sized = node.attrs.count("gates_hidden") > 0;
    const double t = node.attr("steps", in.dim(0)), batch = node.attr("batch", in.dim(1));
    const double gates_h = sized ? node.attr("gates_hidden", 0) : x(1).dim(1);
    const double dirs = sized ? node.attr("directions", 1) : x(1).dim(0);
    const double hidden = node.attr("hidden_size", gates_h), layers = node.attr("layers", 1);
    double flops = 0;
    for (double layer = 0; layer < layers; ++layer) {
      const double layer_in = layer == 0 ? node.attr("input_size", in.dim(2)) : dirs * hidden;
      flops += 2 * t * batch * dirs * gates_h * (layer_in + hidden) + 10 * t * batch * dirs * gates_h;
    }
    spec.type = op;
    spec.flops = flops;
    spec.shape = {{"steps", t}, {"batch", batch}, {"hidden", hidden}, {"directions", dirs}, {"layers", layers}};
    std::vector<int> weights;
    for (size_t slot = 1; slot < ins.size(); ++slot)
      if (at(static_cast<int>(slot)) >= 0 && (sized || slot <= 3)) weights.push_back(at(static_cast<int>(slot)));
    spec.grads = {grad(op + "GradInput", "grad_input", flops, {at(0)}, all, true),
                  grad(op + "GradWeights", "grad_weights", flops, weights, all, true)};
  } else if (op == "Concat") {
    spec.type = "ConcatV2";
    spec.grads = {grad("ConcatGrad", "grad", 0, all)};
  } else {
    // Data movement we know (Transpose, Slice, Pad, Split, ...) and op types
    // without a cost rule: the bytes they move, never free.
    static const std::set<std::string> movement = {
        "Transpose", "Slice",          "Pad",          "Split",        "Expand", "Tile",      "Resize", "Upsample",
        "Gather",    "GatherElements", "DepthToSpace", "SpaceToDepth", "Cast",   "ScatterND", "Scatter"};
    if (!movement.count(op)) ++uncosted[op];
    spec.type = op;
    spec.flops = 0;
    spec.grads = {grad(op + "Grad", "grad", 0, all)};
  }
  return b.add(spec);
}
}  // namespace

OpGraph finish_imported(GraphBuilder& b, const std::vector<Tensor>& outputs, const std::vector<std::string>& names) {
  std::vector<Tensor> losses;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& y = outputs[i];
    const double classes = y.dims.empty() ? 1 : y.dims.back();
    const double rows = y.elements() / classes;
    const Tensor logits = view(y, {rows, classes});
    const Tensor labels = b.input("labels/" + names.at(i), {rows});
    losses.push_back(softmax_cross_entropy(b, "loss/" + names.at(i), logits, labels));
  }
  return b.finish(total_loss(b, "total_loss", losses));
}

}  // namespace aware::datasets_detail
