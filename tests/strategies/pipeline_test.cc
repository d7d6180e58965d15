// The pipeline rewrite: a hand-drawn GPipe schedule, the bubble formula, stages,
// FLOPs and bad input.
#include <gtest/gtest.h>

#include <algorithm>

#include "strategies/schedule_chart.h"
#include "tests/strategies/strategy_test_support.h"

namespace aware {
namespace {

using namespace strategy_tests;
using testing::timed_op;

// ---- pipeline

// A two-layer chain with batch 2, measured costs at the whole batch:
//   x(0), w1 -> f1(20, out 2000) ; f1, w2 -> f2(20, out 2000)
//   f2, w2 -> b2(40; out 0: 2000 to b1, out 1: the 1000-byte gradient of w2)
//   b2:0, x -> b1(40; the 1000-byte gradient of w1) ; u1(4), u2(2)
OpGraph pipe_chain() {
  OpGraph g("pipe-chain");
  g.set_batch(2);
  auto op = [&](const std::string& name, const std::string& type, Phase phase, double us,
                std::vector<double> out, double params = 0) {
    Op o = timed_op(name, us, 0, params);
    o.output_bytes = std::move(out);
    o.type = type;
    o.phase = phase;
    return g.add_op(o);
  };
  const int x = op("x", "Placeholder", Phase::kForward, 0, {100});
  const int w1 = op("w1", "VariableV2", Phase::kForward, 0, {1000}, 1000);
  const int w2 = op("w2", "VariableV2", Phase::kForward, 0, {1000}, 1000);
  const int f1 = op("f1", "MatMul", Phase::kForward, 20, {2000});
  const int f2 = op("f2", "MatMul", Phase::kForward, 20, {2000});
  const int b2 = op("b2", "MatMulGrad", Phase::kBackward, 40, {2000, 1000});
  const int b1 = op("b1", "MatMulGrad", Phase::kBackward, 40, {1000});
  const int u1 = op("u1", "ApplyGradientDescent", Phase::kUpdate, 4, {0});
  const int u2 = op("u2", "ApplyGradientDescent", Phase::kUpdate, 2, {0});
  g.mutable_op(b2).forward_of = f2;
  g.mutable_op(b1).forward_of = f1;
  g.mutable_op(u1).forward_of = w1;
  g.mutable_op(u2).forward_of = w2;
  g.add_edge(x, f1);
  g.add_edge(w1, f1);
  g.add_edge(f1, f2);
  g.add_edge(w2, f2);
  g.add_edge(f2, b2);
  g.add_edge(w2, b2);
  g.add_edge(b2, b1, 0);
  g.add_edge(x, b1);
  g.add_edge(w1, u1);
  g.add_edge(b1, u1);
  g.add_edge(w2, u2);
  g.add_edge(b2, u2, 1);
  g.validate();
  return g;
}

// pipeline:2,micro=2 on fast_star(2) (a cross-device tensor: 2 us + bytes/1000).
// Cut: forward costs x 0, f1 20, f2 20 -> stage 0 {x, f1, w1, b1, u1}, stage 1
// {f2, w2, b2, u2}. Each micro-batch has 1 sample: f 10 us, b 20 us, a 1000-byte
// activation (3 us). GPipe schedule:
//   stage 0: m0/f1 0-10, m1/f1 10-20 | m1/b1 56-76, m0/b1 76-96 | acc, u1 96-100
//   link   : m0/f1 -> 10-13, m1/f1 -> 20-23 ; m1/b2 -> 53-56, m0/b2 -> 73-76
//   stage 1: m0/f2 13-23, m1/f2 23-33 | m1/b2 33-53, m0/b2 53-73 | acc, u2 73-75
// Step 100 us; the two accumulations cost ~0 on these devices.
TEST(Pipeline, GPipeScheduleOnTwoStagesByHand) {
  const OpGraph g = pipe_chain();
  const Cluster c = fast_star(2);
  const StrategyResult r = apply_strategy(g, c, "pipeline:2,micro=2");
  EXPECT_EQ(r.spec, "pipeline:2,micro=2");
  EXPECT_EQ(r.replicas, 1);
  EXPECT_EQ(r.devices_used, 2);
  EXPECT_EQ(r.global_batch, 2);
  EXPECT_EQ(r.graph.batch(), 2);
  EXPECT_EQ(count_type(r.graph, "AccumulateGrad"), 2);
  // Stage 0: F0|F1, F1|B1, B1|B0; stage 1 likewise.
  EXPECT_EQ(count_type(r.graph, "Barrier"), 6);
  Trace trace;
  EXPECT_NEAR(step_us(r, c, &trace), 100, 1e-6);
  const std::map<std::string, std::pair<double, int>> expected = {
      {"m0/f1", {0, 0}},   {"m1/f1", {10, 0}},  {"m0/f2", {13, 1}}, {"m1/f2", {23, 1}},
      {"m1/b2", {33, 1}},  {"m0/b2", {53, 1}},  {"m1/b1", {56, 0}}, {"m0/b1", {76, 0}},
      {"u2", {73, 1}},     {"u1", {96, 0}}};
  for (const auto& [name, when] : expected) {
    const int id = r.graph.find(name);
    ASSERT_GE(id, 0) << name;
    EXPECT_EQ(r.placement[id], when.second) << name;
    EXPECT_NEAR(trace.ops[id].start_us, when.first, 1e-6) << name;
  }
  EXPECT_EQ(r.placement[r.graph.find("w1")], 0);
  EXPECT_EQ(r.placement[r.graph.find("w2")], 1);
  // Four activations cross, 1000 bytes each; the weights stay with their stage.
  EXPECT_EQ(trace.transfers.size(), 4u);
  for (const auto& t : trace.transfers) EXPECT_DOUBLE_EQ(t.bytes, 1000);
}

TEST(Pipeline, OneStageOneMicroBatchIsTheSingleDeviceStep) {
  const Cluster star = fast_star(2);
  EXPECT_NEAR(step_us(apply_strategy(mlp2(), star, "pipeline:1,micro=1"), star),
              step_us(apply_strategy(mlp2(), star, "single"), star), 1e-9);
  const Cluster c = make_cluster_preset("k40x4");
  for (const OpGraph& g : property_graphs()) {
    const double single = step_us(apply_strategy(g, c, "single"), c);
    EXPECT_NEAR(step_us(apply_strategy(g, c, "pipeline:1,micro=1"), c), single, 1e-6 * single)
        << g.name();
  }
}

// S layers of equal cost, forward F and backward B at the whole batch, one per
// stage; free links and free updates. In GPipe order the last stage finishes its
// forward of micro-batch M-1 at (M + S - 1) F / M, and the backward wave runs the
// same way back, so step = (M + S - 1)(F + B) / M while one stage's own work is
// ideal = F + B:
//   (step - ideal) / ideal = (S - 1) / M            (Megatron-LM's bubble / ideal)
//   (step - ideal) / step  = (S - 1) / (M + S - 1)  (GPipe's bubble fraction)
OpGraph balanced_chain(int layers, double batch, double forward_us, double backward_us,
                       double activation_bytes = 16) {
  OpGraph g("balanced-" + std::to_string(layers));
  g.set_batch(batch);
  Op x = timed_op("x", 0, 16);
  x.type = "Placeholder";
  int previous = g.add_op(x);
  const int input = previous;
  std::vector<int> fwd, var;
  for (int l = 0; l < layers; ++l) {
    Op w = timed_op("w" + std::to_string(l), 0, 64, 64);
    w.type = "VariableV2";
    var.push_back(g.add_op(w));
    const int f = g.add_op(timed_op("f" + std::to_string(l), forward_us, activation_bytes));
    g.add_edge(previous, f);
    g.add_edge(var.back(), f);
    fwd.push_back(f);
    previous = f;
  }
  for (int l = layers - 1; l >= 0; --l) {
    Op b = timed_op("b" + std::to_string(l), backward_us);
    b.output_bytes = {16, 64};
    b.phase = Phase::kBackward;
    b.forward_of = fwd[l];
    const int id = g.add_op(b);
    g.add_edge(previous, id, 0);
    g.add_edge(l == 0 ? input : fwd[l - 1], id);
    Op u = timed_op("u" + std::to_string(l), 0, 0);
    u.phase = Phase::kUpdate;
    u.forward_of = var[l];
    const int update = g.add_op(u);
    g.add_edge(var[l], update);
    g.add_edge(id, update, 1);
    previous = id;
  }
  g.validate();
  return g;
}

TEST(Pipeline, BubbleIsStagesMinusOneOverMicroBatches) {
  for (int stages : {2, 4}) {
    const Cluster c = free_star(stages);
    const OpGraph g = balanced_chain(stages, 16, 16, 32);
    const double ideal = 16 + 32;
    for (int micro : {1, 2, 4, 8, 16}) {
      const StrategyResult r =
          apply_strategy(g, c, "pipeline:" + std::to_string(stages) + ",micro=" + std::to_string(micro));
      const double step = step_us(r, c);
      std::printf("pipeline S=%d M=%2d: step %.3f us, ideal %.0f, bubble/ideal %.4f = (S-1)/M %.4f, "
                  "bubble/step %.4f = (S-1)/(M+S-1) %.4f\n",
                  stages, micro, step, ideal, (step - ideal) / ideal, (stages - 1.0) / micro,
                  (step - ideal) / step, (stages - 1.0) / (micro + stages - 1));
      EXPECT_NEAR((step - ideal) / ideal, (stages - 1.0) / micro, 1e-6) << stages << " " << micro;
      EXPECT_NEAR((step - ideal) / step, (stages - 1.0) / (micro + stages - 1), 1e-6);
    }
  }
  // The reference check: p = 4, m = 8 leaves 3/11 of the step idle.
  const Cluster c = free_star(4);
  const double step = step_us(apply_strategy(balanced_chain(4, 16, 16, 32), c, "pipeline:4,micro=8"), c);
  EXPECT_NEAR((step - 48) / step, 3.0 / 11, 1e-6);
}

// 1F1B (Narayanan et al. 2021): the same bubble as GPipe on uniform stages, the
// hand-listed order on each stage, and fewer activations held (a stage holds at most
// p micro-batches' where GPipe holds all M).
TEST(Pipeline, OneForwardOneBackwardKeepsTheBubbleAndHoldsFewerActivations) {
  for (int stages : {2, 4}) {
    const Cluster c = free_star(stages);
    // Activations (16,000 bytes at the whole batch) well above the weights' 64.
    const OpGraph g = balanced_chain(stages, 16, 16, 32, 16000);
    for (int micro : {4, 8}) {
      const std::string base = "pipeline:" + std::to_string(stages) + ",micro=" + std::to_string(micro);
      const StrategyResult gpipe = apply_strategy(g, c, base);
      const StrategyResult one = apply_strategy(g, c, base + ",schedule=1f1b");
      EXPECT_EQ(one.spec, base + ",schedule=1f1b");
      auto ev = EvaluatorRegistry::instance().create("analytic");
      const StepResult a = ev->evaluate(gpipe.graph, c, gpipe.placement);
      const StepResult b = ev->evaluate(one.graph, c, one.placement);
      EXPECT_NEAR(b.step_time_us, a.step_time_us, 1e-6) << base;
      // In this chain a stage's backward reads the activation its forward received, so
      // the activations are held where they arrive: the highest peak over the stages.
      const auto highest = [](const StepResult& x) {
        return *std::max_element(x.peak_memory_bytes.begin(), x.peak_memory_bytes.end());
      };
      EXPECT_LT(highest(b), highest(a)) << base;
    }
  }
  // Two stages, four micro-batches: stage 0 runs F0 F1 B0 F2 B1 F3 B2 B3 (one
  // warm-up forward), stage 1 F0 B0 F1 B1 F2 B2 F3 B3.
  const Cluster c = free_star(2);
  const StrategyResult r = apply_strategy(balanced_chain(2, 16, 16, 32), c, "pipeline:2,micro=4,schedule=1f1b");
  Trace trace;
  step_us(r, c, &trace);
  const auto start = [&](const std::string& name) { return trace.ops[r.graph.find(name)].start_us; };
  EXPECT_LT(start("m1/f0"), start("m0/b0"));
  EXPECT_LT(start("m0/b0"), start("m2/f0"));
  EXPECT_LT(start("m2/f0"), start("m1/b0"));
  EXPECT_LT(start("m0/b1"), start("m1/f1"));
  EXPECT_THROW(apply_strategy(balanced_chain(2, 16, 16, 32), c, "pipeline:2,micro=4,schedule=zigzag"), ConfigError);
}

// Interleaved 1F1B (Narayanan et al. 2021, Section 2.2.2): S devices, V model
// chunks each (S·V equal layers, chunk j of device s is layer j·S + s), M
// micro-batches in groups of S. The bubble shrinks V times: (S − 1)/(M·V) of the
// ideal. Device 0's order for S = 2, V = 2, M = 4 by hand: warm-up forwards
// 2(S − 1) + (V − 1)S = 4 — F0c0 F1c0 F0c1 F1c1 — then F2c0 B0c1, F3c0 B1c1,
// F2c1 B0c0, F3c1 B1c0, then B2c1 B3c1 B2c0 B3c0.
TEST(Pipeline, InterleavedShrinksTheBubbleByItsChunks) {
  for (int stages : {2, 4}) {
    for (int chunks : {2, 3}) {
      const Cluster c = free_star(stages);
      const OpGraph g = balanced_chain(stages * chunks, 16, 16, 32);
      const double ideal = chunks * (16 + 32);  // each device's own V layers
      for (int micro : {stages, 2 * stages, 4 * stages}) {
        const std::string spec = "pipeline:" + std::to_string(stages) + ",micro=" + std::to_string(micro) +
                                 ",schedule=interleaved:" + std::to_string(chunks);
        const StrategyResult r = apply_strategy(g, c, spec);
        EXPECT_EQ(r.spec, spec);
        const double step = step_us(r, c);
        std::printf("interleaved S=%d V=%d M=%2d: step %.3f us, bubble/ideal %.4f, (S-1)/(M V) %.4f\n", stages,
                    chunks, micro, step, (step - ideal) / ideal, (stages - 1.0) / (micro * chunks));
        EXPECT_NEAR((step - ideal) / ideal, (stages - 1.0) / (micro * chunks), 1e-6) << spec;
        // Layer l runs on device l mod S.
        for (int l = 0; l < stages * chunks; ++l)
          EXPECT_EQ(r.placement[r.graph.find("m0/f" + std::to_string(l))], l % stages) << spec;
      }
    }
  }
  const Cluster c = free_star(2);
  const StrategyResult r =
      apply_strategy(balanced_chain(4, 16, 16, 32), c, "pipeline:2,micro=4,schedule=interleaved:2");
  Trace trace;
  step_us(r, c, &trace);
  const auto start = [&](const std::string& name) { return trace.ops[r.graph.find(name)].start_us; };
  // Device 0 holds layers 0 (chunk 0) and 2 (chunk 1).
  const std::vector<std::string> order = {"m0/f0", "m1/f0", "m0/f2", "m1/f2", "m2/f0", "m0/b2", "m3/f0", "m1/b2",
                                          "m2/f2", "m0/b0", "m3/f2", "m1/b0", "m2/b2", "m3/b2", "m2/b0", "m3/b0"};
  for (size_t i = 0; i + 1 < order.size(); ++i) EXPECT_LT(start(order[i]), start(order[i + 1])) << order[i];
  EXPECT_THROW(apply_strategy(balanced_chain(4, 16, 16, 32), c, "pipeline:2,micro=3,schedule=interleaved:2"),
               ConfigError);  // micro-batches not in groups of the stages
  EXPECT_THROW(apply_strategy(balanced_chain(4, 16, 16, 32), c, "pipeline:2,micro=4,schedule=interleaved:1"),
               ConfigError);
  EXPECT_THROW(apply_strategy(balanced_chain(2, 16, 16, 32), c, "pipeline:2,micro=4,schedule=interleaved:2"),
               ConfigError);  // 3 forward ops (the input and 2 layers) for 4 virtual stages
}

TEST(Pipeline, DefaultsAndStages) {
  const OpGraph g = balanced_chain(4, 64, 10, 20);
  const Cluster c = free_star(4);
  const StrategyResult r = apply_strategy(g, c, "pipeline");
  EXPECT_EQ(r.spec, "pipeline:4,micro=16");  // every device, 4 x S micro-batches
  for (int l = 0; l < 4; ++l) {
    EXPECT_EQ(r.placement[r.graph.find("m0/f" + std::to_string(l))], l);
    EXPECT_EQ(r.placement[r.graph.find("m5/b" + std::to_string(l))], l);
    EXPECT_EQ(r.placement[r.graph.find("w" + std::to_string(l))], l);
    EXPECT_EQ(r.placement[r.graph.find("u" + std::to_string(l))], l);
  }
  // A batch smaller than 4 x S: one sample per micro-batch.
  OpGraph small = g;
  small.set_batch(6);
  EXPECT_EQ(apply_strategy(small, c, "pipeline:4").spec, "pipeline:4,micro=6");
  // Uneven micro-batches are said so.
  const StrategyResult uneven = apply_strategy(g, c, "pipeline:2,micro=5");
  EXPECT_NE(uneven.notes[0].find("micro-batches"), std::string::npos) << uneven.notes[0];
  bool recompute_note = false;
  for (const auto& note : uneven.notes) recompute_note |= note.find("re-materialisation") != std::string::npos;
  EXPECT_TRUE(recompute_note);
}


TEST(Pipeline, FlopsAreConservedAndUpdatesRunOnce) {
  using strategies_detail::Role;
  const Cluster c = make_cluster_preset("k40x4");
  for (const OpGraph& g : property_graphs()) {
    const auto before = flops_by_role(g);
    for (int micro : {3, 4}) {
      const StrategyResult r = apply_strategy(g, c, "pipeline:4,micro=" + std::to_string(micro));
      auto after = flops_by_role(r.graph);
      auto original = before;
      EXPECT_NEAR(after[Role::kModel], original[Role::kModel], 1e-9 * original[Role::kModel]) << g.name();
      EXPECT_NEAR(after[Role::kUpdate], original[Role::kUpdate], 1e-9 * original[Role::kUpdate] + 1e-9)
          << g.name();
      // A shared weight's gradient sum runs once per micro-batch.
      EXPECT_NEAR(after[Role::kParamSide], micro * original[Role::kParamSide],
                  1e-9 * micro * original[Role::kParamSide] + 1e-9)
          << g.name();
      check_placement(r.graph, c, r.placement);
      std::set<int> used(r.placement.device_of_op.begin(), r.placement.device_of_op.end());
      EXPECT_EQ(used.size(), 4u) << g.name();
    }
  }
}

TEST(Pipeline, BadInputIsRefusedInOneLine) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(2);
  auto message = [&](const OpGraph& graph, const std::string& spec) {
    return strategy_error(graph, c, spec);
  };
  EXPECT_NE(message(g, "pipeline:3").find("cluster 'star' has 2"), std::string::npos);
  EXPECT_NE(message(g, "pipeline:2,micro=9").find("cannot be split into 9"), std::string::npos);
  EXPECT_NE(message(g, "pipeline:2,micro=0").find("not a whole number"), std::string::npos);
  EXPECT_NE(message(g, "pipeline:x").find("stage count 'x'"), std::string::npos);
  EXPECT_NE(message(g, "pipeline:2,schedule=zigzag").find("schedule must be gpipe, 1f1b or interleaved:V"), std::string::npos);
  EXPECT_NE(message(g, "pipeline:2,virtual=2").find("takes no option 'virtual'"), std::string::npos);
  OpGraph no_batch = g;
  no_batch.set_batch(0);
  EXPECT_NE(message(no_batch, "pipeline:2").find("no batch size"), std::string::npos);
}

// The schedule read back from the trace (strategies/schedule_chart.h, the GUI's
// pipeline view): on the balanced chain, S = 4 stages, M = 8, free links, each
// micro-batch's pass takes 16/8 = 2 us forward and 4 backward on every stage.
std::string pass_order(const ScheduleLane& lane) {
  std::string out;
  for (const PassBar& bar : lane.bars) out += (bar.forward ? "F" : "B") + std::to_string(bar.micro) + " ";
  return out;
}

TEST(ScheduleChart, GPipeAndOneForwardOneBackwardByHand) {
  const Cluster c = free_star(4);
  const OpGraph g = balanced_chain(4, 16, 16, 32);
  auto sim = EvaluatorRegistry::instance().create("analytic");
  for (const std::string schedule : {"gpipe", "1f1b"}) {
    const StrategyResult r = apply_strategy(g, c, "pipeline:4,micro=8,schedule=" + schedule);
    Trace trace;
    sim->evaluate(r.graph, c, r.placement, &trace);
    const ScheduleChart chart = schedule_chart(r.graph, r.placement, trace);
    ASSERT_EQ(chart.lanes.size(), 4u) << schedule;
    EXPECT_EQ(chart.micro_batches, 8);
    for (int s = 0; s < 4; ++s) {
      const ScheduleLane& lane = chart.lanes[s];
      EXPECT_EQ(lane.device, s);
      ASSERT_EQ(lane.bars.size(), 16u);
      EXPECT_NEAR(lane.busy_us, 8 * (2 + 4), 1e-9);
      // Stage s's first forward starts when stage s-1's ends.
      EXPECT_NEAR(lane.bars.front().start_us, 2.0 * s, 1e-9) << schedule;
    }
    // Each lane busy 48 of the span (M + S - 1)(F + B) / M = 66: a bubble of 3/11.
    EXPECT_NEAR(chart.bubble_fraction, 3.0 / 11, 1e-9) << schedule;
    if (schedule == "gpipe") {
      EXPECT_EQ(pass_order(chart.lanes[0]), "F0 F1 F2 F3 F4 F5 F6 F7 B7 B6 B5 B4 B3 B2 B1 B0 ");
    } else {
      // 1F1B: stage 0 warms up with S - 1 = 3 forwards, the last stage with none.
      EXPECT_EQ(pass_order(chart.lanes[0]), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7 ");
      EXPECT_EQ(pass_order(chart.lanes[3]), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 ");
    }
  }
  // Not a pipeline: no lanes.
  Trace trace;
  const Placement one = single_device_placement(g, 0);
  sim->evaluate(g, c, one, &trace);
  EXPECT_TRUE(schedule_chart(g, one, trace).lanes.empty());
}

TEST(ScheduleChart, TagsAreReadFromTheLeadingSegmentsOnly) {
  EXPECT_EQ(micro_of_name("r1/m3/t0/layer0/attention/query"), 3);
  EXPECT_EQ(micro_of_name("recompute/r0/m12/layer1/mlp/fc1"), 12);
  EXPECT_EQ(micro_of_name("m0/tp/allreduce/layer0/attention/output/sum/t1"), 0);
  EXPECT_EQ(micro_of_name("layer0/m1/x"), -1);
  EXPECT_EQ(micro_of_name("r1/t0/layer0/attention/query/kernel"), -1);
  EXPECT_EQ(replica_of_name("r1/m3/t0/layer0"), 1);
  EXPECT_EQ(replica_of_name("m3/t0/layer0"), 0);
  EXPECT_EQ(rank_of_name("r1/m3/t5/layer0"), 5);
  EXPECT_EQ(rank_of_name("m0/tp/allreduce/x/sum/t1"), 0);
}

}  // namespace
}  // namespace aware
