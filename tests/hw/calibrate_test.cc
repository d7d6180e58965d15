// Calibration on this machine's cores (plausible, positive rates; a fit that
// recovers known numbers) and the validation statistics on synthetic series.
#include <gtest/gtest.h>

#include <cmath>

#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "hw/calibrate.h"
#include "hw/cpu_backend.h"
#include "hw/validate.h"
#include "tests/hw/hw_checks.h"

namespace aware {
namespace {

HardwareEvaluator& cpu(std::unique_ptr<Evaluator>& holder) {
  register_builtins();
  holder = EvaluatorRegistry::instance().create("cpu", {{"repeats", "3"}});
  return dynamic_cast<HardwareEvaluator&>(*holder);
}

TEST(Calibration, FitRecoversLatencyAndBandwidth) {
  // 5 us + bytes / 2 GB/s, exactly.
  std::vector<std::pair<double, double>> samples;
  for (double bytes : {1e3, 1e5, 1e6, 1e7}) samples.emplace_back(bytes, 5 + bytes / 2e3);
  const CopyFit fit = fit_copy(samples);
  EXPECT_NEAR(fit.latency_us, 5, 1e-6);
  EXPECT_NEAR(fit.bandwidth_Bps, 2e9, 1);
  // A negative intercept is refitted through the origin.
  const CopyFit origin = fit_copy({{1e6, 400}, {2e6, 1000}});
  EXPECT_EQ(origin.latency_us, 0);
  EXPECT_GT(origin.bandwidth_Bps, 0);
  EXPECT_THROW(fit_copy({{1e6, 400}}), ConfigError);
  EXPECT_THROW(fit_copy({{1e6, 400}, {1e6, 500}}), ConfigError);
}

TEST(Calibration, EfficiencyIsTheSweepsLineNotItsMedian) {
  // The H200 sweep of 2026-12-01 (experiments/results/gpu/base/calibration.json,
  // rounded): launch-bound small GEMMs. The median over the best rate gave an
  // efficiency of 0.067, pricing unprofiled ops at ~2.5 TFLOP/s.
  Calibration cal;
  cal.gemm = {{64, 0.05e12}, {128, 0.49e12}, {256, 2.47e12}, {512, 17.02e12}, {1024, 37.08e12}};
  fit_gemm_sweep(cal);
  EXPECT_GT(cal.efficiency, 0.9);
  EXPECT_GE(cal.fitted_flops, 37.08e12);  // the line's rate, past the launch cost
  EXPECT_LT(cal.fitted_flops, 60e12);
  EXPECT_GT(cal.gemm_overhead_us, 5);      // the small GEMMs' ~10 us
  EXPECT_LT(cal.gemm_overhead_us, 15);
  EXPECT_EQ(cal.peak_flops, std::max(37.08e12, cal.fitted_flops));
  // An exact line: 4 us + flops at 100 GFLOP/s.
  Calibration line;
  for (int size : {64, 128, 256, 512}) {
    const double flops = 2.0 * size * size * size;
    line.gemm.push_back({size, flops / ((4 + flops / 1e5) * 1e-6)});
  }
  fit_gemm_sweep(line);
  EXPECT_NEAR(line.fitted_flops, 1e11, 1e5);
  EXPECT_NEAR(line.gemm_overhead_us, 4, 1e-6);
  EXPECT_NEAR(line.efficiency, 1, 1e-9);
  Calibration none;
  EXPECT_THROW(fit_gemm_sweep(none), ConfigError);
}

// From which size two streaming passes compete: the smallest size from which
// every larger pass is slowed by at least half the largest one's slowdown.
TEST(Calibration, StreamContentionStartsWhereTheLargePassesAreSlowed) {
  EXPECT_EQ(stream_contention_from_bytes({{1e6, 1.0}, {4e6, 1.02}, {16e6, 1.9}, {64e6, 1.7}}), 16e6);
  // 1.4 >= 1 + 0.7 / 2 at 4 MB, but 1 MB (1.0) is not: contention from 4 MB.
  EXPECT_EQ(stream_contention_from_bytes({{1e6, 1.0}, {4e6, 1.4}, {16e6, 1.9}, {64e6, 1.7}}), 4e6);
  // A slowed small pass below an unslowed one does not count: every larger one must be slowed.
  EXPECT_EQ(stream_contention_from_bytes({{1e6, 1.9}, {4e6, 1.0}, {16e6, 1.9}, {64e6, 1.7}}), 16e6);
  EXPECT_EQ(stream_contention_from_bytes({{1e6, 1.5}, {64e6, 1.6}}), 1e6);      // slowed at every size
  EXPECT_EQ(stream_contention_from_bytes({{1e6, 1.0}, {64e6, 1.6}}), 64e6);     // only the largest
  EXPECT_EQ(stream_contention_from_bytes({{1e6, 1.3}, {64e6, 1.02}}), 0);      // no contention
  EXPECT_EQ(stream_contention_from_bytes({{64e6, 1.6}}), 0);                   // nothing to compare
}

TEST(Calibration, MeasuresPlausibleRatesOnTheCores) {
  std::unique_ptr<Evaluator> holder;
  HardwareEvaluator& hw = cpu(holder);
  CalibrationOptions options;
  options.gemm_sizes = {64, 128, 256};
  options.stream_bytes = 8e6;
  options.copy_bytes = {4e3, 256e3, 4e6};
  options.chain = 3;
  options.overhead_ops = 50;
  const Cluster base = testing::star_cluster(2, 1e9, 1, 4e9);
  const Calibration cal = calibrate(hw, base, options);
  ASSERT_EQ(cal.gemm.size(), 3u);
  // One core of anything this runs on: between 0.1 and 1000 GFLOP/s, 0.1 and 1000 GB/s.
  for (const GemmRate& g : cal.gemm) {
    EXPECT_GT(g.flops_per_s, 1e8) << g.size;
    EXPECT_LT(g.flops_per_s, 1e12) << g.size;
  }
  EXPECT_GT(cal.memory_Bps, 1e8);
  EXPECT_LT(cal.memory_Bps, 1e12);
  EXPECT_GE(cal.launch_overhead_us, 0);
  EXPECT_LT(cal.launch_overhead_us, 1000);
  // Two devices at once: between fully independent (1) and worse than sharing
  // one core (2) on a busy machine.
  EXPECT_GT(cal.concurrent_gemm_slowdown, 0.5);
  EXPECT_LT(cal.concurrent_gemm_slowdown, 4);
  EXPECT_GT(cal.concurrent_stream_slowdown, 0.5);
  // The streaming ladder: the sizes below stream_bytes, then stream_bytes itself.
  ASSERT_EQ(cal.stream_slowdown_by_bytes.size(), 4u);  // 256 kB, 1 MB, 4 MB, 8 MB
  EXPECT_EQ(cal.stream_slowdown_by_bytes.back(), std::make_pair(8e6, cal.concurrent_stream_slowdown));
  for (const auto& [bytes, factor] : cal.stream_slowdown_by_bytes) EXPECT_GT(factor, 0.3) << bytes;
  EXPECT_EQ(cal.concurrent_stream_from_bytes, stream_contention_from_bytes(cal.stream_slowdown_by_bytes));
  ASSERT_EQ(cal.copies.size(), 2u);  // both directions
  for (const CopyFit& f : cal.copies) {
    EXPECT_GT(f.bandwidth_Bps, 1e8);
    EXPECT_GE(f.latency_us, 0);
  }
  // The calibrated cluster: same devices, measured rates, a route between them.
  const Cluster& c = cal.cluster;
  ASSERT_EQ(c.num_devices(), 2);
  EXPECT_EQ(c.device(1).name, base.device(1).name);
  EXPECT_EQ(c.device(0).memory_bytes, 4e9);
  EXPECT_EQ(c.device(0).peak_flops, cal.peak_flops);
  EXPECT_EQ(c.device(0).memory_Bps, cal.memory_Bps);
  EXPECT_GT(c.route_bandwidth_Bps(0, 1), 0);
}

TEST(Calibration, ProfileGivesEveryOpAnEntryPerKind) {
  std::unique_ptr<Evaluator> holder;
  HardwareEvaluator& hw = cpu(holder);
  OpGraph g = testing::fork_join_graph();
  for (int i = 0; i < g.num_ops(); ++i) g.mutable_op(i).compute_us *= 20;  // 200..400 us spins
  const CostTable table = profile_graph(hw, g, testing::star_cluster(2));
  ASSERT_EQ(table.us.size(), static_cast<size_t>(g.num_ops()));
  for (const Op& op : g.ops()) {
    const double us = table.lookup(op.name, "test");
    EXPECT_GE(us, op.compute_us) << op.name;
  }
  // And fits that price an op of no profiled graph.
  ASSERT_NE(table.fit("NeverProfiled", "test"), nullptr);
  EXPECT_GT(table.fit("NeverProfiled", "test")->time_us(testing::timed_op("new", 1)), 0);
  // Not much longer either, where nothing else holds the cores (and the build is
  // not instrumented).
  if (testing::sanitized_build() || !testing::cores_are_free()) return;
  const CostTable again = profile_graph(hw, g, testing::star_cluster(2));
  for (const Op& op : g.ops()) EXPECT_LT(again.lookup(op.name, "test"), op.compute_us * 1.5 + 200) << op.name;
}

// Each graph beside a copy of itself on the two cores: a factor per op type and
// "*", each the type's time in the pair over its time alone. Spinning ops share
// nothing, so on free cores the factors stay near 1.
TEST(Calibration, PairProfileSetsASlowdownPerOpType) {
  std::unique_ptr<Evaluator> holder;
  HardwareEvaluator& hw = cpu(holder);
  OpGraph g = testing::fork_join_graph();
  for (int i = 0; i < g.num_ops(); ++i) {
    g.mutable_op(i).compute_us *= 20;
    g.mutable_op(i).type = i % 2 == 0 ? "Even" : "Odd";
  }
  const Cluster cluster = testing::star_cluster(2);
  CostTable table = profile_graph(hw, g, cluster);
  table.pair_slowdowns[{"Stale", "test"}] = 9;  // replaced: the kind is measured again
  EXPECT_EQ(profile_pair_slowdowns(hw, {g}, cluster, 1, table), 3);
  EXPECT_EQ(table.pair_slowdowns.count({"Stale", "test"}), 0u);
  for (const char* type : {"Even", "Odd", "*"}) {
    ASSERT_EQ(table.pair_slowdowns.count({type, "test"}), 1u) << type;
    const double f = table.pair_slowdowns.at({type, "test"});
    EXPECT_GT(f, 0.5) << type;
    EXPECT_LT(f, 4) << type;
    if (!testing::sanitized_build() && testing::cores_are_free()) EXPECT_LT(f, 1.5) << type;
  }
  // One device of the kind: nothing to pair.
  CostTable single = profile_graph(hw, g, testing::star_cluster(1));
  EXPECT_EQ(profile_pair_slowdowns(hw, {g}, testing::star_cluster(1), 1, single), 0);
  EXPECT_TRUE(single.pair_slowdowns.empty());
}

TEST(Calibration, ProfilingTwoGraphsKeepsTheirSharedOpNamesApart) {
  // "x" is in both graphs, four times longer in "big": one table, two entries.
  std::unique_ptr<Evaluator> holder;
  HardwareEvaluator& hw = cpu(holder);
  OpGraph small("small"), big("big");
  small.add_op(testing::timed_op("x", 200));
  small.add_op(testing::timed_op("only_small", 200));
  big.add_op(testing::timed_op("x", 800));
  const Cluster cluster = testing::star_cluster(2);
  const CostTable table = profile_graphs(hw, {small, big}, cluster, 1);
  ASSERT_EQ(table.us.size(), 3u);
  EXPECT_EQ(table.lookup("x", "test"), -1);  // no plain entry: it would price one of them wrongly
  const double small_x = table.lookup("small", "x", "test");
  const double big_x = table.lookup("big", "x", "test");
  EXPECT_GE(small_x, 200);
  EXPECT_GE(big_x, 800);
  EXPECT_GT(big_x, small_x);
  EXPECT_GE(table.lookup("only_small", "test"), 200);  // in one graph only: plain
  EXPECT_GT(OpCostMatrix(big, cluster, &table).time_us(0, 0),
            OpCostMatrix(small, cluster, &table).time_us(0, 0));

  // Two graphs of one name (a model and its scaled copy) cannot share a table.
  OpGraph scaled("small");
  scaled.add_op(testing::timed_op("x", 400));
  try {
    profile_graphs(hw, {small, scaled}, cluster, 1);
    ADD_FAILURE() << "two graphs named 'small' were profiled into one table";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'small'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("separate cost tables"), std::string::npos) << e.what();
  }
}

TEST(Validation, KendallTauOnHandSeries) {
  EXPECT_DOUBLE_EQ(kendall_tau({1, 2, 3, 4}, {10, 20, 30, 40}), 1);
  EXPECT_DOUBLE_EQ(kendall_tau({1, 2, 3, 4}, {40, 30, 20, 10}), -1);
  // One swapped pair of six: (5 - 1) / 6.
  EXPECT_NEAR(kendall_tau({1, 2, 3, 4}, {1, 3, 2, 4}), 4.0 / 6.0, 1e-12);
  // Ties (tau-b): x = 1 1 2, y = 1 2 3: pairs (1,2) tie in x, (1,3) and (2,3)
  // concordant: 2 / sqrt(2 * 3).
  EXPECT_NEAR(kendall_tau({1, 1, 2}, {1, 2, 3}), 2 / std::sqrt(6.0), 1e-12);
  EXPECT_EQ(kendall_tau({1}, {2}), 0);
  EXPECT_EQ(kendall_tau({1, 1, 1}, {1, 2, 3}), 0);
}

TEST(Validation, PredictionErrorOnSyntheticSeries) {
  const PredictionError e = prediction_error({100, 200, 400, 0}, {110, 180, 400, 5});
  EXPECT_EQ(e.count, 3);  // a measured 0 is left out
  EXPECT_NEAR(e.mean_abs_rel, (0.1 + 0.1 + 0) / 3, 1e-12);
  EXPECT_NEAR(e.median_abs_rel, 0.1, 1e-12);
  EXPECT_NEAR(e.max_abs_rel, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(e.kendall_tau, 1);
  const PredictionError none = prediction_error({}, {});
  EXPECT_EQ(none.count, 0);
}

}  // namespace
}  // namespace aware
