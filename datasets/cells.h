// Convolutional cells as in NASNet (Zoph et al. 2018) and the ENAS micro search
// space (Pham et al. 2018), internal to datasets/. A cell takes the outputs of
// the previous two cells, brings both to `filters` channels (and, for the older
// one, to the newer one's spatial size), then computes B blocks; each block
// applies an op to each of two earlier states and adds the results. The cell's
// output concatenates the blocks no later block reads (plus any extra states the
// cell names).
#pragma once

#include <string>
#include <vector>

#include "datasets/builder.h"

namespace aware::datasets_detail {

enum class CellOp { kIdentity, kSepConv3, kSepConv5, kSepConv7, kAvgPool3, kMaxPool3 };

struct CellBlock {
  int input_a = 0;  // state index: 0 = previous cell, 1 = the one before, 2 + i = block i
  CellOp op_a = CellOp::kIdentity;
  int input_b = 0;
  CellOp op_b = CellOp::kIdentity;
};

struct CellSpec {
  std::vector<CellBlock> blocks;
  bool reduction = false;         // ops on the two input states use stride 2
  std::vector<int> extra_concat;  // states concatenated even though blocks read them
  int sep_conv_repeats = 1;       // NASNet stacks its separable convolutions twice
};

// Adds one cell; `prev` is the previous cell's output, `prev_prev` the one before.
// With `keep_prev`, a cell none of whose blocks reads `prev` still concatenates it
// (calibrated, and reduced in a reduction cell) into its output, so that `prev`
// reaches the loss when no later cell reads it either.
Tensor build_cell(GraphBuilder& b, const std::string& name, const CellSpec& spec,
                  const Tensor& prev, const Tensor& prev_prev, double filters,
                  bool keep_prev = false);

// Whether some block of `spec` reads state `state` (0 = previous cell, 1 = the one before).
bool reads_state(const CellSpec& spec, int state);

// The body of a NASNet / ENAS network after its stem: three stages ("stage1" to
// "stage3" blocks) of `cells_per_stage` `normal` cells each, named
// "stageS/cell_N" with N counted across stages, and before stages 2 and 3 a
// `reduction` cell ("reduction_cell_0", "reduction_cell_1") that doubles the
// filters (`filters` is the first stage's). `prev` and `prev_prev` are the two
// states the first cell reads; returns the last cell's output. A cell whose output
// neither of the next two cells would read is kept in the next cell's output, so
// every cell's weights reach the loss whatever cells a seed draws.
Tensor stack_cell_stages(GraphBuilder& b, const CellSpec& normal, const CellSpec& reduction,
                         Tensor prev, Tensor prev_prev, double filters, int cells_per_stage);

}  // namespace aware::datasets_detail
