// Properties of every baseline placer on the model zoo and the generated
// families: complete, feasible when the graph fits, never below the lower bound.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agents/baselines/register.h"
#include "builtins/builtins.h"
#include "agents/common/placer_common.h"
#include "core/cluster.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/placer.h"
#include "datasets/load.h"
#include "datasets/zoo.h"
#include "sim/analytic/analytic_simulator.h"

namespace aware {
namespace {

void check_every_method(const OpGraph& g, const Cluster& c) {
  register_builtins();
  AnalyticSimulator sim;
  const double bound = lower_bound(g, c).bound_us();
  for (const std::string& m : baseline_placer_names()) {
    SCOPED_TRACE(m + " on " + g.name() + " / " + c.name());
    PlaceContext context;
    context.evaluator = &sim;
    context.seed = 3;
    context.budget_evals = 20;
    const Placement p = PlacerRegistry::instance().create(m)->place(g, c, context);
    ASSERT_NO_THROW(check_placement(g, c, p, m));
    const StepResult r = sim.evaluate(g, c, p);
    EXPECT_TRUE(r.feasible) << r.infeasible_reason;
    EXPECT_GE(r.step_time_us, bound * (1 - 1e-9));
  }
}

TEST(BaselinesZoo, EveryMethodOnEveryZooModel) {
  const Cluster c = make_cluster_preset("k40x4");
  for (const std::string& name : zoo_model_names()) {
    const OpGraph g = build_zoo_model(name);
    // Graphs that cannot fit at all must say so; the rest must be placed feasibly.
    bool fits = true;
    try {
      placing::check_graph_can_fit(g, c);
    } catch (const ConfigError&) {
      fits = false;
    }
    if (fits) check_every_method(g, c);
  }
}

TEST(BaselinesZoo, EveryMethodOnFamilies) {
  const Cluster c = make_cluster_preset("k40x2");
  for (const char* spec : {"family:cifar10:1", "family:ptb:2", "family:nmt:3"})
    check_every_method(load_graph(spec), c);
}

// Devices with half the memory a single-device run of Inception-V3 peaks at:
// every method must still find a feasible split (the fallbacks at work).
TEST(BaselinesZoo, TightMemoryStillFeasible) {
  const OpGraph g = build_zoo_model("inception_v3");
  AnalyticSimulator sim;
  const Cluster roomy = restrict_devices(make_cluster_preset("k40x4"), 1);
  const double peak = sim.evaluate(g, roomy, single_device_placement(g, 0)).peak_memory_bytes[0];
  Cluster tight("tight4");
  for (int i = 0; i < 4; ++i) {
    Device d = roomy.device(0);
    d.name = "gpu" + std::to_string(i);
    d.memory_bytes = 0.5 * peak;
    tight.add_device(d);
  }
  tight.add_switch("pcie");
  for (int i = 0; i < 4; ++i) tight.connect("gpu" + std::to_string(i), "pcie", 10e9, 5);
  tight.finalize();
  check_every_method(g, tight);
}

}  // namespace
}  // namespace aware
