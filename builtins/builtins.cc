#include "builtins/builtins.h"

#include <mutex>

#include "sim/analytic/register.h"
#ifdef AWARE_BUILTINS_SIMGRID
#include "sim/simgrid/register.h"
#endif
#ifdef AWARE_BUILTINS_BASELINES
#include "agents/baselines/register.h"
#endif
#ifdef AWARE_BUILTINS_EXACT
#include "agents/exact/milp.h"
#endif
#ifdef AWARE_BUILTINS_FUSION
#include "agents/fusion/register.h"
#endif
#ifdef AWARE_BUILTINS_HW
#include "hw/register.h"
#endif
#ifdef AWARE_BUILTINS_HW_TORCH
#include "hw/aten_kernels.h"
#endif
#ifdef AWARE_BUILTINS_RL
#include "agents/rl/register.h"
#endif

namespace aware {

std::vector<std::string> builtin_plugins() {
  std::vector<std::string> plugins = {"analytic"};
#ifdef AWARE_BUILTINS_SIMGRID
  plugins.push_back("simgrid");
#endif
#ifdef AWARE_BUILTINS_HW
  plugins.push_back("hw");
#endif
#ifdef AWARE_BUILTINS_BASELINES
  plugins.push_back("baselines");
#endif
#ifdef AWARE_BUILTINS_EXACT
  plugins.push_back("exact");
#endif
#ifdef AWARE_BUILTINS_FUSION
  plugins.push_back("fusion");
#endif
#ifdef AWARE_BUILTINS_RL
  plugins.push_back("rl");
#endif
  return plugins;
}

void register_builtins() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_analytic_evaluator();
#ifdef AWARE_BUILTINS_SIMGRID
    register_simgrid_evaluator();
#endif
#ifdef AWARE_BUILTINS_HW_TORCH
    register_aten_kernels();  // the cpu executor's real kernels
#endif
#ifdef AWARE_BUILTINS_HW
    register_hw_evaluators();
#endif
#ifdef AWARE_BUILTINS_BASELINES
    register_baseline_placers();
#endif
#ifdef AWARE_BUILTINS_EXACT
    exact::register_exact_placers();  // before fusion: fused-milp wraps it
#endif
#ifdef AWARE_BUILTINS_FUSION
    register_fusion_placers();  // after the baselines: a fused placer wraps one
#endif
#ifdef AWARE_BUILTINS_RL
    register_rl_agents();
#endif
  });
}

}  // namespace aware
