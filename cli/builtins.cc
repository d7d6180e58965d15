#include "cli/builtins.h"

#include <mutex>

#include "sim/analytic/analytic_simulator.h"
#if __has_include("agents/baselines/register.h") && defined(AWARE_HAVE_BASELINES)
#include "agents/baselines/register.h"
#endif
#if defined(AWARE_HAVE_FUSION_PLACERS)
#include "agents/fusion/register.h"
#endif
#if __has_include("sim/simgrid/register.h") && defined(AWARE_HAVE_SIMGRID_EVALUATOR)
#include "sim/simgrid/register.h"
#endif

namespace aware {

void register_builtins() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_analytic_evaluator();
#if __has_include("agents/baselines/register.h") && defined(AWARE_HAVE_BASELINES)
    register_baseline_placers();
#endif
#if defined(AWARE_HAVE_FUSION_PLACERS)
    register_fusion_placers();
#endif
#if __has_include("sim/simgrid/register.h") && defined(AWARE_HAVE_SIMGRID_EVALUATOR)
    register_simgrid_evaluator();
#endif
  });
}

}  // namespace aware
