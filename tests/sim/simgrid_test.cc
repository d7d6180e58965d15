// Tests of the simgrid evaluator: conformance with the analytic contention
// simulator where no two transfers share a link, hand-worked contention cases,
// determinism, bad input, and worker failure handling. Label: simgrid.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "builtins/builtins.h"
#include "core/cluster.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/graph_algorithms.h"
#include "core/op_graph.h"
#include "core/placement.h"
#include "datasets/zoo.h"
#include "sim/analytic/analytic_simulator.h"
#include "sim/simgrid/bench_inputs.h"
#include "sim/simgrid/simgrid_evaluator.h"
#include "tests/expect_error.h"
#include "tests/sim/simgrid_test_support.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

using testing::child_pids;
using testing::expect_error;

Device make_device(const std::string& name, double peak_flops = 1e12) {
  Device d;
  d.name = name;
  d.kind = "test";
  d.peak_flops = peak_flops;
  d.efficiency = 1;
  d.memory_bytes = 16e9;
  d.memory_Bps = 1e15;
  return d;
}

// Every pair of devices on its own direct link: no two transfers between
// different pairs share a channel.
Cluster mesh_cluster(int devices, double bandwidth_Bps = 10e9, double latency_us = 5) {
  Cluster c("mesh" + std::to_string(devices));
  for (int d = 0; d < devices; ++d) c.add_device(make_device("d" + std::to_string(d)));
  for (int a = 0; a < devices; ++a) {
    for (int b = a + 1; b < devices; ++b) {
      c.connect("d" + std::to_string(a), "d" + std::to_string(b), bandwidth_Bps, latency_us);
    }
  }
  c.finalize();
  return c;
}

int add(OpGraph& g, const std::string& name, double compute_us, double out_bytes,
        double param_bytes = 0, double temp_bytes = 0) {
  return g.add_op(testing::timed_op(name, compute_us, out_bytes, param_bytes, temp_bytes));
}

SimGridOptions small_pool(int workers = 2) {
  SimGridOptions o;
  o.workers = workers;
  o.timeout_s = 30;
  return o;
}

void expect_conforms(const OpGraph& g, const Cluster& c, const Placement& p) {
  AnalyticSimulator analytic;
  SimGridEvaluator simgrid(small_pool(1));
  Trace ta, ts;
  const StepResult a = analytic.evaluate(g, c, p, &ta);
  const StepResult s = simgrid.evaluate(g, c, p, &ts);
  EXPECT_EQ(s.evaluator, "simgrid");
  EXPECT_NEAR(s.step_time_us, a.step_time_us, 0.01 * a.step_time_us);
  EXPECT_EQ(s.transfers, a.transfers);
  EXPECT_DOUBLE_EQ(s.bytes_moved, a.bytes_moved);
  ASSERT_EQ(s.device_busy_us.size(), a.device_busy_us.size());
  for (size_t d = 0; d < a.device_busy_us.size(); ++d) {
    EXPECT_NEAR(s.device_busy_us[d], a.device_busy_us[d], 1e-6);
    EXPECT_DOUBLE_EQ(s.peak_memory_bytes[d], a.peak_memory_bytes[d]) << "device " << d;
  }
  ASSERT_EQ(ts.ops.size(), ta.ops.size());
  for (size_t op = 0; op < ta.ops.size(); ++op) {
    EXPECT_NEAR(ts.ops[op].start_us, ta.ops[op].start_us, 0.01 * a.step_time_us) << "op " << op;
    EXPECT_NEAR(ts.ops[op].end_us, ta.ops[op].end_us, 0.01 * a.step_time_us) << "op " << op;
  }
}

// ------------------------------------------------------------------ conformance

// True when, in the analytic schedule, every transfer started the moment its
// producer finished: no transfer ever waited for a link another one held.
bool no_transfer_waits(const OpGraph& g, const Cluster& c, const Placement& p) {
  AnalyticSimulator analytic;
  Trace t;
  analytic.evaluate(g, c, p, &t);
  for (const TransferSpan& s : t.transfers)
    if (s.start_us > t.ops[s.src_op].end_us + 1e-9) return false;
  return true;
}

