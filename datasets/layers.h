// Framework-granularity layer helpers on top of GraphBuilder (internal to
// datasets/): each adds the forward op(s) of one framework op with its FLOPs,
// shapes and gradient recipe. Image tensors are NCHW {batch, channels, height,
// width}; matrices are {rows, cols}. FLOPs count a multiply-add as two.
#pragma once

#include <string>
#include <vector>

#include "datasets/builder.h"

namespace aware::datasets_detail {

enum class Padding { kSame, kValid };

// One gradient op's recipe: its type, name suffix, FLOPs, the forward inputs whose
// gradients it outputs and those it reads (and whether it reads output 0).
GradSpec grad(std::string type, std::string suffix, double flops, std::vector<int> grad_of,
              std::vector<int> reads = {}, bool reads_output = false);

// The same tensor seen with other dimensions (a free reshape: no op, no bytes moved).
Tensor view(const Tensor& t, std::vector<double> dims);

// Output extent of a window of `kernel` with `stride` over `in`.
double conv_out_extent(double in, double kernel, double stride, Padding padding);

// Conv2D with its own filter variable (no bias: a batch-norm or bias-add follows).
Tensor conv2d(GraphBuilder& b, const std::string& name, const Tensor& x, double filters,
              double kernel_h, double kernel_w, double stride, Padding padding = Padding::kSame);
// Conv2D -> FusedBatchNorm -> Relu, the unit of Inception and ResNet.
Tensor conv_bn_relu(GraphBuilder& b, const std::string& name, const Tensor& x, double filters,
                    double kernel_h, double kernel_w, double stride,
                    Padding padding = Padding::kSame);
// Depthwise convolution (channel multiplier 1) with its own filter variable.
Tensor depthwise_conv2d(GraphBuilder& b, const std::string& name, const Tensor& x, double kernel,
                        double stride, Padding padding = Padding::kSame);
// FusedBatchNorm (training mode) with a gamma+beta variable over axis 1.
Tensor batch_norm(GraphBuilder& b, const std::string& name, const Tensor& x);
// BiasAdd over the last axis (matrices) or axis 1 (images).
Tensor bias_add(GraphBuilder& b, const std::string& name, const Tensor& x);
// BiasAdd with an existing (shared) bias tensor.
Tensor bias_add(GraphBuilder& b, const std::string& name, const Tensor& x, const Tensor& bias);
// Elementwise activation: "Relu", "Tanh", "Sigmoid"; "Identity" returns x unchanged.
Tensor activation(GraphBuilder& b, const std::string& type, const std::string& name,
                  const Tensor& x);
inline Tensor relu(GraphBuilder& b, const std::string& name, const Tensor& x) {
  return activation(b, "Relu", name, x);
}
// "MaxPool" or "AvgPool".
Tensor pool(GraphBuilder& b, const std::string& type, const std::string& name, const Tensor& x,
            double kernel, double stride, Padding padding = Padding::kSame);
// Mean over the spatial axes: {N, C, H, W} -> {N, C}.
Tensor global_avg_pool(GraphBuilder& b, const std::string& name, const Tensor& x);
// Concatenation along `axis`.
Tensor concat(GraphBuilder& b, const std::string& name, const std::vector<Tensor>& xs, int axis);
// Elementwise sum of same-shaped tensors.
Tensor add(GraphBuilder& b, const std::string& name, const std::vector<Tensor>& xs);
// Elementwise product-and-scale style binary op (e.g. "Mul") of same-shaped tensors.
Tensor elementwise_binary(GraphBuilder& b, const std::string& type, const std::string& name,
                          const Tensor& x, const Tensor& y, double flops_per_element);
// x {M, K} times a new weight variable {K, N}: {M, N}.
Tensor dense_matmul(GraphBuilder& b, const std::string& name, const Tensor& x, double units);
// x {M, K} times an existing weight tensor {K, N}.
Tensor matmul(GraphBuilder& b, const std::string& name, const Tensor& x, const Tensor& w);
// Batched matmul of two activations: a {B, M, K} times b {B, K, N} (transposes are
// folded into the dims the caller passes: `a_dims`-style shapes must already agree).
Tensor batch_matmul(GraphBuilder& b, const std::string& name, const Tensor& a, const Tensor& c,
                    double batch, double m, double n, double k);
// Softmax over the last axis.
Tensor softmax(GraphBuilder& b, const std::string& name, const Tensor& x);
// LayerNorm over the last axis with a gamma+beta variable.
Tensor layer_norm(GraphBuilder& b, const std::string& name, const Tensor& x);
// SparseSoftmaxCrossEntropyWithLogits of logits {M, V} against label ids {M}: {M}.
Tensor softmax_cross_entropy(GraphBuilder& b, const std::string& name, const Tensor& logits,
                             const Tensor& labels);
// Mean of per-example losses (any number of tensors) into a scalar-like {1}.
Tensor total_loss(GraphBuilder& b, const std::string& name, const std::vector<Tensor>& losses);
// Embedding lookup of `ids` (rows = number of ids) in `table` {V, E}: {rows, E}.
Tensor gather(GraphBuilder& b, const std::string& name, const Tensor& table, const Tensor& ids);
// Splits x {T*B, E} into T tensors of {B, E} (and the gradient packs them back).
std::vector<Tensor> unstack(GraphBuilder& b, const std::string& name, const Tensor& x, int parts);
// Stacks same-shaped tensors {B, E} into {B, T, E}.
Tensor stack(GraphBuilder& b, const std::string& name, const std::vector<Tensor>& xs);

// Token embeddings by step: the lookup of `ids` {steps * batch} in `table` {V, E}
// (op `prefix` + "lookup") split into `steps` tensors {batch, E} (`prefix` + "unstack").
std::vector<Tensor> embed_steps(GraphBuilder& b, const std::string& prefix, const Tensor& table,
                                const Tensor& ids, int steps);
// One step's loss over the vocabulary: logits x {B, H} times `proj` {H, V}
// ("logits" + suffix) plus `proj_bias` ("bias" + suffix), then softmax
// cross-entropy against `labels` ("xent" + suffix); returns the per-example loss.
Tensor projected_xent(GraphBuilder& b, const std::string& suffix, const Tensor& x,
                      const Tensor& proj, const Tensor& proj_bias, const Tensor& labels);

// The two inputs of an image classifier's step.
struct ImageBatch {
  Tensor images;  // NCHW {batch, 3, size, size}
  Tensor labels;  // class ids {batch}
};
// The start every image classifier shares: sets the builder's batch, adds the
// "input" block's images {batch, 3, image_size, image_size} and labels {batch},
// then opens block and prefix "stem" for the caller's first layers.
ImageBatch image_classifier_inputs(GraphBuilder& b, double batch, double image_size);
// The classifier head and the end of the step: in block and prefix "logits",
// (a Relu "relu" of `features` when `relu_first`), global average pool, a
// `classes`-way dense layer "fc" with bias, softmax cross-entropy against
// `labels` and the total loss; returns b.finish() of it.
OpGraph finish_image_classifier(GraphBuilder& b, const Tensor& features, const Tensor& labels,
                                double classes, bool relu_first);

// One LSTM cell step (TensorFlow's LSTMBlockCell): x {B, In}, state {B, 2H} (h and c),
// weights {In + H, 4H}, bias {4H}. Returns {h {B, H}, state {B, 2H}}.
struct LstmStep {
  Tensor h;
  Tensor state;
};
LstmStep lstm_cell(GraphBuilder& b, const std::string& name, const Tensor& x, const Tensor& state,
                   const Tensor& weights, const Tensor& bias);

}  // namespace aware::datasets_detail
