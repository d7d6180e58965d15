// A counting allocator over ATen's CPU allocator: the live and peak bytes each
// device's worker thread allocated, which is how the cpu executor measures the
// ATen kernels' own memory (hw/aten_kernels.cc). Freed blocks of 1 MiB or more
// are kept by size and handed to the next allocation of the same size (up to
// 4 GiB held), so a step does not fault its large tensors' pages in again each
// time; the counts are of live bytes, not of what is kept. Torch-free header;
// the code is in aware_hw_torch.
#pragma once

namespace aware {

// Installs it over ATen's default CPU allocator, once per process.
void install_counting_allocator();
// Zeroes the live and peak counts of devices 0..devices-1.
void reset_counted_bytes(int devices);
// What the calling thread allocates from now on counts on `device` (-1: on none).
void count_allocations_on(int device);
// How many allocations were served from the kept blocks since the process began.
long long cached_block_reuses();
// The most bytes `device` held at once since its counts were reset.
double counted_peak_bytes(int device);

}  // namespace aware