// On every zoo model, the placement where certainly no two transfers share a
// link: everything on one device. This checks the cost model, the per-device
// stream order and the step time on real training graphs. (Every split of a
// training step we tried opens with a burst of simultaneous weight transfers, so
// the transfer side of conformance is checked on the hand-built graphs below, and
// the zoo-scale differences under contention are reported in README.md.)
TEST(SimGridConformance, EveryZooModelOnOneDevice) {
  REQUIRE_WORKER();
  const Cluster c = make_cluster_preset("k40x2");
  SimGridEvaluator simgrid(small_pool(1));
  AnalyticSimulator analytic;
  for (const std::string& model : zoo_model_names()) {
    SCOPED_TRACE(model);
    const OpGraph g = build_zoo_model(model);
    const Placement single = single_device_placement(g, 0);
    ASSERT_TRUE(no_transfer_waits(g, c, single));
    const double a = analytic.evaluate(g, c, single).step_time_us;
    EXPECT_NEAR(simgrid.evaluate(g, c, single).step_time_us, a, 0.01 * a);
  }
}

TEST(SimGridConformance, CommunicationStreamRunsBesideCompute) {
  REQUIRE_WORKER();
  const Cluster cl = mesh_cluster(1);
  SimGridEvaluator s(small_pool(1));
  // As the analytic contention mode: 55 with c on stream 1, 75 on one stream.
  EXPECT_NEAR(s.evaluate(testing::two_stream_graph(1), cl, Placement({0, 0, 0, 0})).step_time_us, 55, 0.01);
  EXPECT_NEAR(s.evaluate(testing::two_stream_graph(0), cl, Placement({0, 0, 0, 0})).step_time_us, 75, 0.01);
}

TEST(SimGridConformance, ChainAcrossThreeDevices) {
  REQUIRE_WORKER();
  OpGraph g("chain");
  const int a = add(g, "a", 100, 4e6, 1e6, 1e5);
  const int b = add(g, "b", 250, 2e6, 2e6, 0);
  const int c = add(g, "c", 50, 1e6);
  g.add_edge(a, b);
  g.add_edge(b, c);
  // a: 0-100; a->b 5 + 400 us; b: 505-755; b->c 5 + 200 us; c: 960-1010.
  const Cluster cl = mesh_cluster(3);
  expect_conforms(g, cl, Placement({0, 1, 2}));
  SimGridEvaluator s(small_pool(1));
  EXPECT_NEAR(s.evaluate(g, cl, Placement({0, 1, 2})).step_time_us, 1010, 0.01);
}

TEST(SimGridConformance, DiamondOnFourDevices) {
  REQUIRE_WORKER();
  OpGraph g("diamond");
  const int a = add(g, "a", 100, 1e6, 1e6);
  const int b = add(g, "b", 300, 3e6, 5e5, 2e5);
  const int c = add(g, "c", 200, 2e6);
  const int d = add(g, "d", 80, 1e5);
  g.add_edge(a, b);
  g.add_edge(a, c);
  g.add_edge(b, d);
  g.add_edge(c, d);
  expect_conforms(g, mesh_cluster(4), Placement({0, 1, 2, 3}));
  expect_conforms(g, mesh_cluster(4), Placement({0, 1, 2, 0}));
}

TEST(SimGridConformance, ForkJoinAcrossFourDevices) {
  REQUIRE_WORKER();
  OpGraph g("fork-join");
  const int root = add(g, "root", 50, 5e5);
  std::vector<int> ends;
  for (int k = 1; k <= 3; ++k) {
    const int x = add(g, "b" + std::to_string(k) + "x", 100.0 * k, 1e6);
    const int y = add(g, "b" + std::to_string(k) + "y", 60, 5e5 * k);
    g.add_edge(root, x);
    g.add_edge(x, y);
    ends.push_back(y);
  }
  const int join = add(g, "join", 40, 1e3);
  for (int e : ends) g.add_edge(e, join);
  // Root and join on d0, branch k on device k: each transfer has its own link.
  expect_conforms(g, mesh_cluster(4), Placement({0, 1, 1, 2, 2, 3, 3, 0}));
}

TEST(SimGridConformance, RooflineCostWithLaunchOverhead) {
  REQUIRE_WORKER();
  Cluster cl("roofline");
  Device d0 = make_device("d0", 1e12);
  d0.efficiency = 0.5;
  d0.launch_overhead_us = 5;
  cl.add_device(d0);
  cl.add_device(make_device("d1", 2e12));
  cl.connect("d0", "d1", 1e9, 10);
  cl.finalize();
  OpGraph g("roofline");
  Op x;
  x.name = "x";
  x.type = "MatMul";
  x.flops = 1e9;  // 1e9 / (1e12 * 0.5) = 2000 us, + 5 us launch overhead
  x.output_bytes = {1e6};
  const int a = g.add_op(x);
  x.name = "y";
  const int b = g.add_op(x);  // on d1: 500 us
  g.add_edge(a, b);
  expect_conforms(g, cl, Placement({0, 1}));
  SimGridEvaluator s(small_pool(1));
  // 2005 + (10 + 1000) + 500
  EXPECT_NEAR(s.evaluate(g, cl, Placement({0, 1})).step_time_us, 3515, 0.01);
}

