#include "datasets/layers.h"

#include <algorithm>
#include <cmath>

#include "core/errors.h"

namespace aware::datasets_detail {
namespace {

// cuDNN-style workspace for a k x k convolution: an im2col buffer, capped the way
// frameworks cap the workspace they let the autotuner use.
constexpr double kMaxConvWorkspaceBytes = 256.0 * 1024 * 1024;

double last_dim(const Tensor& x) { return x.dims.back(); }

}  // namespace

GradSpec grad(std::string type, std::string suffix, double flops, std::vector<int> grad_of,
              std::vector<int> reads, bool reads_output) {
  GradSpec g;
  g.type = std::move(type);
  g.suffix = std::move(suffix);
  g.flops = flops;
  g.grad_of = std::move(grad_of);
  g.reads = std::move(reads);
  g.reads_output = reads_output;
  return g;
}

Tensor view(const Tensor& t, std::vector<double> dims) {
  Tensor out = t;
  out.dims = std::move(dims);
  AWARE_CHECK(out.elements() == t.elements(), "view changes the number of elements");
  return out;
}

double conv_out_extent(double in, double kernel, double stride, Padding padding) {
  if (padding == Padding::kSame) return std::ceil(in / stride);
  return std::floor((in - kernel) / stride) + 1;
}

Tensor conv2d(GraphBuilder& b, const std::string& name, const Tensor& x, double filters,
              double kernel_h, double kernel_w, double stride, Padding padding) {
  const double n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const double ho = conv_out_extent(h, kernel_h, stride, padding);
  const double wo = conv_out_extent(w, kernel_w, stride, padding);
  AWARE_CHECK(ho > 0 && wo > 0, "convolution '" + name + "' has an empty output");
  const Tensor weights = b.variable(name + "/weights", {kernel_h, kernel_w, c, filters});
  const double flops = 2 * n * ho * wo * filters * c * kernel_h * kernel_w;
  const double workspace =
      kernel_h * kernel_w > 1
          ? std::min(kMaxConvWorkspaceBytes, n * ho * wo * c * kernel_h * kernel_w * kFloatBytes)
          : 0;
  ForwardSpec spec;
  spec.name = name;
  spec.type = "Conv2D";
  spec.inputs = {x, weights};
  spec.output_dims = {{n, filters, ho, wo}};
  spec.flops = flops;
  spec.temp_bytes = workspace;
  spec.shape = {{"batch", n},           {"in_channels", c},   {"height", h},
                {"width", w},           {"filters", filters}, {"kernel_h", kernel_h},
                {"kernel_w", kernel_w}, {"stride", stride},   {"out_height", ho},
                {"out_width", wo}};
  GradSpec grad_input = grad("Conv2DBackpropInput", "grad_input", flops, {0}, {1});
  grad_input.temp_bytes = workspace;
  GradSpec grad_filter = grad("Conv2DBackpropFilter", "grad_filter", flops, {1}, {0});
  grad_filter.temp_bytes = workspace;
  spec.grads = {grad_input, grad_filter};
  return b.add1(spec);
}

Tensor conv_bn_relu(GraphBuilder& b, const std::string& name, const Tensor& x, double filters,
                    double kernel_h, double kernel_w, double stride, Padding padding) {
  const Tensor conv = conv2d(b, name, x, filters, kernel_h, kernel_w, stride, padding);
  const Tensor norm = batch_norm(b, name + "/bn", conv);
  return relu(b, name + "/relu", norm);
}

Tensor depthwise_conv2d(GraphBuilder& b, const std::string& name, const Tensor& x, double kernel,
                        double stride, Padding padding) {
  const double n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const double ho = conv_out_extent(h, kernel, stride, padding);
  const double wo = conv_out_extent(w, kernel, stride, padding);
  const Tensor weights = b.variable(name + "/depthwise_weights", {kernel, kernel, c, 1});
  const double flops = 2 * n * ho * wo * c * kernel * kernel;
  ForwardSpec spec;
  spec.name = name;
  spec.type = "DepthwiseConv2dNative";
  spec.inputs = {x, weights};
  spec.output_dims = {{n, c, ho, wo}};
  spec.flops = flops;
  spec.shape = {{"batch", n},       {"in_channels", c},   {"height", h},        {"width", w},
                {"filters", c},     {"kernel_h", kernel}, {"kernel_w", kernel}, {"stride", stride},
                {"out_height", ho}, {"out_width", wo}};
  spec.grads = {grad("DepthwiseConv2dNativeBackpropInput", "grad_input", flops, {0}, {1}),
                grad("DepthwiseConv2dNativeBackpropFilter", "grad_filter", flops, {1}, {0})};
  return b.add1(spec);
}

Tensor batch_norm(GraphBuilder& b, const std::string& name, const Tensor& x) {
  const double channels = x.dims.size() == 4 ? x.dim(1) : last_dim(x);
  const Tensor params = b.variable(name + "/gamma_beta", {2, channels});
  ForwardSpec spec;
  spec.name = name;
  spec.type = "FusedBatchNorm";
  spec.inputs = {x, params};
  spec.output_dims = {x.dims};
  // Two passes for the moments, one to normalise, scale and shift.
  spec.flops = 8 * x.elements();
  spec.shape = {{"elements", x.elements()}, {"channels", channels}, {"batch", x.dim(0)}};
  spec.grads = {grad("FusedBatchNormGrad", "grad", 12 * x.elements(), {0, 1}, {0, 1})};
  return b.add1(spec);
}

Tensor bias_add(GraphBuilder& b, const std::string& name, const Tensor& x) {
  const double channels = x.dims.size() == 4 ? x.dim(1) : last_dim(x);
  return bias_add(b, name, x, b.variable(name + "/bias", {channels}));
}

Tensor bias_add(GraphBuilder& b, const std::string& name, const Tensor& x, const Tensor& bias) {
  const double channels = bias.elements();
  ForwardSpec spec;
  spec.name = name;
  spec.type = "BiasAdd";
  spec.inputs = {x, bias};
  spec.output_dims = {x.dims};
  spec.flops = x.elements();
  spec.shape = {{"elements", x.elements()}, {"channels", channels}};
  spec.passthrough = {0};
  spec.grads = {grad("BiasAddGrad", "grad_bias", x.elements(), {1})};
  return b.add1(spec);
}

Tensor activation(GraphBuilder& b, const std::string& type, const std::string& name,
                  const Tensor& x) {
  if (type == "Identity") return x;
  const double cost = type == "Relu" ? 1 : 4;  // transcendental ones cost a few flops
  ForwardSpec spec;
  spec.name = name;
  spec.type = type;
  spec.inputs = {x};
  spec.output_dims = {x.dims};
  spec.flops = cost * x.elements();
  spec.shape = {{"elements", x.elements()}};
  spec.grads = {grad(type + "Grad", "grad", 2 * x.elements(), {0}, {}, true)};
  return b.add1(spec);
}

Tensor pool(GraphBuilder& b, const std::string& type, const std::string& name, const Tensor& x,
            double kernel, double stride, Padding padding) {
  const double n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const double ho = conv_out_extent(h, kernel, stride, padding);
  const double wo = conv_out_extent(w, kernel, stride, padding);
  const double flops = n * c * ho * wo * kernel * kernel;
  ForwardSpec spec;
  spec.name = name;
  spec.type = type;
  spec.inputs = {x};
  spec.output_dims = {{n, c, ho, wo}};
  spec.flops = flops;
  spec.shape = {{"batch", n},       {"in_channels", c},   {"height", h},
                {"width", w},       {"kernel_h", kernel}, {"kernel_w", kernel},
                {"stride", stride}, {"out_height", ho},   {"out_width", wo}};
  if (type == "MaxPool") {
    spec.grads = {grad("MaxPoolGrad", "grad", flops, {0}, {0}, true)};
  } else {
    spec.grads = {grad("AvgPoolGrad", "grad", flops, {0})};
  }
  return b.add1(spec);
}

Tensor global_avg_pool(GraphBuilder& b, const std::string& name, const Tensor& x) {
  ForwardSpec spec;
  spec.name = name;
  spec.type = "Mean";
  spec.inputs = {x};
  spec.output_dims = {{x.dim(0), x.dim(1)}};
  spec.flops = x.elements();
  spec.shape = {{"elements", x.elements()}};
  spec.grads = {grad("MeanGrad", "grad", x.elements(), {0})};
  return b.add1(spec);
}

Tensor concat(GraphBuilder& b, const std::string& name, const std::vector<Tensor>& xs, int axis) {
  AWARE_CHECK(!xs.empty(), "concat '" + name + "' of nothing");
  if (xs.size() == 1) return xs[0];
  std::vector<double> dims = xs[0].dims;
  dims[axis] = 0;
  ForwardSpec spec;
  spec.name = name;
  spec.type = "ConcatV2";
  spec.inputs = xs;
  std::vector<int> all;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    dims[axis] += xs[i].dim(axis);
    all.push_back(static_cast<int>(i));
  }
  spec.output_dims = {dims};
  spec.shape = {{"inputs", static_cast<double>(xs.size())}, {"axis", static_cast<double>(axis)}};
  spec.grads = {grad("ConcatGrad", "grad", 0, all)};
  return b.add1(spec);
}

