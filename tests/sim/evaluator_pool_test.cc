// EvaluatorPool: batches on several threads give exactly what one evaluator gives
// one at a time, keep the order, pass the first error on, and stay usable.
#include <gtest/gtest.h>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/evaluator_pool.h"
#include "core/random_dag.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

std::vector<Placement> random_placements(const OpGraph& g, int devices, int count,
                                         std::uint64_t seed) {
  std::vector<Placement> out;
  std::uint64_t state = seed;
  for (int i = 0; i < count; ++i) {
    std::vector<int> p(g.num_ops());
    for (int& d : p) d = uniform_below(state, devices);
    out.emplace_back(p);
  }
  return out;
}

class EvaluatorPoolModes : public ::testing::TestWithParam<const char*> {};

TEST_P(EvaluatorPoolModes, BatchesEqualOneAtATimeBitForBit) {
  const OpGraph g = random_layered_dag(300, 7);
  const Cluster cluster = make_cluster_preset("k40x4");
  auto serial = AnalyticSimulator::from_options({{"mode", GetParam()}});
  const std::vector<Placement> placements = random_placements(g, cluster.num_devices(), 150, 11);
  std::vector<StepResult> expected;
  for (const Placement& p : placements) expected.push_back(serial->evaluate(g, cluster, p));
  for (int threads : {1, 2, 3}) {
    EvaluatorPool pool(*serial, threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int round = 0; round < 2; ++round) {  // the second batch reuses the threads
      const std::vector<StepResult> got = pool.evaluate_batch(g, cluster, placements);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].step_time_us, expected[i].step_time_us) << threads << " threads, item " << i;
        EXPECT_EQ(got[i].bytes_moved, expected[i].bytes_moved);
        EXPECT_EQ(got[i].device_busy_us, expected[i].device_busy_us);
        EXPECT_EQ(got[i].feasible, expected[i].feasible);
      }
    }
    EXPECT_TRUE(pool.evaluate_batch(g, cluster, {}).empty());
    EXPECT_EQ(pool.evaluate_batch(g, cluster, {placements[3]})[0].step_time_us,
              expected[3].step_time_us);
  }
}

INSTANTIATE_TEST_SUITE_P(Analytic, EvaluatorPoolModes, ::testing::Values("contention", "placeto"));

TEST(EvaluatorPool, FirstErrorIsPassedOnAndThePoolStaysUsable) {
  const OpGraph g = random_layered_dag(60, 3);
  const Cluster cluster = make_cluster_preset("k40x2");
  auto serial = AnalyticSimulator::from_options({});
  std::vector<Placement> placements = random_placements(g, 2, 40, 5);
  std::vector<int> bad(g.num_ops(), 0);
  bad[7] = 9;  // k40x2 has devices 0 and 1
  placements[17] = Placement(bad);
  EvaluatorPool pool(*serial, 2);
  // A placement naming device 9.
  testing::expect_error<std::exception>([&] { pool.evaluate_batch(g, cluster, placements); },
                                        {"9"});
  placements[17] = placements[16];
  const std::vector<StepResult> after = pool.evaluate_batch(g, cluster, placements);
  EXPECT_EQ(after[17].step_time_us, after[16].step_time_us);
  EXPECT_GT(after[0].step_time_us, 0);
  EXPECT_THROW(EvaluatorPool(*serial, 0), ConfigError);
}

}  // namespace
}  // namespace aware