TEST(SimGridConformance, MemoryInfeasibleLikeAnalytic) {
  REQUIRE_WORKER();
  Cluster cl("small");
  Device d0 = make_device("d0");
  d0.memory_bytes = 3e6;
  cl.add_device(d0);
  cl.add_device(make_device("d1"));
  cl.connect("d0", "d1", 1e9, 1);
  cl.finalize();
  OpGraph g("mem");
  const int a = add(g, "a", 10, 2e6, 1e6);
  const int b = add(g, "b", 10, 2e6);
  g.add_edge(a, b);
  AnalyticSimulator analytic;
  SimGridEvaluator s(small_pool(1));
  const StepResult ra = analytic.evaluate(g, cl, Placement({0, 0}));
  const StepResult rs = s.evaluate(g, cl, Placement({0, 0}));
  EXPECT_FALSE(ra.feasible);
  EXPECT_FALSE(rs.feasible);
  EXPECT_EQ(rs.infeasible_reason, ra.infeasible_reason);
  EXPECT_TRUE(s.evaluate(g, cl, Placement({0, 1})).feasible);
}

// ------------------------------------------------------------------ contention

TEST(SimGridContention, TwoTransfersOnOneLinkShareItsBandwidth) {
  REQUIRE_WORKER();
  // d0, d1, d2 on one switch; 1 GB/s and 10 us per link. a (d0) sends 1e8 bytes to
  // b (d1) and to c (d2) at t = 100 us: both cross d0->sw at the same time.
  Cluster cl("star3");
  for (int d = 0; d < 3; ++d) cl.add_device(make_device("d" + std::to_string(d)));
  cl.add_switch("sw");
  for (int d = 0; d < 3; ++d) cl.connect("d" + std::to_string(d), "sw", 1e9, 10);
  cl.finalize();
  OpGraph g("fan-out");
  const int a = add(g, "a", 100, 1e8);
  const int b = add(g, "b", 0, 1);
  const int c = add(g, "c", 0, 1);
  g.add_edge(a, b);
  g.add_edge(a, c);
  SimGridEvaluator s(small_pool(1));
  Trace trace;
  const StepResult r = s.evaluate(g, cl, Placement({0, 1, 2}), &trace);
  // Each gets 0.5 GB/s: 1e8 B in 200000 us, plus 2 x 10 us latency.
  ASSERT_EQ(trace.transfers.size(), 2u);
  for (const TransferSpan& t : trace.transfers) {
    EXPECT_NEAR(t.start_us, 100, 0.01);
    EXPECT_NEAR(t.end_us, 100 + 20 + 200000, 0.5);
  }
  EXPECT_NEAR(r.step_time_us, 200120, 0.5);
  // The analytic model serialises them instead: 100120 and 200140.
  AnalyticSimulator analytic;
  EXPECT_NEAR(analytic.evaluate(g, cl, Placement({0, 1, 2})).step_time_us, 200140, 0.01);
}

