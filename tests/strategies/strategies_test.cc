// Strategy rewrites: hand-computed data-parallel steps on a two-layer MLP, the
// shapes of each collective, then properties on zoo models and generated graphs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/evaluator.h"
#include "core/formats.h"
#include "datasets/families.h"
#include "datasets/zoo.h"
#include "strategies/rewrite.h"
#include "strategies/strategy.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

using testing::timed_op;

// A two-layer MLP training step with batch 8. Costs are measured times (they scale
// with the batch share); weights 4000 and 2000 bytes.
//   x, w1 -> fc1(40) ; fc1, w2 -> fc2(20) -> loss(4)
//   loss, w2 -> fc2/grad_in(20) ; loss, fc1 -> fc2/grad_w(20, out 2000)
//   fc2/grad_in, x -> fc1/grad_w(40, out 4000)
//   w1, fc1/grad_w -> w1/update(10) ; w2, fc2/grad_w -> w2/update(5)
OpGraph mlp2() {
  OpGraph g("mlp2");
  g.set_batch(8);
  auto op = [&](const std::string& name, const std::string& type, Phase phase, double us,
                double out, double params = 0) {
    Op o = timed_op(name, us, out, params);
    o.type = type;
    o.phase = phase;
    if (us == 0) o.compute_us = -1;
    return g.add_op(o);
  };
  const int x = op("x", "Placeholder", Phase::kForward, 0, 800);
  const int w1 = op("w1", "VariableV2", Phase::kForward, 0, 4000, 4000);
  const int w2 = op("w2", "VariableV2", Phase::kForward, 0, 2000, 2000);
  const int fc1 = op("fc1", "MatMul", Phase::kForward, 40, 400);
  const int fc2 = op("fc2", "MatMul", Phase::kForward, 20, 80);
  const int loss = op("loss", "Xent", Phase::kForward, 4, 8);
  const int g2i = op("fc2/grad_in", "MatMulGradInput", Phase::kBackward, 20, 400);
  const int g2w = op("fc2/grad_w", "MatMulGradWeight", Phase::kBackward, 20, 2000);
  const int g1w = op("fc1/grad_w", "MatMulGradWeight", Phase::kBackward, 40, 4000);
  const int u1 = op("w1/update", "ApplyGradientDescent", Phase::kUpdate, 10, 0);
  const int u2 = op("w2/update", "ApplyGradientDescent", Phase::kUpdate, 5, 0);
  for (int b : {g2i, g2w}) g.mutable_op(b).forward_of = fc2;
  g.mutable_op(g1w).forward_of = fc1;
  g.mutable_op(u1).forward_of = w1;
  g.mutable_op(u2).forward_of = w2;
  g.add_edge(x, fc1);
  g.add_edge(w1, fc1);
  g.add_edge(fc1, fc2);
  g.add_edge(w2, fc2);
  g.add_edge(fc2, loss);
  g.add_edge(loss, g2i);
  g.add_edge(w2, g2i);
  g.add_edge(loss, g2w);
  g.add_edge(fc1, g2w);
  g.add_edge(g2i, g1w);
  g.add_edge(x, g1w);
  g.add_edge(w1, u1);
  g.add_edge(g1w, u1);
  g.add_edge(w2, u2);
  g.add_edge(g2w, u2);
  g.validate();
  return g;
}

// Devices on one switch, 1000 B/us links with 1 us latency (2 hops between devices:
// 2 us + bytes / 1000), memory so fast that the inserted collective ops cost ~0.
Cluster fast_star(int n) {
  Device d;
  d.name = "dev";
  d.kind = "test";
  d.peak_flops = 1e18;
  d.memory_bytes = 1e9;
  d.memory_Bps = 1e18;
  return star_cluster("star", d, n, "sw", 1e9, 1);
}

