// Per-op-type cost fits (core/cost_fit.h): hand cases first (a line recovered
// exactly, the non-negative optimum, a scaled type, an unseen type), then the
// lookup order in the simulators' costs, the file format and the coverage count.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/cluster.h"
#include "core/cost_fit.h"
#include "core/cost_table.h"
#include "core/errors.h"
#include "core/op_graph.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

Op sized(const std::string& name, const std::string& type, double flops, double bytes) {
  Op op;
  op.name = name;
  op.type = type;
  op.flops = flops;
  op.bytes_accessed = bytes;
  op.output_bytes = {0};
  return op;
}

// A device of kind "gpu": 1 TFLOP/s, 100 GB/s, 1 GB.
Device gpu_device(const std::string& name) {
  Device d;
  d.name = name;
  d.kind = "gpu";
  d.peak_flops = 1e12;
  d.memory_Bps = 1e11;
  d.memory_bytes = 1e9;
  return d;
}

double predict(const CostFit& fit, double flops, double bytes) {
  return fit.overhead_us + fit.us_per_flop * flops + fit.us_per_byte * bytes;
}

TEST(CostFit, RecoversAnExactLineInFlopsAndBytes) {
  // 3 us + flops at 2 TFLOP/s + bytes at 500 GB/s, at five sizes.
  std::vector<CostSample> samples;
  for (double s : {1.0, 3.0, 10.0, 30.0, 100.0}) {
    const double flops = 1e8 * s, bytes = 1e6 * s * s;
    samples.push_back({"Conv2D", flops, bytes, 3 + flops / 2e6 + bytes / 5e5});
  }
  const auto fits = fit_cost_samples(samples);
  ASSERT_EQ(fits.count("Conv2D"), 1u);
  const CostFit& fit = fits.at("Conv2D");
  EXPECT_EQ(fit.from, "fit");
  EXPECT_EQ(fit.samples, 5);
  EXPECT_NEAR(fit.overhead_us, 3, 1e-6);
  EXPECT_NEAR(fit.us_per_flop, 1 / 2e6, 1e-15);
  EXPECT_NEAR(fit.us_per_byte, 1 / 5e5, 1e-14);
  // The pooled fit is the same line: every sample lies on it.
  EXPECT_NEAR(predict(fits.at("*"), 1e9, 1e7), 3 + 1e9 / 2e6 + 1e7 / 5e5, 1e-6);
}

TEST(CostFit, NeverGoesNegative) {
  // Times that fall with size: the unconstrained line has a negative slope, the
  // constrained optimum is a constant (the best constant in relative error lies
  // between the smallest and the largest time).
  std::vector<CostSample> samples = {{"T", 1e6, 0, 10}, {"T", 2e6, 0, 8}, {"T", 3e6, 0, 6}, {"T", 4e6, 0, 4}};
  const CostFit fit = fit_cost_samples(samples).at("T");
  EXPECT_GE(fit.us_per_flop, 0);
  EXPECT_GE(fit.us_per_byte, 0);
  EXPECT_GE(fit.overhead_us, 0);
  EXPECT_EQ(fit.us_per_flop, 0);
  EXPECT_GT(fit.overhead_us, 4);
  EXPECT_LT(fit.overhead_us, 10);
}