Tensor add(GraphBuilder& b, const std::string& name, const std::vector<Tensor>& xs) {
  AWARE_CHECK(!xs.empty(), "add '" + name + "' of nothing");
  if (xs.size() == 1) return xs[0];
  ForwardSpec spec;
  spec.name = name;
  spec.type = xs.size() == 2 ? "Add" : "AddN";
  spec.inputs = xs;
  spec.output_dims = {xs[0].dims};
  spec.flops = static_cast<double>(xs.size() - 1) * xs[0].elements();
  spec.shape = {{"elements", xs[0].elements()}, {"inputs", static_cast<double>(xs.size())}};
  for (std::size_t i = 0; i < xs.size(); ++i) spec.passthrough.push_back(static_cast<int>(i));
  return b.add1(spec);
}

Tensor elementwise_binary(GraphBuilder& b, const std::string& type, const std::string& name,
                          const Tensor& x, const Tensor& y, double flops_per_element) {
  ForwardSpec spec;
  spec.name = name;
  spec.type = type;
  spec.inputs = {x, y};
  spec.output_dims = {x.dims};
  spec.flops = flops_per_element * x.elements();
  spec.shape = {{"elements", x.elements()}};
  spec.grads = {grad(type + "Grad", "grad", 2 * flops_per_element * x.elements(), {0, 1}, {0, 1})};
  return b.add1(spec);
}