TEST(SimGridContention, ADeviceRunsTheOpWhoseInputArrivedFirst) {
  REQUIRE_WORKER();
  // d0 and d1 each send to d2 over one shared d2 link (10 GB/s, no latency): 1 GB
  // from a (d0) for x, 0.5 GB from b (d1) for y, a 1 s op. x comes first in
  // topological order. Fair sharing delivers y's input at 0.1 s and x's at
  // 0.15 s. Ready first, d2 runs y from 0.1 s to 1.1 s and x after it; in the
  // analytic order (x, then y) y waits for x: 0.15 s + 1 s.
  Cluster cl("into-d2");
  for (int d = 0; d < 3; ++d) cl.add_device(make_device("d" + std::to_string(d)));
  cl.add_switch("sw");
  cl.connect("d0", "sw", 100e9, 0);
  cl.connect("d1", "sw", 100e9, 0);
  cl.connect("d2", "sw", 10e9, 0);
  cl.finalize();
  OpGraph g("two-into-one");
  const int a = add(g, "a", 0, 1e9);
  const int b = add(g, "b", 0, 0.5e9);
  const int x = add(g, "x", 1, 1);
  const int y = add(g, "y", 1e6, 1);
  g.add_edge(a, x);
  g.add_edge(b, y);
  const Placement p({0, 1, 2, 2});
  ASSERT_LT(topological_rank(g)[x], topological_rank(g)[y]);

  SimGridEvaluator ready(small_pool(1));
  Trace trace;
  const StepResult r = ready.evaluate(g, cl, p, &trace);
  EXPECT_NEAR(trace.ops[y].start_us, 100000, 0.5);
  EXPECT_NEAR(trace.ops[y].end_us, 1100000, 0.5);
  EXPECT_NEAR(trace.ops[x].start_us, 1100000, 0.5);  // its input arrived at 0.15 s; d2 was busy
  EXPECT_NEAR(r.step_time_us, 1100001, 0.5);
  EXPECT_NE(ready.describe().find("ready"), std::string::npos) << ready.describe();

  SimGridOptions fixed = small_pool(1);
  fixed.order = "analytic";
  SimGridEvaluator analytic_order(fixed);
  Trace fixed_trace;
  const StepResult f = analytic_order.evaluate(g, cl, p, &fixed_trace);
  EXPECT_NEAR(fixed_trace.ops[x].start_us, 150000, 0.5);
  EXPECT_NEAR(fixed_trace.ops[y].start_us, 150001, 0.5);
  EXPECT_NEAR(f.step_time_us, 1150001, 0.5);
  EXPECT_NE(analytic_order.describe().find("analytic contention schedule"), std::string::npos);

  SimGridOptions bad = small_pool(1);
  bad.order = "sideways";
  EXPECT_THROW(SimGridEvaluator{bad}, ConfigError);
}

TEST(SimGridContention, MultiHopRouteCostsTheSumOfLatencies) {
  REQUIRE_WORKER();
  // d0 - s1 - s2 - d1 with 10, 20 and 30 us; 1e3 bytes at 1 GB/s = 1 us.
  Cluster cl("line");
  cl.add_device(make_device("d0"));
  cl.add_device(make_device("d1"));
  cl.add_switch("s1");
  cl.add_switch("s2");
  cl.connect("d0", "s1", 1e9, 10);
  cl.connect("s1", "s2", 1e9, 20);
  cl.connect("s2", "d1", 1e9, 30);
  cl.finalize();
  OpGraph g("hop");
  const int a = add(g, "a", 100, 1e3);
  const int b = add(g, "b", 50, 1);
  g.add_edge(a, b);
  SimGridEvaluator s(small_pool(1));
  Trace trace;
  const StepResult r = s.evaluate(g, cl, Placement({0, 1}), &trace);
  ASSERT_EQ(trace.transfers.size(), 1u);
  EXPECT_NEAR(trace.transfers[0].end_us - trace.transfers[0].start_us, 61, 0.01);
  EXPECT_EQ(trace.transfers[0].channels.size(), 3u);
  EXPECT_NEAR(r.step_time_us, 100 + 61 + 50, 0.01);
  // Back the other way uses the other direction of each link, same cost.
  EXPECT_NEAR(s.evaluate(g, cl, Placement({1, 0})).step_time_us, 211, 0.01);
}

// ------------------------------------------------------------------ determinism

TEST(SimGridDeterminism, SamePlacementSameTimeOnAnyWorker) {
  REQUIRE_WORKER();
  const OpGraph g = measured_layered_dag(200, 7);
  const Cluster cl = bench_star_cluster(4);
  const Placement p = random_placement(g, 4, 11);
  SimGridEvaluator s(small_pool(2));
  const StepResult first = s.evaluate(g, cl, p);
  std::vector<Placement> batch;
  for (int i = 0; i < 6; ++i) {
    batch.push_back(p);
    batch.push_back(random_placement(g, 4, 100 + i));  // moves each worker's clock on
  }
  const auto results = s.evaluate_batch(g, cl, batch);
  for (size_t i = 0; i < results.size(); i += 2) {
    EXPECT_EQ(results[i].step_time_us, first.step_time_us) << "batch item " << i;
    EXPECT_EQ(results[i].peak_memory_bytes, first.peak_memory_bytes);
  }
  EXPECT_EQ(s.evaluate(g, cl, p).step_time_us, first.step_time_us);
  // Lower bound on the step: no device finishes before its own work is done.
  for (double busy : first.device_busy_us) EXPECT_GE(first.step_time_us, busy - 1e-6);
}