TEST(CostFit, FewOpsTakeThePooledFitScaledAndUnseenTypesThePooledOne) {
  // Four "Big" ops on the line 2 us + flops at 1 TFLOP/s; two "Slow" ops (too few
  // for a fit of their own) at three times that line; "Same" has four ops of one size.
  std::vector<CostSample> samples;
  for (double f : {1e6, 1e7, 1e8, 1e9}) samples.push_back({"Big", f, 0, 2 + f / 1e6});
  for (double f : {1e7, 1e8}) samples.push_back({"Slow", f, 0, 3 * (2 + f / 1e6)});
  for (int i = 0; i < 4; ++i) samples.push_back({"Same", 5e7, 0, 2 + 5e7 / 1e6});
  const auto fits = fit_cost_samples(samples);
  EXPECT_EQ(fits.at("Big").from, "fit");
  EXPECT_NEAR(predict(fits.at("Big"), 1e10, 0), 2 + 1e10 / 1e6, 1e-3);
  EXPECT_EQ(fits.at("Slow").from, "scaled");
  EXPECT_EQ(fits.at("Same").from, "scaled");
  EXPECT_EQ(fits.at("Slow").samples, 2);
  // Scaled: the pooled fit times the median of the type's ratios to it.
  const CostFit& pooled = fits.at("*");
  const double r0 = samples[4].us / predict(pooled, 1e7, 0), r1 = samples[5].us / predict(pooled, 1e8, 0);
  EXPECT_NEAR(predict(fits.at("Slow"), 1e9, 0), predict(pooled, 1e9, 0) * (r0 + r1) / 2, 1e-6);
  EXPECT_TRUE(fit_cost_samples({}).empty());
}

TEST(CostFit, PricesOpsWithNoEntryAfterEntriesAndOwnTimes) {
  const Device gpu = gpu_device("g0");
  CostTable table;
  table.us[{"listed", "gpu"}] = 42;
  table.fits[{"MatMul", "gpu"}] = CostFit{5, 1e-6, 0, 4, "fit"};
  table.fits[{"*", "gpu"}] = CostFit{7, 0, 0, 10, "fit"};
  Op listed = sized("listed", "MatMul", 1e6, 0);
  EXPECT_EQ(op_time_us(listed, gpu, &table), 42);       // the entry first
  Op own = sized("own", "MatMul", 1e6, 0);
  own.compute_us = 9;
  EXPECT_EQ(op_time_us(own, gpu, &table), 9);           // then the op's own time
  EXPECT_DOUBLE_EQ(op_time_us(sized("m", "MatMul", 1e6, 0), gpu, &table), 6);  // its type's fit
  EXPECT_DOUBLE_EQ(op_time_us(sized("n", "Relu", 1e6, 0), gpu, &table), 7);    // the kind's "*"
  Device cpu = gpu;
  cpu.kind = "cpu";  // no fit for this kind: the roofline
  EXPECT_DOUBLE_EQ(op_time_us(sized("m", "MatMul", 1e6, 0), cpu, &table), roofline_time_us(sized("m", "MatMul", 1e6, 0), cpu));
}

TEST(CostFit, FitsATableToTheGraphsItWasProfiledFrom) {
  OpGraph graph("g");
  for (int i = 0; i < 5; ++i) graph.add_op(sized("mm" + std::to_string(i), "MatMul", 1e6 * (i + 1), 0));
  graph.add_op(sized("other", "Relu", 0, 1e6));
  CostTable table;
  for (int i = 0; i < 5; ++i) table.us[{scoped_op_name("g", "mm" + std::to_string(i)), "gpu"}] = 4 + (i + 1);
  table.us[{"other", "*"}] = 3;
  EXPECT_EQ(fit_cost_table(table, {graph}), 7);  // 5 MatMul on gpu, Relu on gpu and on "*"
  const CostFit* mm = table.fit("MatMul", "gpu");
  ASSERT_NE(mm, nullptr);
  EXPECT_NEAR(predict(*mm, 1e7, 0), 4 + 10, 1e-6);
  ASSERT_NE(table.fit("Relu", "*"), nullptr);
  EXPECT_NE(table.fit("Unknown", "gpu"), nullptr);   // the gpu kind's pooled fit
  EXPECT_EQ(table.fit("Unknown", "tpu"), table.fit("Unknown", "*"));  // "*" kind's pooled fit
  EXPECT_EQ(fit_cost_table(table, {OpGraph("unrelated")}), 0);
  EXPECT_TRUE(table.fits.empty());
}