double step_us(const StrategyResult& r, const Cluster& c, Trace* trace = nullptr) {
  auto sim = EvaluatorRegistry::instance().create("analytic");
  const StepResult s = sim->evaluate(r.graph, c, r.placement, trace);
  EXPECT_TRUE(s.feasible) << s.infeasible_reason;
  return s.step_time_us;
}

int count_type(const OpGraph& g, const std::string& type) {
  int n = 0;
  for (const Op& op : g.ops()) n += op.type == type;
  return n;
}

// Bytes each device sends in the trace.
std::map<int, double> bytes_sent(const Trace& trace) {
  std::map<int, double> sent;
  for (const TransferSpan& t : trace.transfers) sent[t.src_device] += t.bytes;
  return sent;
}

TEST(StrategySpec, ParsesKindsArgumentsAndOptions) {
  const StrategySpec s = parse_strategy_spec("dp:4,collective=tree,bucket_mb=5");
  EXPECT_EQ(s.kind, "dp");
  EXPECT_EQ(s.argument, "4");
  EXPECT_EQ(s.options.at("collective"), "tree");
  EXPECT_EQ(s.options.at("bucket_mb"), "5");
  EXPECT_EQ(parse_strategy_spec("hybrid:2xm-etf").argument, "2xm-etf");
  EXPECT_THROW(parse_strategy_spec("dq:4"), ConfigError);
  EXPECT_THROW(parse_strategy_spec("dp:4,micro=2"), ConfigError);
  EXPECT_THROW(parse_strategy_spec("dp:4,collective"), ConfigError);
  EXPECT_THROW(parse_strategy_spec("dp:"), ConfigError);
  EXPECT_THROW(parse_strategy_spec("dp:4,overlap=on,overlap=off"), ConfigError);
}

TEST(StrategySpec, SplitsAListKeepingOptionsWithTheirSpec) {
  const auto list = split_strategy_list("dp:ring,dp:4,collective=ps,bucket_mb=1,hybrid:2xm-etf,pipeline");
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[0], "dp:ring");
  EXPECT_EQ(list[1], "dp:4,collective=ps,bucket_mb=1");
  EXPECT_EQ(list[2], "hybrid:2xm-etf");
  EXPECT_EQ(list[3], "pipeline");
}

TEST(BatchRoles, WeightsUpdatesAndGradientsDoNotScale) {
  const OpGraph g = mlp2();
  const auto roles = strategies_detail::classify_batch_roles(g);
  using strategies_detail::Role;
  EXPECT_EQ(roles.role[g.find("w1")], Role::kVariable);
  EXPECT_EQ(roles.role[g.find("w1/update")], Role::kUpdate);
  EXPECT_EQ(roles.role[g.find("fc1")], Role::kModel);
  EXPECT_EQ(roles.role[g.find("x")], Role::kModel);
  EXPECT_FALSE(roles.output_scales[g.find("fc1/grad_w")][0]);  // a weight gradient
  EXPECT_TRUE(roles.output_scales[g.find("fc2/grad_in")][0]);  // an activation gradient
  int gradients = 0;
  for (char c : roles.gradient_edge) gradients += c;
  EXPECT_EQ(gradients, 2);
  const Op half = strategies_detail::scaled_op(g, roles, g.find("fc1/grad_w"), 0.5);
  EXPECT_DOUBLE_EQ(half.compute_us, 20);
  EXPECT_DOUBLE_EQ(half.output_bytes[0], 4000);
}

TEST(DataParallel, SingleDeviceMlpTakesTheSumOfItsOps) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(2);
  const StrategyResult r = apply_strategy(g, c, "single");
  EXPECT_NEAR(step_us(r, c), 159, 1e-3);
}

