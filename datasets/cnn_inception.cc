// Inception-V3 (Szegedy et al., "Rethinking the Inception Architecture", CVPR
// 2016): 299x299x3 inputs, the stem, mixed blocks 5b..7c with their parallel
// branches, the auxiliary classifier after 6e, 1000 classes. Every convolution is
// Conv2D -> FusedBatchNorm -> Relu, as in the reference TensorFlow model.
#include <algorithm>

#include "core/errors.h"
#include "datasets/layers.h"
#include "datasets/models.h"

namespace aware::datasets_detail {
namespace {

constexpr double kClasses = 1000;

// One parallel branch: a chain of (filters, kernel_h, kernel_w, stride, padding) convs.
struct ConvStep {
  double filters, kh, kw, stride;
  Padding padding = Padding::kSame;
};

Tensor branch(GraphBuilder& b, const std::string& name, Tensor x,
              const std::vector<ConvStep>& steps) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ConvStep& s = steps[i];
    x = conv_bn_relu(b, name + "/conv" + std::to_string(i), x, s.filters, s.kh, s.kw, s.stride,
                     s.padding);
  }
  return x;
}

Tensor pool_branch(GraphBuilder& b, const std::string& name, const Tensor& x, double filters) {
  const Tensor pooled = pool(b, "AvgPool", name + "/avg_pool", x, 3, 1);
  return conv_bn_relu(b, name + "/conv0", pooled, filters, 1, 1, 1);
}

// Mixed 5b/5c/5d: 35x35 grid.
Tensor mixed_35(GraphBuilder& b, const std::string& name, const Tensor& x, double pool_filters) {
  b.set_block(name);
  b.set_prefix(name);
  std::vector<Tensor> outs;
  outs.push_back(branch(b, "branch_0", x, {{64, 1, 1, 1}}));
  outs.push_back(branch(b, "branch_1", x, {{48, 1, 1, 1}, {64, 5, 5, 1}}));
  outs.push_back(branch(b, "branch_2", x, {{64, 1, 1, 1}, {96, 3, 3, 1}, {96, 3, 3, 1}}));
  outs.push_back(pool_branch(b, "branch_3", x, pool_filters));
  return concat(b, "concat", outs, 1);
}

// Mixed 6b..6e: 17x17 grid with factorised 7x7 convolutions.
Tensor mixed_17(GraphBuilder& b, const std::string& name, const Tensor& x, double mid) {
  b.set_block(name);
  b.set_prefix(name);
  std::vector<Tensor> outs;
  outs.push_back(branch(b, "branch_0", x, {{192, 1, 1, 1}}));
  outs.push_back(branch(b, "branch_1", x, {{mid, 1, 1, 1}, {mid, 1, 7, 1}, {192, 7, 1, 1}}));
  outs.push_back(
      branch(b, "branch_2", x,
             {{mid, 1, 1, 1}, {mid, 7, 1, 1}, {mid, 1, 7, 1}, {mid, 7, 1, 1}, {192, 1, 7, 1}}));
  outs.push_back(pool_branch(b, "branch_3", x, 192));
  return concat(b, "concat", outs, 1);
}

// Mixed 7b/7c: 8x8 grid with split 1x3 / 3x1 outputs.
Tensor mixed_8(GraphBuilder& b, const std::string& name, const Tensor& x) {
  b.set_block(name);
  b.set_prefix(name);
  std::vector<Tensor> outs;
  outs.push_back(branch(b, "branch_0", x, {{320, 1, 1, 1}}));
  const Tensor b1 = branch(b, "branch_1", x, {{384, 1, 1, 1}});
  outs.push_back(concat(b, "branch_1/concat",
                        {conv_bn_relu(b, "branch_1/conv1a", b1, 384, 1, 3, 1),
                         conv_bn_relu(b, "branch_1/conv1b", b1, 384, 3, 1, 1)},
                        1));
  const Tensor b2 = branch(b, "branch_2", x, {{448, 1, 1, 1}, {384, 3, 3, 1}});
  outs.push_back(concat(b, "branch_2/concat",
                        {conv_bn_relu(b, "branch_2/conv2a", b2, 384, 1, 3, 1),
                         conv_bn_relu(b, "branch_2/conv2b", b2, 384, 3, 1, 1)},
                        1));
  outs.push_back(pool_branch(b, "branch_3", x, 192));
  return concat(b, "concat", outs, 1);
}