TEST(CostFit, FileRoundTripVersionAndStrictFields) {
  CostTable table;
  table.us[{"a", "gpu"}] = 1;
  const std::string before = cost_table_fingerprint(table);
  EXPECT_EQ(cost_table_to_json(table)["version"], 1);  // no fits: readable by older builds
  table.fits[{"MatMul", "gpu"}] = CostFit{5, 1.0 / 3e6, 0.25e-5, 4, "fit"};
  EXPECT_NE(cost_table_fingerprint(table), before);
  const nlohmann::json doc = cost_table_to_json(table);
  EXPECT_EQ(doc["version"], 2);
  const CostTable back = cost_table_from_json(doc, "memory");
  ASSERT_EQ(back.fits.size(), 1u);
  const CostFit& fit = back.fits.at({"MatMul", "gpu"});
  EXPECT_EQ(fit.overhead_us, 5);
  EXPECT_EQ(fit.us_per_flop, 1.0 / 3e6);
  EXPECT_EQ(fit.samples, 4);
  EXPECT_EQ(fit.from, "fit");
  EXPECT_EQ(cost_table_fingerprint(back), cost_table_fingerprint(table));

  nlohmann::json v1 = doc;
  v1["version"] = 1;
  testing::expect_error<ParseError>([&] { cost_table_from_json(v1, "t.json"); }, {"t.json", "'fits'", "version 2"});
  nlohmann::json bad = doc;
  bad["fits"]["gpu"]["MatMul"]["us_per_flop"] = -1;
  testing::expect_error<ParseError>([&] { cost_table_from_json(bad, "t.json"); },
                                    {"t.json", "gpu", "MatMul", "us_per_flop", ">= 0"});
  bad = doc;
  bad["fits"]["gpu"]["MatMul"]["slope"] = 1;
  testing::expect_error<ParseError>([&] { cost_table_from_json(bad, "t.json"); }, {"t.json", "unknown field 'slope'"});
  bad = doc;
  bad["version"] = 4;
  testing::expect_error<ParseError>([&] { cost_table_from_json(bad, "t.json"); }, {"t.json", "versions 1 to 3"});
}

// The same model at twice the batch: each op's profile grows as its type's fit
// grows. MatMul's fit is 4 + 1e-6 * flops: "mm" was 14 us at 1e7 FLOPs (its own
// profile, 2 us above its fit) and at 2e7 FLOPs is 14 * (4 + 20) / (4 + 10) = 24;
// "new" (not in the profiled graph) gets no entry, so the fit prices it.
TEST(CostFit, ScalesEachOpsProfileByItsTypesFit) {
  OpGraph small("m");
  small.add_op(sized("mm", "MatMul", 1e7, 0));
  small.add_op(sized("relu", "Relu", 0, 1e6));
  OpGraph big("m@2B");
  big.add_op(sized("mm", "MatMul", 2e7, 0));
  big.add_op(sized("relu", "Relu", 0, 2e6));
  big.add_op(sized("new", "MatMul", 3e7, 0));
  CostTable table;
  table.us[{scoped_op_name("m", "mm"), "gpu"}] = 14;
  table.us[{"relu", "gpu"}] = 5;
  table.fits[{"MatMul", "gpu"}] = CostFit{4, 1e-6, 0, 5, "fit"};
  table.fits[{"*", "gpu"}] = CostFit{0, 0, 0, 0, "fit"};  // gives 0: Relu keeps its profile
  table.pair_slowdowns[{"*", "gpu"}] = 1.25;
  int made = 0;
  const CostTable scaled = scale_cost_table(table, small, big, &made);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(scaled.us.size(), 2u);
  EXPECT_NEAR(scaled.lookup("m@2B", "mm", "gpu"), 14.0 * 24 / 14, 1e-9);
  EXPECT_NEAR(scaled.lookup("m@2B", "relu", "gpu"), 5, 1e-9);
  EXPECT_LT(scaled.lookup("m@2B", "new", "gpu"), 0);  // no entry: priced by the fit
  EXPECT_EQ(scaled.fits.size(), table.fits.size());
  EXPECT_EQ(scaled.pair_slowdown("Relu", "gpu"), 1.25);
  // An op priced by the fit in the simulators' costs: 4 + 1e-6 * 3e7 = 34.
  Cluster cluster("one");
  cluster.add_device(gpu_device("gpu0"));
  cluster.finalize();
  EXPECT_NEAR(op_time_us(big.op(2), cluster.device(0), &scaled, big.name()), 34, 1e-9);
}