// dp:2 ring, one bucket of 6000 bytes. Each replica: forward + backward on 4
// samples = 72 us; pack; 2(N-1) = 2 ring steps of a 3000-byte chunk, 2 + 3 us
// each; then the updates (15 us, not scaled): 72 + 5 + 5 + 15 = 97.
TEST(DataParallel, RingOnTwoDevicesByHand) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(2);
  const StrategyResult r = apply_strategy(g, c, "dp:2,collective=ring");
  EXPECT_EQ(r.replicas, 2);
  EXPECT_EQ(r.spec, "dp:2,collective=ring,bucket_mb=25,overlap=on");
  Trace trace;
  EXPECT_NEAR(step_us(r, c, &trace), 97, 1e-3);
  // Each worker sends 2(N-1)/N * W = 6000 bytes.
  for (const auto& [device, bytes] : bytes_sent(trace)) EXPECT_DOUBLE_EQ(bytes, 6000) << device;
  EXPECT_EQ(count_type(r.graph, "RingReduceScatter"), 2);
  EXPECT_EQ(count_type(r.graph, "RingAllGather"), 2);
}

// dp:4: 2 samples per replica, 36 us of forward + backward; chunk 1500 bytes,
// 6 ring steps of 2 + 1.5 us; updates 15: 36 + 21 + 15 = 72.
TEST(DataParallel, RingOnFourDevicesByHand) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(4);
  const StrategyResult r = apply_strategy(g, c, "dp:4");
  Trace trace;
  EXPECT_NEAR(step_us(r, c, &trace), 72, 1e-3);
  const auto sent = bytes_sent(trace);
  ASSERT_EQ(sent.size(), 4u);
  for (const auto& [device, bytes] : sent) EXPECT_DOUBLE_EQ(bytes, 2.0 * 3 / 4 * 6000) << device;
}

// Sharded parameter server on two devices moves the same halves as the ring: 97.
// One reducer: rank 1 ships all 6000 bytes (2 + 6 us) to rank 0 and gets them
// back: 72 + 8 + 8 + 15 = 103, as does the binary tree on two ranks.
TEST(DataParallel, ParameterServerReducerAndTreeByHand) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(2);
  EXPECT_NEAR(step_us(apply_strategy(g, c, "dp:2,collective=ps"), c), 97, 1e-3);
  EXPECT_NEAR(step_us(apply_strategy(g, c, "dp:2,collective=reduce"), c), 103, 1e-3);
  EXPECT_NEAR(step_us(apply_strategy(g, c, "dp:2,collective=tree"), c), 103, 1e-3);
}

TEST(DataParallel, CollectiveShapesOnFourRanks) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(4);
  const StrategyResult ps = apply_strategy(g, c, "dp:4,collective=ps");
  EXPECT_EQ(count_type(ps.graph, "PsPush"), 4);
  EXPECT_EQ(count_type(ps.graph, "PsShardReduce"), 4);
  EXPECT_EQ(count_type(ps.graph, "PsPull"), 4);
  Trace trace;
  step_us(ps, c, &trace);
  // Each worker pushes 3 quarters and serves 3 quarters: 2(N-1)/N * W, like the ring.
  for (const auto& [device, bytes] : bytes_sent(trace)) EXPECT_DOUBLE_EQ(bytes, 9000) << device;

  const StrategyResult reduce = apply_strategy(g, c, "dp:4,collective=reduce");
  EXPECT_EQ(count_type(reduce.graph, "Reduce"), 1);
  trace.clear();
  step_us(reduce, c, &trace);
  const auto sent = bytes_sent(trace);
  EXPECT_DOUBLE_EQ(sent.at(0), 3 * 6000);  // the reducer broadcasts to three
  for (int d = 1; d < 4; ++d) EXPECT_DOUBLE_EQ(sent.at(d), 6000);

  const StrategyResult tree = apply_strategy(g, c, "dp:4,collective=tree");
  EXPECT_EQ(count_type(tree.graph, "TreeReduce"), 4);
  EXPECT_EQ(count_type(tree.graph, "TreeBroadcast"), 4);
}

