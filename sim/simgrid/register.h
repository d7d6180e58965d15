// Registration of the "simgrid" evaluator (sim/simgrid/simgrid_evaluator.h).
#pragma once

namespace aware {

// Adds "simgrid" to the EvaluatorRegistry (options: see
// SimGridEvaluator::from_options). Idempotent; thread-safe.
void register_simgrid_evaluator();

}  // namespace aware
