// NASNet-A (Zoph et al., "Learning Transferable Architectures", CVPR 2018), the
// mobile configuration "4 @ 1056": N = 4 normal cells per stage, F = 44 filters
// in the first stage (doubled at each reduction), 224x224x3 inputs, a 3x3/2 stem
// convolution and two reduction "stem cells", then
//   N normal -> reduction -> N normal -> reduction -> N normal -> pool -> 1000 classes.
// Cell wiring is the paper's NASNet-A normal and reduction cell; each separable
// convolution is (relu, depthwise, pointwise, batch norm) applied twice, as in
// the paper's implementation. The auxiliary head and drop-path are left out.
#include "core/errors.h"
#include "datasets/cells.h"
#include "datasets/layers.h"
#include "datasets/models.h"

namespace aware::datasets_detail {
namespace {

using C = CellOp;

CellSpec normal_cell() {
  CellSpec spec;
  spec.blocks = {{0, C::kSepConv5, 1, C::kSepConv3},
                 {1, C::kSepConv5, 1, C::kSepConv3},
                 {0, C::kAvgPool3, 1, C::kIdentity},
                 {1, C::kAvgPool3, 1, C::kAvgPool3},
                 {0, C::kSepConv3, 0, C::kIdentity}};
  spec.extra_concat = {1};  // the normal cell also passes its older input through
  spec.sep_conv_repeats = 2;
  return spec;
}

CellSpec reduction_cell() {
  CellSpec spec;
  spec.blocks = {{0, C::kSepConv5, 1, C::kSepConv7},
                 {0, C::kMaxPool3, 1, C::kSepConv7},
                 {0, C::kAvgPool3, 1, C::kSepConv5},
                 {3, C::kIdentity, 2, C::kAvgPool3},
                 {2, C::kSepConv3, 0, C::kMaxPool3}};
  spec.reduction = true;
  spec.sep_conv_repeats = 2;
  return spec;
}

}  // namespace

OpGraph build_nasnet(const ModelOptions& options) {
  const double batch = option_or(options.batch, 32);
  const double size = option_or(options.image_size, 224);
  const int cells_per_stage = option_or(options.layers, 4);
  const double filters = 44;
  if (size < 32) {
    throw ConfigError("nasnet: image_size " + std::to_string(static_cast<int>(size)) +
                      " is below the minimum of 32");
  }
  GraphBuilder b("nasnet", Optimizer::kRmsProp);
  const ImageBatch in = image_classifier_inputs(b, batch, size);
  const Tensor stem =
      batch_norm(b, "conv0/bn", conv2d(b, "conv0", in.images, 32, 3, 3, 2, Padding::kValid));
  Tensor prev_prev = stem;
  Tensor prev = build_cell(b, "stem_cell_0", reduction_cell(), stem, stem, filters / 4);
  {
    const Tensor next =
        build_cell(b, "stem_cell_1", reduction_cell(), prev, prev_prev, filters / 2);
    prev_prev = prev;
    prev = next;
  }
  const Tensor last = stack_cell_stages(b, normal_cell(), reduction_cell(), prev, prev_prev,
                                        filters, cells_per_stage);
  return finish_image_classifier(b, last, in.labels, 1000, /*relu_first=*/true);
}

}  // namespace aware::datasets_detail