// Buckets: with overlap, a bucket's exchange starts as soon as its gradients are
// ready, while backward still runs; without, one bucket waits for the whole
// backward pass. On ResNet-50 over 4 K40s the overlapped step is shorter.
TEST(DataParallel, BucketsOverlapTheExchangeWithBackward) {
  const OpGraph mlp = mlp2();
  const Cluster star = fast_star(2);
  EXPECT_EQ(count_type(apply_strategy(mlp, star, "dp:2,overlap=off").graph, "BucketPack"), 2);
  EXPECT_EQ(count_type(apply_strategy(mlp, star, "dp:2,bucket_mb=0.001").graph, "BucketPack"), 4);

  ModelOptions options;
  options.batch = 64;
  const OpGraph g = build_zoo_model("resnet50", options);
  const Cluster c = make_cluster_preset("k40x4");
  const double off = step_us(apply_strategy(g, c, "dp:4,overlap=off"), c);
  const double on = step_us(apply_strategy(g, c, "dp:4,bucket_mb=25"), c);
  EXPECT_LT(on, 0.98 * off) << "overlapped " << on << " us, one bucket " << off << " us";
}

TEST(DataParallel, BaggingHasNoPerStepExchange) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(4);
  const StrategyResult r = apply_strategy(g, c, "bagging:4");
  Trace trace;
  // Each replica alone: 36 us of forward + backward, 15 of updates.
  EXPECT_NEAR(step_us(r, c, &trace), 51, 1e-3);
  EXPECT_TRUE(trace.transfers.empty());
  const StrategyResult avg = apply_strategy(g, c, "bagging:4,average=on");
  EXPECT_EQ(count_type(avg.graph, "ModelAverage"), 1);
  trace.clear();
  step_us(avg, c, &trace);
  EXPECT_EQ(trace.transfers.size(), 3u);  // three replicas' parameters to replica 0
}

TEST(DataParallel, UnevenBatchIsSplitWholeAndSaidSo) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(3);
  const StrategyResult r = apply_strategy(g, c, "dp:3");
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("3 samples"), std::string::npos) << r.notes[0];
  // Replica 0 and 1 take 3 samples, replica 2 takes 2: fc1 costs 15, 15, 10.
  EXPECT_DOUBLE_EQ(r.graph.op(r.graph.find("r0/fc1")).compute_us, 15);
  EXPECT_DOUBLE_EQ(r.graph.op(r.graph.find("r2/fc1")).compute_us, 10);
}

TEST(DataParallel, BadInputIsRefusedInOneLine) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(4);
  auto message = [&](const OpGraph& graph, const std::string& spec) -> std::string {
    try {
      apply_strategy(graph, c, spec);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message(g, "dp:5").find("cluster 'star' has 4"), std::string::npos);
  EXPECT_NE(message(g, "dp:4,collective=mesh").find("collective 'mesh'"), std::string::npos);
  EXPECT_NE(message(g, "hybrid:2xnosuch").find("unknown method 'nosuch'"), std::string::npos);
  EXPECT_NE(message(g, "hybrid:2").find("REPLICASxMETHOD"), std::string::npos);
  OpGraph no_batch = g;
  no_batch.set_batch(0);
  EXPECT_NE(message(no_batch, "dp:2").find("no batch size"), std::string::npos);
  OpGraph small = g;
  small.set_batch(3);
  EXPECT_NE(message(small, "dp:4").find("cannot be split into 4"), std::string::npos);
  EXPECT_NE(message(testing::chain_graph(), "dp:2").find("graph 'chain'"), std::string::npos);
}

TEST(Hybrid, GroupsArePlacedByThePlacerAndExchangeBetweenMatchingDevices) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(4);
  const StrategyResult r = apply_strategy(g, c, "hybrid:2xround-robin");
  EXPECT_EQ(r.replicas, 2);
  EXPECT_EQ(r.devices_used, 4);
  // Replica 1 uses devices 2 and 3, placed as replica 0 on 0 and 1.
  for (int id = 0; id < g.num_ops(); ++id) {
    const int d0 = r.placement[r.graph.find("r0/" + g.op(id).name)];
    const int d1 = r.placement[r.graph.find("r1/" + g.op(id).name)];
    EXPECT_LT(d0, 2);
    EXPECT_EQ(d1, d0 + 2);
  }
  check_placement(r.graph, c, r.placement);
}