TEST(CostFit, PairSlowdownsRoundTripAsVersion3) {
  CostTable table;
  table.us[{"a", "gpu"}] = 1;
  table.fits[{"MatMul", "gpu"}] = CostFit{5, 1e-6, 0, 4, "fit"};
  const std::string without = cost_table_fingerprint(table);
  table.pair_slowdowns[{"MatMul", "gpu"}] = 1.5;
  table.pair_slowdowns[{"*", "gpu"}] = 1.1;
  EXPECT_NE(cost_table_fingerprint(table), without);
  EXPECT_EQ(table.pair_slowdown("MatMul", "gpu"), 1.5);
  EXPECT_EQ(table.pair_slowdown("Relu", "gpu"), 1.1);  // the kind's "*"
  EXPECT_EQ(table.pair_slowdown("MatMul", "cpu"), 0);  // not measured on that kind
  const nlohmann::json doc = cost_table_to_json(table);
  EXPECT_EQ(doc["version"], 3);
  const CostTable back = cost_table_from_json(doc, "memory");
  EXPECT_EQ(back.pair_slowdowns, table.pair_slowdowns);
  EXPECT_EQ(cost_table_fingerprint(back), cost_table_fingerprint(table));
  nlohmann::json v2 = doc;
  v2["version"] = 2;
  testing::expect_error<ParseError>([&] { cost_table_from_json(v2, "t.json"); },
                                    {"t.json", "'pair_slowdowns'", "version 3"});
  nlohmann::json bad = doc;
  bad["pair_slowdowns"]["gpu"]["MatMul"] = 0;
  testing::expect_error<ParseError>([&] { cost_table_from_json(bad, "t.json"); },
                                    {"t.json", "gpu", "MatMul", "> 0"});
}

TEST(CostFit, CoverageCountsOpsPricedByFitsAndTheirFlops) {
  OpGraph graph("g");
  graph.add_op(sized("listed", "MatMul", 100, 0));
  graph.add_op(sized("fitted", "MatMul", 300, 0));
  Op own = sized("own", "MatMul", 50, 0);
  own.compute_us = 1;
  graph.add_op(own);
  graph.add_op(sized("roof", "Relu", 550, 0));
  Cluster cluster("one");
  cluster.add_device(gpu_device("g0"));
  cluster.finalize();
  CostTable table;
  table.us[{"listed", "gpu"}] = 2;
  table.fits[{"MatMul", "gpu"}] = CostFit{1, 0, 0, 4, "fit"};
  CostTableCoverage c = cost_table_coverage(table, graph, cluster);
  EXPECT_EQ(c.ops_missed, 3);
  EXPECT_EQ(c.ops_unprofiled, 2);  // "own" has its own time
  EXPECT_EQ(c.ops_by_fit, 1);      // "fitted"; "roof" has no fit of its type or "*"
  EXPECT_EQ(c.flops_unprofiled, 850);
  EXPECT_EQ(c.flops_total, 1000);
  table.fits[{"*", "gpu"}] = CostFit{1, 0, 0, 4, "fit"};
  EXPECT_EQ(cost_table_coverage(table, graph, cluster).ops_by_fit, 2);
}

}  // namespace
}  // namespace aware
