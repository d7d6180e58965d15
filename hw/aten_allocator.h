// A counting allocator over ATen's CPU allocator: the live and peak bytes each
// device's worker thread allocated, which is how the cpu executor measures the
// ATen kernels' own memory (hw/aten_kernels.cc). Torch-free header; the code is
// in aware_hw_torch.
#pragma once

namespace aware {

// Installs it over ATen's default CPU allocator, once per process.
void install_counting_allocator();
// Zeroes the live and peak counts of devices 0..devices-1.
void reset_counted_bytes(int devices);
// What the calling thread allocates from now on counts on `device` (-1: on none).
void count_allocations_on(int device);
// The most bytes `device` held at once since its counts were reset.
double counted_peak_bytes(int device);

}  // namespace aware
