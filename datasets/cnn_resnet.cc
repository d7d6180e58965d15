// ResNet-50/101/152 (He et al., "Deep Residual Learning", CVPR 2016): 224x224x3
// inputs, a 7x7/2 stem and max-pool, four stages of bottleneck blocks
// (1x1 -> 3x3 -> 1x1 with 4x expansion; stride in the first 1x1 as in the paper;
// projection shortcut on each stage's first block), global pool, 1000 classes.
#include "core/errors.h"
#include "datasets/layers.h"
#include "datasets/models.h"

namespace aware::datasets_detail {
namespace {

Tensor bottleneck(GraphBuilder& b, const Tensor& x, double planes, double stride, bool project) {
  Tensor y = conv_bn_relu(b, "conv1", x, planes, 1, 1, stride);
  y = conv_bn_relu(b, "conv2", y, planes, 3, 3, 1);
  y = conv2d(b, "conv3", y, 4 * planes, 1, 1, 1);
  y = batch_norm(b, "conv3/bn", y);
  Tensor shortcut = x;
  if (project) {
    shortcut = conv2d(b, "shortcut", x, 4 * planes, 1, 1, stride);
    shortcut = batch_norm(b, "shortcut/bn", shortcut);
  }
  return relu(b, "relu", add(b, "add", {y, shortcut}));
}

}  // namespace

OpGraph build_resnet(int depth, const ModelOptions& options) {
  std::vector<int> blocks;
  switch (depth) {
    case 50:
      blocks = {3, 4, 6, 3};
      break;
    case 101:
      blocks = {3, 4, 23, 3};
      break;
    case 152:
      blocks = {3, 8, 36, 3};
      break;
    default:
      throw ConfigError("resnet: depth " + std::to_string(depth) + " is not one of 50, 101, 152");
  }
  const double batch = option_or(options.batch, 32);
  const double size = option_or(options.image_size, 224);
  GraphBuilder b("resnet" + std::to_string(depth), Optimizer::kMomentum);
  const ImageBatch in = image_classifier_inputs(b, batch, size);
  Tensor x = conv_bn_relu(b, "conv1", in.images, 64, 7, 7, 2);
  x = pool(b, "MaxPool", "max_pool", x, 3, 2);

  const double planes[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    const std::string stage_name = "stage" + std::to_string(stage + 2);
    b.set_block(stage_name);
    for (int i = 0; i < blocks[stage]; ++i) {
      b.set_prefix(stage_name + "/block" + std::to_string(i + 1));
      const double stride = (i == 0 && stage > 0) ? 2 : 1;
      x = bottleneck(b, x, planes[stage], stride, i == 0);
    }
  }

  return finish_image_classifier(b, x, in.labels, 1000, /*relu_first=*/false);
}

}  // namespace aware::datasets_detail
