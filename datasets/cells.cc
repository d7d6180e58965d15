#include "datasets/cells.h"

#include "core/errors.h"
#include "datasets/layers.h"

namespace aware::datasets_detail {
namespace {

// Relu -> 1x1 conv -> batch norm: how a cell adapts an input's channels (and,
// with stride 2, its spatial size).
Tensor relu_conv_bn(GraphBuilder& b, const std::string& name, const Tensor& x, double filters,
                    double stride) {
  const Tensor r = relu(b, name + "/relu", x);
  return batch_norm(b, name + "/bn", conv2d(b, name + "/conv", r, filters, 1, 1, stride));
}

Tensor separable(GraphBuilder& b, const std::string& name, const Tensor& x, double kernel,
                 double stride, double filters, int repeats) {
  Tensor y = x;
  for (int r = 0; r < repeats; ++r) {
    const std::string n = name + "/sep" + std::to_string(r);
    y = relu(b, n + "/relu", y);
    y = depthwise_conv2d(b, n + "/depthwise", y, kernel, r == 0 ? stride : 1);
    y = conv2d(b, n + "/pointwise", y, filters, 1, 1, 1);
    y = batch_norm(b, n + "/bn", y);
  }
  return y;
}

Tensor apply_op(GraphBuilder& b, const std::string& name, CellOp op, const Tensor& x, double stride,
                double filters, int repeats) {
  switch (op) {
    case CellOp::kIdentity:
      // A strided identity must still shrink the map: a 1x1 strided projection.
      return stride > 1 ? relu_conv_bn(b, name + "/reduce", x, filters, stride) : x;
    case CellOp::kSepConv3:
      return separable(b, name + "/sep3x3", x, 3, stride, filters, repeats);
    case CellOp::kSepConv5:
      return separable(b, name + "/sep5x5", x, 5, stride, filters, repeats);
    case CellOp::kSepConv7:
      return separable(b, name + "/sep7x7", x, 7, stride, filters, repeats);
    case CellOp::kAvgPool3:
      return pool(b, "AvgPool", name + "/avg_pool", x, 3, stride);
    case CellOp::kMaxPool3:
      return pool(b, "MaxPool", name + "/max_pool", x, 3, stride);
  }
  return x;
}

}  // namespace

Tensor build_cell(GraphBuilder& b, const std::string& name, const CellSpec& spec,
                  const Tensor& prev, const Tensor& prev_prev, double filters, bool keep_prev) {
  const std::string saved_prefix = b.prefix();
  b.set_prefix(name);
  // Inputs are calibrated when first read: a sampled cell may ignore one, and an
  // op whose output nothing reads would leave its weights without a gradient.
  std::vector<Tensor> states(2);
  std::vector<bool> ready(2, false);
  auto state = [&](int index) -> Tensor {
    if (index < 2 && !ready[index]) {
      // The older input may be twice the size when a reduction lies between them.
      const double shrink = index == 1 && prev_prev.dim(2) > prev.dim(2) ? 2 : 1;
      states[index] = relu_conv_bn(b, "calibrate_" + std::to_string(index),
                                   index == 0 ? prev : prev_prev, filters, shrink);
      ready[index] = true;
    }
    return states[static_cast<std::size_t>(index)];
  };
  std::vector<bool> used(2 + spec.blocks.size(), false);
  for (std::size_t i = 0; i < spec.blocks.size(); ++i) {
    const CellBlock& block = spec.blocks[i];
    const int limit = static_cast<int>(states.size());
    AWARE_CHECK(
        block.input_a >= 0 && block.input_a < limit && block.input_b >= 0 && block.input_b < limit,
        name + ": a block reads a state that does not exist yet");
    const std::string bn = "block" + std::to_string(i);
    auto branch = [&](int input, CellOp op, const char* side) {
      const double stride = spec.reduction && input < 2 ? 2 : 1;
      used[input] = true;
      return apply_op(b, bn + "/" + side, op, state(input), stride, filters, spec.sep_conv_repeats);
    };
    const Tensor a = branch(block.input_a, block.op_a, "left");
    const Tensor c = branch(block.input_b, block.op_b, "right");
    // Two identities of the same state would sum a tensor with itself: one op, no copy.
    states.push_back(a.op == c.op && a.output == c.output
                         ? elementwise_binary(b, "Mul", bn + "/double", a, a, 1)
                         : add(b, bn + "/add", {a, c}));
  }
  std::vector<Tensor> outputs;
  // A previous cell that no block reads and no later cell reads either would be
  // cut off from the loss; ENAS concatenates unread inputs, so do that here, brought
  // to the blocks' size first in a reduction cell. Cells that read it are unchanged.
  if (keep_prev && !used[0]) {
    outputs.push_back(spec.reduction ? apply_op(b, "keep_prev", CellOp::kIdentity, state(0), 2,
                                                filters, spec.sep_conv_repeats)
                                     : state(0));
  }
  // In a reduction cell the inputs are larger than the blocks: they cannot join.
  if (!spec.reduction) {
    for (int s : spec.extra_concat) outputs.push_back(state(s));
  }
  for (std::size_t s = 2; s < states.size(); ++s) {
    if (!used[s]) outputs.push_back(states[s]);
  }
  const Tensor out = concat(b, "concat", outputs, 1);
  b.set_prefix(saved_prefix);
  return out;
}

bool reads_state(const CellSpec& spec, int state) {
  for (const CellBlock& block : spec.blocks) {
    if (block.input_a == state || block.input_b == state) return true;
  }
  return false;
}

Tensor stack_cell_stages(GraphBuilder& b, const CellSpec& normal, const CellSpec& reduction,
                         Tensor prev, Tensor prev_prev, double filters, int cells_per_stage) {
  // The cells in build order, so each one can ask whether the next reads its input.
  struct PlannedCell {
    const CellSpec* spec;
    std::string block;
    std::string name;
    double filters;
  };
  std::vector<PlannedCell> cells;
  int cell = 0;
  for (int stage = 0; stage < 3; ++stage) {
    if (stage > 0) {
      filters *= 2;
      const std::string name = "reduction_cell_" + std::to_string(stage - 1);
      cells.push_back({&reduction, name, name, filters});
    }
    const std::string block = "stage" + std::to_string(stage + 1);
    for (int i = 0; i < cells_per_stage; ++i, ++cell) {
      cells.push_back({&normal, block, block + "/cell_" + std::to_string(cell), filters});
    }
  }
  for (std::size_t k = 0; k < cells.size(); ++k) {
    // Cell k's `prev` reaches the loss through cell k itself (state 0), or through
    // the next cell (its state 1); for the first cell `prev` may also be `prev_prev`.
    const bool prev_read_elsewhere = k + 1 < cells.size() && reads_state(*cells[k + 1].spec, 1);
    const bool prev_is_prev_prev = prev.op == prev_prev.op && prev.output == prev_prev.output;
    const bool keep_prev =
        !prev_read_elsewhere && !(prev_is_prev_prev && reads_state(*cells[k].spec, 1));
    b.set_block(cells[k].block);
    const Tensor next =
        build_cell(b, cells[k].name, *cells[k].spec, prev, prev_prev, cells[k].filters, keep_prev);
    prev_prev = prev;
    prev = next;
  }
  return prev;
}

}  // namespace aware::datasets_detail
