// The one place that registers every evaluator, placer, learned agent and
// cluster loader built into this configuration. The CLI, the GUI, the
// experiments and the tests call register_builtins() and nothing else; no plugin
// registers itself as a side effect.
#pragma once

#include <string>
#include <vector>

namespace aware {

// Registers, once per process (later calls do nothing): the analytic simulator;
// the SimGrid evaluator and its .xml cluster loader (when built); the baseline
// placers, then the fused placers (which take their inner placer's options); the
// learned agents and their placers (when LibTorch is built and linked).
// Thread-safe.
void register_builtins();

// The plugins register_builtins() registers in this binary, e.g. {"analytic",
// "simgrid", "baselines", "fusion", "rl"} (for `aware list` and diagnostics).
std::vector<std::string> builtin_plugins();

}  // namespace aware