Tensor dense_matmul(GraphBuilder& b, const std::string& name, const Tensor& x, double units) {
  const Tensor weights = b.variable(name + "/kernel", {last_dim(x), units});
  return matmul(b, name, x, weights);
}

Tensor matmul(GraphBuilder& b, const std::string& name, const Tensor& x, const Tensor& w) {
  const double m = x.elements() / last_dim(x), k = last_dim(x), n = w.dim(1);
  AWARE_CHECK(w.dim(0) == k, "matmul '" + name + "': inner dimensions differ");
  const double flops = 2 * m * n * k;
  ForwardSpec spec;
  spec.name = name;
  spec.type = "MatMul";
  spec.inputs = {x, w};
  spec.output_dims = {{m, n}};
  spec.flops = flops;
  spec.shape = {{"M", m}, {"N", n}, {"K", k}};
  spec.grads = {grad("MatMulGradInput", "grad_input", flops, {0}, {1}),
                grad("MatMulGradWeight", "grad_weight", flops, {1}, {0})};
  return b.add1(spec);
}

Tensor batch_matmul(GraphBuilder& b, const std::string& name, const Tensor& a, const Tensor& c,
                    double batch, double m, double n, double k) {
  const double flops = 2 * batch * m * n * k;
  ForwardSpec spec;
  spec.name = name;
  spec.type = "BatchMatMul";
  spec.inputs = {a, c};
  spec.output_dims = {{batch, m, n}};
  spec.flops = flops;
  spec.shape = {{"batch", batch}, {"M", m}, {"N", n}, {"K", k}};
  spec.grads = {grad("BatchMatMulGradA", "grad_a", flops, {0}, {1}),
                grad("BatchMatMulGradB", "grad_b", flops, {1}, {0})};
  return b.add1(spec);
}