TEST(SimGridDeterminism, ClonesShareThePoolFromSeveralThreads) {
  REQUIRE_WORKER();
  const OpGraph g = measured_layered_dag(100, 3);
  const Cluster cl = bench_star_cluster(4);
  SimGridEvaluator s(small_pool(2));
  const double expected = s.evaluate(g, cl, random_placement(g, 4, 5)).step_time_us;
  std::vector<std::thread> threads;
  std::vector<double> got(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t, e = s.clone()] {
      got[t] = e->evaluate(g, cl, random_placement(g, 4, 5)).step_time_us;
    });
  }
  for (auto& t : threads) t.join();
  for (double v : got) EXPECT_EQ(v, expected);
  EXPECT_LE(s.worker_pids().size(), 2u);
}

// ------------------------------------------------------------------ bad input

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

const char* kPlatformHead =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n";

TEST(SimGridBadInput, MalformedXmlIsAParseError) {
  REQUIRE_WORKER();
  const std::string path = write_temp(
      "aware_bad.xml", std::string(kPlatformHead) + "    <host id=\"a\" speed=\"1Gf\">\n");
  expect_error<ParseError>([&] { cluster_from_simgrid_xml(path); }, {"aware_bad.xml"});
  EXPECT_THROW(cluster_from_simgrid_xml(::testing::TempDir() + "no_such_platform.xml"), ParseError);
  EXPECT_TRUE(child_pids().empty());
}

TEST(SimGridBadInput, HostWithoutMemoryIsADeviceError) {
  REQUIRE_WORKER();
  const std::string path = write_temp(
      "aware_nomem.xml",
      std::string(kPlatformHead) +
          "    <host id=\"gpu0\" speed=\"1Tf\"><prop id=\"memory_bytes\" value=\"16e9\"/></host>\n"
          "    <host id=\"gpu1\" speed=\"1Tf\"/>\n"
          "    <link id=\"l\" bandwidth=\"1GBps\" latency=\"10us\"/>\n"
          "    <route src=\"gpu0\" dst=\"gpu1\"><link_ctn id=\"l\"/></route>\n"
          "  </zone>\n</platform>\n");
  expect_error<DeviceError>([&] { cluster_from_simgrid_xml(path); }, {"gpu1", "memory_bytes"});
  EXPECT_TRUE(child_pids().empty());
}

TEST(SimGridBadInput, XmlPlatformLoadsAndSimulates) {
  REQUIRE_WORKER();
  const std::string path = write_temp(
      "aware_ok.xml",
      std::string(kPlatformHead) +
          "    <host id=\"gpu0\" speed=\"1Tf\"><prop id=\"memory_bytes\" value=\"16e9\"/></host>\n"
          "    <host id=\"gpu1\" speed=\"2Tf\"><prop id=\"memory_bytes\" value=\"8e9\"/></host>\n"
          "    <link id=\"l\" bandwidth=\"1GBps\" latency=\"10us\"/>\n"
          "    <route src=\"gpu0\" dst=\"gpu1\"><link_ctn id=\"l\"/></route>\n"
          "  </zone>\n</platform>\n");
  const Cluster cl = cluster_from_simgrid_xml(path);
  ASSERT_EQ(cl.num_devices(), 2);
  EXPECT_EQ(cl.device(1).name, "gpu1");
  EXPECT_DOUBLE_EQ(cl.device(1).peak_flops, 2e12);
  EXPECT_DOUBLE_EQ(cl.device(1).memory_bytes, 8e9);
  EXPECT_NEAR(cl.transfer_time_us(0, 1, 1e6), 1010, 1e-6);
  OpGraph g("xml");
  const int a = add(g, "a", 100, 1e6);
  const int b = add(g, "b", 100, 1);
  g.add_edge(a, b);
  expect_conforms(g, cl, Placement({0, 1}));
  EXPECT_TRUE(child_pids().empty());
}

TEST(SimGridBadInput, UnknownCfgKeyIsAConfigErrorAndLeavesNoWorkers) {
  REQUIRE_WORKER();
  const OpGraph g = measured_layered_dag(20, 1);
  const Cluster cl = bench_star_cluster(2);
  {
    SimGridOptions o = small_pool(2);
    o.cfg = {"network/no-such-key:1"};
    SimGridEvaluator s(o);
    expect_error<ConfigError>([&] { s.evaluate(g, cl, random_placement(g, 2, 1)); },
                              {"network/no-such-key"});
  }
  EXPECT_THROW(SimGridEvaluator::from_options({{"cfg", "nokeyvalue"}}), ConfigError);
  EXPECT_THROW(SimGridEvaluator::from_options({{"colour", "blue"}}), ConfigError);
  EXPECT_TRUE(child_pids().empty());
}

