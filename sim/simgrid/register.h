// Registration of the SimGrid plugin: the "simgrid" evaluator
// (sim/simgrid/simgrid_evaluator.h) and the ".xml" cluster loader (SimGrid
// platform files). Idempotent; thread-safe. Called by register_builtins()
// (builtins/), not directly.
#pragma once

namespace aware {

void register_simgrid_evaluator();

}  // namespace aware