Tensor softmax(GraphBuilder& b, const std::string& name, const Tensor& x) {
  ForwardSpec spec;
  spec.name = name;
  spec.type = "Softmax";
  spec.inputs = {x};
  spec.output_dims = {x.dims};
  spec.flops = 5 * x.elements();
  spec.shape = {{"rows", x.elements() / last_dim(x)}, {"cols", last_dim(x)}};
  spec.grads = {grad("SoftmaxGrad", "grad", 4 * x.elements(), {0}, {}, true)};
  return b.add1(spec);
}

Tensor layer_norm(GraphBuilder& b, const std::string& name, const Tensor& x) {
  const Tensor params = b.variable(name + "/gamma_beta", {2, last_dim(x)});
  ForwardSpec spec;
  spec.name = name;
  spec.type = "LayerNorm";
  spec.inputs = {x, params};
  spec.output_dims = {x.dims};
  spec.flops = 8 * x.elements();
  spec.shape = {{"rows", x.elements() / last_dim(x)}, {"cols", last_dim(x)}};
  spec.grads = {grad("LayerNormGrad", "grad", 12 * x.elements(), {0, 1}, {0, 1})};
  return b.add1(spec);
}

Tensor softmax_cross_entropy(GraphBuilder& b, const std::string& name, const Tensor& logits,
                             const Tensor& labels) {
  const double rows = logits.elements() / last_dim(logits), classes = last_dim(logits);
  ForwardSpec spec;
  spec.name = name;
  spec.type = "SparseSoftmaxCrossEntropyWithLogits";
  spec.inputs = {logits, labels};
  spec.output_dims = {{rows}};
  spec.flops = 5 * logits.elements();
  spec.shape = {{"rows", rows}, {"classes", classes}};
  spec.grads = {grad("SoftmaxCrossEntropyGrad", "grad", 3 * logits.elements(), {0}, {0, 1})};
  return b.add1(spec);
}

Tensor total_loss(GraphBuilder& b, const std::string& name, const std::vector<Tensor>& losses) {
  ForwardSpec spec;
  spec.name = name;
  spec.type = "Mean";
  spec.inputs = losses;
  spec.output_dims = {{1}};
  double elements = 0;
  std::vector<int> all;
  for (std::size_t i = 0; i < losses.size(); ++i) {
    elements += losses[i].elements();
    all.push_back(static_cast<int>(i));
  }
  spec.flops = elements;
  spec.shape = {{"elements", elements}};
  spec.grads = {grad("MeanGrad", "grad", elements, all)};
  return b.add1(spec);
}

Tensor gather(GraphBuilder& b, const std::string& name, const Tensor& table, const Tensor& ids) {
  const double rows = ids.elements(), width = table.dim(1);
  ForwardSpec spec;
  spec.name = name;
  spec.type = "ResourceGather";
  spec.inputs = {table, ids};
  spec.output_dims = {{rows, width}};
  // Reads only the looked-up rows of the table.
  spec.bytes_accessed = 2 * rows * width * element_bytes() + ids.bytes();
  spec.shape = {{"rows", rows}, {"vocab", table.dim(0)}, {"width", width}};
  // The gradient is sparse (IndexedSlices): one row per id, not the whole table.
  GradSpec g = grad("UnsortedSegmentSum", "grad", rows * width, {0}, {1});
  g.grad_bytes = {rows * width * element_bytes()};
  spec.grads = {g};
  return b.add1(spec);
}

std::vector<Tensor> unstack(GraphBuilder& b, const std::string& name, const Tensor& x, int parts) {
  const double rows = x.dim(0) / parts;
  ForwardSpec spec;
  spec.name = name;
  spec.type = "Unpack";
  spec.inputs = {x};
  for (int i = 0; i < parts; ++i) spec.output_dims.push_back({rows, x.dim(1)});
  spec.shape = {{"parts", static_cast<double>(parts)}, {"elements", x.elements()}};
  spec.grads = {grad("Pack", "grad", 0, {0})};
  return b.add(spec);
}