TEST(SimGridBadInput, BadPlacementThrowsDeviceError) {
  REQUIRE_WORKER();
  const OpGraph g = measured_layered_dag(20, 1);
  const Cluster cl = bench_star_cluster(2);
  SimGridEvaluator s(small_pool(1));
  Placement p = random_placement(g, 2, 1);
  p[3] = 7;
  EXPECT_THROW(s.evaluate(g, cl, p), DeviceError);
}

TEST(SimGridRegistry, RegisteredWithOptions) {
  REQUIRE_WORKER();
  register_builtins();
  auto e = EvaluatorRegistry::instance().create(
      "simgrid", {{"workers", "1"},
                  {"cfg", "network/latency-factor:1;network/TCP-gamma:0"},
                  {"cfg.maxmin/precision", "1e-5"}});
  EXPECT_EQ(e->name(), "simgrid");
  EXPECT_NE(e->describe().find("maxmin/precision:1e-5"), std::string::npos) << e->describe();
  const OpGraph g = measured_layered_dag(30, 2);
  const Cluster cl = bench_star_cluster(2);
  EXPECT_GT(e->evaluate(g, cl, random_placement(g, 2, 3)).step_time_us, 0);
}

// ------------------------------------------------------------------ worker failures

TEST(SimGridWorkers, KilledWorkerIsReplaced) {
  REQUIRE_WORKER();
  const OpGraph g = measured_layered_dag(50, 4);
  const Cluster cl = bench_star_cluster(2);
  const Placement p = random_placement(g, 2, 9);
  SimGridEvaluator s(small_pool(1));
  const double expected = s.evaluate(g, cl, p).step_time_us;
  const std::vector<int> before = s.worker_pids();
  ASSERT_EQ(before.size(), 1u);
  ASSERT_EQ(::kill(before[0], SIGKILL), 0);
  EXPECT_EQ(s.evaluate(g, cl, p).step_time_us, expected);
  const std::vector<int> after = s.worker_pids();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0], before[0]);
}

TEST(SimGridWorkers, CrashMidEvaluationIsRetried) {
  REQUIRE_WORKER();
  const OpGraph g = measured_layered_dag(50, 4);
  const Cluster cl = bench_star_cluster(2);
  SimGridOptions o = small_pool(1);
  o.debug_fail_first = "crash";  // the worker aborts inside the first evaluation
  SimGridEvaluator s(o);
  EXPECT_GT(s.evaluate(g, cl, random_placement(g, 2, 9)).step_time_us, 0);
}

TEST(SimGridWorkers, HungWorkerIsKilledAfterTheTimeout) {
  REQUIRE_WORKER();
  const OpGraph g = measured_layered_dag(50, 4);
  const Cluster cl = bench_star_cluster(2);
  SimGridOptions o = small_pool(1);
  o.timeout_s = 1;
  o.debug_fail_first = "hang";
  SimGridEvaluator s(o);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_GT(s.evaluate(g, cl, random_placement(g, 2, 9)).step_time_us, 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
}

TEST(SimGridWorkers, WorkerThatAlwaysFailsIsReportedWithItsStderr) {
  REQUIRE_WORKER();
  const std::string script =
      write_temp("aware_broken_worker.sh", "#!/bin/sh\necho boom-from-worker >&2\nexit 3\n");
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  SimGridOptions o = small_pool(1);
  o.worker_path = script;
  {
    SimGridEvaluator s(o);
    const OpGraph g = measured_layered_dag(10, 1);
    expect_error<Error>([&] { s.evaluate(g, bench_star_cluster(2), random_placement(g, 2, 1)); },
                        {"boom-from-worker", "failed twice"});
  }
  EXPECT_TRUE(child_pids().empty());
}

TEST(SimGridWorkers, DestructorLeavesNoChildren) {
  REQUIRE_WORKER();
  {
    const OpGraph g = measured_layered_dag(40, 2);
    const Cluster cl = bench_star_cluster(4);
    SimGridEvaluator s(small_pool(2));
    std::vector<Placement> batch;
    for (int i = 0; i < 4; ++i) batch.push_back(random_placement(g, 4, i));
    s.evaluate_batch(g, cl, batch);
    EXPECT_FALSE(child_pids().empty());
  }
  EXPECT_TRUE(child_pids().empty());
}

}  // namespace
}  // namespace aware
