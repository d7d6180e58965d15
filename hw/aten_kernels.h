// Installs ATen's kernels as the CPU executor's real kernels (hw/op_kernels.h).
// Built with LibTorch (aware_hw_torch); register_builtins() calls it where that
// library is linked. The header is torch-free.
#pragma once

namespace aware {

void register_aten_kernels();

}  // namespace aware