Tensor classifier(GraphBuilder& b, const Tensor& features, const Tensor& labels) {
  const Tensor pooled = global_avg_pool(b, "global_pool", features);
  const Tensor logits = bias_add(b, "logits/bias", dense_matmul(b, "logits", pooled, kClasses));
  return softmax_cross_entropy(b, "xent", logits, labels);
}

}  // namespace

OpGraph build_inception_v3(const ModelOptions& options) {
  const double batch = option_or(options.batch, 32);
  const double size = option_or(options.image_size, 299);
  if (size < 75) {
    throw ConfigError("inception_v3: image_size " + std::to_string(static_cast<int>(size)) +
                      " is below the architecture's minimum of 75");
  }
  GraphBuilder b("inception_v3", Optimizer::kRmsProp);
  const ImageBatch in = image_classifier_inputs(b, batch, size);
  const Tensor& labels = in.labels;
  Tensor x = conv_bn_relu(b, "conv_1a_3x3", in.images, 32, 3, 3, 2, Padding::kValid);
  x = conv_bn_relu(b, "conv_2a_3x3", x, 32, 3, 3, 1, Padding::kValid);
  x = conv_bn_relu(b, "conv_2b_3x3", x, 64, 3, 3, 1);
  x = pool(b, "MaxPool", "max_pool_3a_3x3", x, 3, 2, Padding::kValid);
  x = conv_bn_relu(b, "conv_3b_1x1", x, 80, 1, 1, 1, Padding::kValid);
  x = conv_bn_relu(b, "conv_4a_3x3", x, 192, 3, 3, 1, Padding::kValid);
  x = pool(b, "MaxPool", "max_pool_5a_3x3", x, 3, 2, Padding::kValid);

  x = mixed_35(b, "mixed_5b", x, 32);
  x = mixed_35(b, "mixed_5c", x, 64);
  x = mixed_35(b, "mixed_5d", x, 64);

  b.set_block("mixed_6a");
  b.set_prefix("mixed_6a");
  x = concat(
      b, "concat",
      {branch(b, "branch_0", x, {{384, 3, 3, 2, Padding::kValid}}),
       branch(b, "branch_1", x, {{64, 1, 1, 1}, {96, 3, 3, 1}, {96, 3, 3, 2, Padding::kValid}}),
       pool(b, "MaxPool", "branch_2/max_pool", x, 3, 2, Padding::kValid)},
      1);
  x = mixed_17(b, "mixed_6b", x, 128);
  x = mixed_17(b, "mixed_6c", x, 160);
  x = mixed_17(b, "mixed_6d", x, 160);
  x = mixed_17(b, "mixed_6e", x, 192);

  // Auxiliary classifier on the 17x17 grid (weighted into the loss in training).
  b.set_block("aux_logits");
  b.set_prefix("aux_logits");
  // 5x5/3 on the 17x17 grid; smaller inputs shrink the window to fit the grid.
  Tensor aux = pool(b, "AvgPool", "avg_pool", x, std::min(5.0, x.dim(2)), 3, Padding::kValid);
  aux = conv_bn_relu(b, "proj", aux, 128, 1, 1, 1);
  aux = conv_bn_relu(b, "conv", aux, 768, aux.dim(2), aux.dim(3), 1, Padding::kValid);
  const Tensor aux_loss = classifier(b, aux, labels);

  b.set_block("mixed_7a");
  b.set_prefix("mixed_7a");
  x = concat(
      b, "concat",
      {branch(b, "branch_0", x, {{192, 1, 1, 1}, {320, 3, 3, 2, Padding::kValid}}),
       branch(b, "branch_1", x,
              {{192, 1, 1, 1}, {192, 1, 7, 1}, {192, 7, 1, 1}, {192, 3, 3, 2, Padding::kValid}}),
       pool(b, "MaxPool", "branch_2/max_pool", x, 3, 2, Padding::kValid)},
      1);
  x = mixed_8(b, "mixed_7b", x);
  x = mixed_8(b, "mixed_7c", x);

  b.set_block("logits");
  b.set_prefix("logits");
  const Tensor main_loss = classifier(b, x, labels);
  const Tensor loss = total_loss(b, "total_loss", {main_loss, aux_loss});
  return b.finish(loss);
}

}  // namespace aware::datasets_detail
