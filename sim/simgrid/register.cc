#include "sim/simgrid/register.h"

#include "core/cluster.h"
#include "core/evaluator.h"
#include "sim/simgrid/simgrid_evaluator.h"

namespace aware {

void register_simgrid_evaluator() {
  register_cluster_loader(".xml",
                          [](const std::string& path) { return cluster_from_simgrid_xml(path); });
  using T = OptionSpec::Type;
  EvaluatorRegistry::instance().add(
      {"simgrid",
       "SimGrid 3.32 flow-level simulation (fair link sharing) in worker processes",
       {
          {"workers", T::kInt, "0", "worker processes (0: one per core)"},
          {"timeout_s", T::kDouble, "60", "per request; a worker over it is replaced"},
          {"worker", T::kPath, "", "the aware-simgrid-worker binary to run"},
          {"cfg", T::kString, "", "SimGrid settings KEY:VALUE[;KEY:VALUE...]"},
          {"cfg.*", T::kString, "", "one SimGrid setting, cfg.KEY=VALUE"},
          {"costs", T::kPath, "", "a cost table (aware-cost-table JSON): measured µs per op "
                                  "and device kind; other ops keep the roofline"},
          {"order", T::kString, "ready",
           "how a device stream picks its next op: ready (the first whose inputs have "
           "arrived, in SimGrid's time) or analytic (the analytic schedule's order)"},
          {"debug.fail_first", T::kString, "", "testing: crash or hang the first request"},
       },
       {{"deterministic", "1"},
        {"models", "links"},
        {"link_sharing", "fair"},
        {"tolerance", "0.01"},
        {"reference", "analytic"}}},
      [](const Options& options) -> std::unique_ptr<Evaluator> {
        return SimGridEvaluator::from_options(options);
      });
}

}  // namespace aware