// ---- properties on zoo models and generated graphs

std::vector<OpGraph> property_graphs() {
  std::vector<OpGraph> out;
  ModelOptions small;
  small.batch = 12;
  out.push_back(build_zoo_model("resnet50", small));
  out.push_back(build_family_graph("cifar10", 3));
  out.push_back(build_family_graph("ptb", 5));
  return out;
}

// FLOPs of the batch-proportional model ops (replicated = false), or of the ops every
// replica repeats in full: updates and sums of a shared weight's gradients.
double model_flops(const OpGraph& g, bool replicated) {
  const auto roles = strategies_detail::classify_batch_roles(g);
  using strategies_detail::Role;
  double f = 0;
  for (int id = 0; id < g.num_ops(); ++id) {
    if (g.op(id).block == kStrategyBlock) continue;
    const bool repeated = roles.role[id] == Role::kUpdate || roles.role[id] == Role::kParamSide;
    if (repeated == replicated) f += g.op(id).flops;
  }
  return f;
}

TEST(StrategyProperties, DpOneEqualsTheOriginalStep) {
  const Cluster c = make_cluster_preset("k40x4");
  for (const OpGraph& g : property_graphs()) {
    const StrategyResult single = apply_strategy(g, c, "single");
    const StrategyResult dp1 = apply_strategy(g, c, "dp:1");
    EXPECT_NEAR(step_us(dp1, c), step_us(single, c), 1e-6 * step_us(single, c)) << g.name();
  }
}

TEST(StrategyProperties, FlopsAreConservedAndUpdatesReplicated) {
  const Cluster c = make_cluster_preset("k40x4");
  for (const OpGraph& g : property_graphs()) {
    for (const std::string spec : {"dp:3", "dp:4,collective=ps", "bagging:2", "hybrid:2xm-etf"}) {
      const StrategyResult r = apply_strategy(g, c, spec);
      EXPECT_NEAR(model_flops(r.graph, false), model_flops(g, false), 1e-9 * model_flops(g, false))
          << g.name() << " " << spec;
      EXPECT_NEAR(model_flops(r.graph, true), r.replicas * model_flops(g, true),
                  1e-9 * r.replicas * model_flops(g, true) + 1e-9)
          << g.name() << " " << spec;
      EXPECT_EQ(r.graph.batch(), g.batch());
    }
  }
}

TEST(StrategyProperties, EveryRewritePassesTheGraphReader) {
  const Cluster c = make_cluster_preset("k40x4");
  const auto dir = std::filesystem::temp_directory_path() / "aware-strategy-test";
  std::filesystem::create_directories(dir);
  for (const OpGraph& g : property_graphs()) {
    for (const std::string spec : {"dp:4,collective=tree", "dp:2,collective=reduce,overlap=off",
                                   "bagging:3,average=on", "hybrid:2xround-robin"}) {
      const StrategyResult r = apply_strategy(g, c, spec);
      const std::string path = (dir / "rewritten.json").string();
      write_graph_file(r.graph, path);
      const OpGraph back = read_graph_file(path);
      EXPECT_EQ(back.num_ops(), r.graph.num_ops()) << spec;
      EXPECT_EQ(graph_to_json(back).dump(), graph_to_json(r.graph).dump()) << spec;
      check_placement(back, c, r.placement);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(StrategyProperties, ZooGraphsRecordTheirBatch) {
  for (const std::string& name : zoo_model_names()) {
    EXPECT_GT(build_zoo_model(name).batch(), 0) << name;
  }
  for (const std::string& family : family_names()) {
    EXPECT_GT(build_family_graph(family, 1).batch(), 0) << family;
  }
}

}  // namespace
}  // namespace aware
