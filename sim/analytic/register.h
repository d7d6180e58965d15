// Registers the analytic simulator as evaluator "analytic". Idempotent. Called by
// register_builtins() (builtins/), not directly.
#pragma once

namespace aware {

void register_analytic_evaluator();

}  // namespace aware