Tensor stack(GraphBuilder& b, const std::string& name, const std::vector<Tensor>& xs) {
  ForwardSpec spec;
  spec.name = name;
  spec.type = "Pack";
  spec.inputs = xs;
  std::vector<int> all;
  for (std::size_t i = 0; i < xs.size(); ++i) all.push_back(static_cast<int>(i));
  spec.output_dims = {{xs[0].dim(0), static_cast<double>(xs.size()), last_dim(xs[0])}};
  spec.shape = {{"parts", static_cast<double>(xs.size())}, {"elements", xs[0].elements()}};
  spec.grads = {grad("Unpack", "grad", 0, all)};
  return b.add1(spec);
}

LstmStep lstm_cell(GraphBuilder& b, const std::string& name, const Tensor& x, const Tensor& state,
                   const Tensor& weights, const Tensor& bias) {
  const double batch = x.dim(0), in = last_dim(x), hidden = state.dim(1) / 2;
  AWARE_CHECK(weights.dim(0) == in + hidden && weights.dim(1) == 4 * hidden,
              "lstm cell '" + name + "': weights do not match input and hidden sizes");
  const double matmul_flops = 2 * batch * (in + hidden) * 4 * hidden;
  const double gates_bytes = batch * 4 * hidden * kFloatBytes;
  ForwardSpec spec;
  spec.name = name;
  spec.type = "LSTMBlockCell";
  spec.inputs = {x, state, weights, bias};
  spec.output_dims = {{batch, hidden}, {batch, 2 * hidden}};
  // One fused matmul for the four gates, then ~20 elementwise flops per unit.
  spec.flops = matmul_flops + 20 * batch * hidden;
  spec.temp_bytes = gates_bytes;
  spec.shape = {{"batch", batch}, {"input", in}, {"hidden", hidden}};
  GradSpec grad_input = grad("LSTMBlockCellGrad", "grad", matmul_flops + 30 * batch * hidden,
                             {0, 1}, {0, 1, 2}, true);
  grad_input.temp_bytes = gates_bytes;
  GradSpec grad_weight =
      grad("LSTMBlockCellGradWeight", "grad_weight", matmul_flops, {2, 3}, {0, 1});
  spec.grads = {grad_input, grad_weight};
  const std::vector<Tensor> outs = b.add(spec);
  return {outs[0], outs[1]};
}

std::vector<Tensor> embed_steps(GraphBuilder& b, const std::string& prefix, const Tensor& table,
                                const Tensor& ids, int steps) {
  return unstack(b, prefix + "unstack", gather(b, prefix + "lookup", table, ids), steps);
}

Tensor projected_xent(GraphBuilder& b, const std::string& suffix, const Tensor& x,
                      const Tensor& proj, const Tensor& proj_bias, const Tensor& labels) {
  const Tensor logits =
      bias_add(b, "bias" + suffix, matmul(b, "logits" + suffix, x, proj), proj_bias);
  return softmax_cross_entropy(b, "xent" + suffix, logits, labels);
}

ImageBatch image_classifier_inputs(GraphBuilder& b, double batch, double image_size) {
  b.set_batch(batch);
  b.set_block("input");
  ImageBatch in;
  in.images = b.input("images", {batch, 3, image_size, image_size});
  in.labels = b.input("labels", {batch});
  b.set_block("stem");
  b.set_prefix("stem");
  return in;
}

OpGraph finish_image_classifier(GraphBuilder& b, const Tensor& features, const Tensor& labels,
                                double classes, bool relu_first) {
  b.set_block("logits");
  b.set_prefix("logits");
  const Tensor pooled =
      global_avg_pool(b, "global_pool", relu_first ? relu(b, "relu", features) : features);
  const Tensor logits = bias_add(b, "fc/bias", dense_matmul(b, "fc", pooled, classes));
  return b.finish(total_loss(b, "total_loss", {softmax_cross_entropy(b, "xent", logits, labels)}));
}

}  // namespace aware::datasets_detail
