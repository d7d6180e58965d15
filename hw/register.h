// Registers the hardware executors as evaluators: "cpu" always, "cuda" when the
// CUDA backend is built. Called by register_builtins() (builtins/), not directly.
#pragma once

namespace aware {

void register_hw_evaluators();

}  // namespace aware
