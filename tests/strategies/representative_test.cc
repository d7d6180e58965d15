// One representative pipeline (strategies/representative.h): the composition by
// hand on equal blocks, then the whole simulation against the full rewrite's step
// on the same evaluator (exact where nothing is composed, within 1% or as
// measured elsewhere), then scale and bad input.
#include "strategies/representative.h"

#include <gtest/gtest.h>

#include <tuple>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "datasets/load.h"
#include "tests/strategies/strategy_test_support.h"

namespace aware {
namespace {

using namespace strategy_tests;

std::vector<PipelineBlocks> equal_blocks(int stages, double f, double b) {
  std::vector<PipelineBlocks> blocks(stages);
  for (PipelineBlocks& x : blocks) x.forward_us = f, x.backward_us = b, x.last_us = b;
  return blocks;
}

// Each boundary's tensors leave when the pass ends (f or b after it starts) and
// take delta to cross.
std::vector<PipelineLink> chain(int stages, double f, double b, double delta) {
  std::vector<PipelineLink> links;
  for (int s = 0; s + 1 < stages; ++s) {
    links.push_back({s, s + 1, true, f + delta, f + delta, delta});
    links.push_back({s + 1, s, false, b + delta, b + delta, delta});
  }
  return links;
}

// Equal blocks f and b on p stages, m micro-batches, free links: both schedules
// end at (m + p - 1)(f + b), a bubble of (p - 1)/m of the ideal m(f + b); GPipe
// holds all m micro-batches on every stage, 1F1B p - s on stage s.
TEST(Representative, EqualBlocksGiveTheTextbookBubble) {
  const int p = 4, m = 8;
  const double f = 10, b = 20;
  for (const std::string schedule : {"gpipe", "1f1b"}) {
    const ComposedSchedule c = compose_schedule(equal_blocks(p, f, b), chain(p, f, b, 0), schedule, m);
    EXPECT_DOUBLE_EQ(c.step_us, (m + p - 1) * (f + b)) << schedule;
    EXPECT_DOUBLE_EQ((c.step_us - m * (f + b)) / (m * (f + b)), (p - 1.0) / m) << schedule;
    for (int s = 0; s < p; ++s) EXPECT_EQ(c.in_flight[s], schedule == "gpipe" ? m : p - s) << schedule << s;
  }
}

// Interleaving (Megatron-LM's interleaved 1F1B): p stages of v chunks, equal
// blocks f and b per chunk, free links from piece c to c + 1 (stage p - 1's chunk j
// feeds stage 0's chunk j + 1): the bubble shrinks to (p - 1)/(m v) of the ideal
// m v (f + b), the step to (m v + p - 1)(f + b).
TEST(Representative, InterleavedBlocksGiveTheSmallerBubble) {
  for (const auto& [p, v, m] : std::vector<std::tuple<int, int, int>>{{2, 2, 4}, {4, 2, 8}, {2, 3, 4}}) {
    const double f = 10, b = 20;
    const ComposedSchedule c =
        compose_schedule(equal_blocks(p * v, f, b), chain(p * v, f, b, 0), "interleaved", m, v);
    EXPECT_DOUBLE_EQ(c.step_us, (m * v + p - 1) * (f + b)) << p << " " << v << " " << m;
    EXPECT_DOUBLE_EQ((c.step_us - m * v * (f + b)) / (m * v * (f + b)), (p - 1.0) / (m * v));
  }
  EXPECT_THROW(compose_schedule(equal_blocks(5, 1, 1), {}, "interleaved", 4, 2), ConfigError);  // 5 is not p x 2
}

// With links of delta (<= f, b) each way, GPipe's stage 0 ends 2(p - 1) delta
// later: the first forward and the last backward cross every boundary once.
TEST(Representative, LinksAddTheirCrossingsOnce) {
  const int p = 3, m = 5;
  const double f = 10, b = 20, delta = 4;
  const ComposedSchedule c = compose_schedule(equal_blocks(p, f, b), chain(p, f, b, delta), "gpipe", m);
  EXPECT_DOUBLE_EQ(c.end_us[0], (m + p - 1) * (f + b) + 2 * (p - 1) * delta);
  // The last stage's last backward ends when its own passes do.
  EXPECT_DOUBLE_EQ(c.end_us[p - 1], (p - 1) * (f + delta) + m * (f + b));
}

// A link slower than the blocks paces the pipeline: one micro-batch per busy_us.
TEST(Representative, ASlowLinkPacesTheStagesAfterIt) {
  std::vector<PipelineBlocks> blocks = equal_blocks(2, 10, 0);
  std::vector<PipelineLink> links = {{0, 1, true, 40, 40, 30}};
  const ComposedSchedule c = compose_schedule(blocks, links, "gpipe", 4);
  // Arrivals at 40, then 30 apart: the last forward on stage 1 starts at 130.
  EXPECT_DOUBLE_EQ(c.passes_end_us[1], 130 + 10 + 0);
}

TEST(Representative, ComposeRefusesBadLinks) {
  EXPECT_THROW(compose_schedule(equal_blocks(2, 1, 1), {{0, 2, true, 0, 0, 0}}, "gpipe", 2), ConfigError);
  // A forward link against the pipeline's direction deadlocks 1F1B's order.
  std::vector<PipelineLink> against = chain(2, 1, 1, 0);
  against.push_back({1, 0, true, 0, 0, 0});
  EXPECT_THROW(compose_schedule(equal_blocks(2, 1, 1), against, "1f1b", 2), ConfigError);
}

const char* kGpt = "zoo:gpt:layers=4,hidden=256,heads=4,seq_len=128,vocab=1000,batch=16";
const char* kGpt8 = "zoo:gpt:layers=8,hidden=256,heads=8,seq_len=128,vocab=1000,batch=64";

double full_step(const OpGraph& g, const Cluster& c, const std::string& spec) {
  return step_us(apply_strategy(g, c, spec), c);
}

double representative_step(const OpGraph& g, const Cluster& c, const std::string& spec) {
  auto sim = EvaluatorRegistry::instance().create("analytic");
  const RepresentativeResult r = simulate_representative(g, c, spec, *sim);
  EXPECT_TRUE(r.feasible) << spec << ": " << r.infeasible_reason;
  return r.step_time_us;
}

// One stage: the passes run one after another, the last with the step's tail (the
// accumulations the updates wait on, the replicas' rings on one node at the ring
// formula's time): the representative is the full step, with several
// micro-batches, replicas and tensor-parallel ranks too.
TEST(Representative, OneStageEqualsTheFullRewrite) {
  const OpGraph g = load_graph(kGpt);
  const Cluster c = load_cluster("preset:dgx-a100-pod:2");
  for (const std::string spec : {"3d:dp=1,tp=1,pp=1,micro=1", "3d:dp=1,tp=1,pp=1,micro=4", "3d:dp=4,tp=1,pp=1,micro=1",
                                 "3d:dp=1,tp=8,pp=1,micro=1", "3d:dp=2,tp=4,pp=1,micro=1",
                                 "3d:dp=4,tp=1,pp=1,micro=1,zero=1", "3d:dp=4,tp=1,pp=1,micro=4",
                                 "3d:dp=1,tp=2,pp=1,micro=2", "3d:dp=2,tp=4,pp=1,micro=2",
                                 "3d:dp=2,tp=4,pp=1,micro=2,accumulate=sum"}) {
    const double full = full_step(g, c, spec), rep = representative_step(g, c, spec);
    EXPECT_NEAR(rep, full, 1e-6 * full) << spec;
  }
  // An embedding's sparse gradient accumulated over a replica's micro-batches holds
  // a row per token of its own samples (16 / 2 replicas x 128 tokens x 256 floats),
  // not the global batch's.
  {
    const StrategyResult r = apply_strategy(g, c, "3d:dp=2,tp=1,pp=1,micro=2");
    const int acc = r.graph.find("r1/pipeline/embedding/position_table/ApplyAdam/accumulate");
    ASSERT_GE(acc, 0);
    EXPECT_DOUBLE_EQ(r.graph.op(acc).output_bytes[0], 8.0 * 128 * 256 * 4);
  }
  // ZeRO-1 saves the same optimizer state in both (the representative leaves out
  // the exchange's own buffers, a bucket's worth, from both peaks).
  {
    auto sim = EvaluatorRegistry::instance().create("analytic");
    const auto full_peak = [&](const std::string& spec) {
      const StrategyResult r = apply_strategy(g, c, spec);
      const StepResult step = sim->evaluate(r.graph, c, r.placement);
      return *std::max_element(step.peak_memory_bytes.begin(), step.peak_memory_bytes.end());
    };
    const auto rep_peak = [&](const std::string& spec) {
      return simulate_representative(g, c, spec, *sim).peak_memory_bytes;
    };
    const double full_saving = full_peak("3d:dp=4,tp=1,pp=1,micro=1") - full_peak("3d:dp=4,tp=1,pp=1,micro=1,zero=1");
    const double rep_saving = rep_peak("3d:dp=4,tp=1,pp=1,micro=1") - rep_peak("3d:dp=4,tp=1,pp=1,micro=1,zero=1");
    EXPECT_GT(full_saving, 0);
    EXPECT_NEAR(rep_saving, full_saving, 0.01 * full_saving);
  }
  // Eight replicas of a whole node, their rings across eight nodes.
  const OpGraph g8 = load_graph(kGpt8);
  const Cluster c8 = load_cluster("preset:dgx-a100-pod:8");
  const double full = full_step(g8, c8, "3d:dp=8,tp=8,pp=1,micro=1");
  EXPECT_NEAR(representative_step(g8, c8, "3d:dp=8,tp=8,pp=1,micro=1"), full, 0.002 * full);
}

// Pipelines, with and without replicas, tensor parallelism and recomputation: the
// configurations from the equivalence table (experiments/representative_check.py),
// every one within 1% of the full rewrite.
TEST(Representative, PipelinesWithinOnePercentOfTheFullRewrite) {
  const OpGraph g = load_graph(kGpt);
  const Cluster c = load_cluster("preset:dgx-a100-pod:2");
  for (const std::string spec : {"3d:dp=1,tp=1,pp=2,micro=2", "3d:dp=2,tp=2,pp=2,micro=4,schedule=1f1b",
                                 "3d:dp=2,tp=2,pp=2,micro=4,accumulate=sum", "3d:dp=1,tp=1,pp=4,micro=8",
                                 "3d:dp=2,tp=2,pp=2,micro=4,zero=1", "3d:dp=1,tp=1,pp=2,micro=4,schedule=interleaved:2",
                                 "3d:dp=2,tp=2,pp=2,micro=4,schedule=interleaved:2"}) {
    const double full = full_step(g, c, spec), rep = representative_step(g, c, spec);
    EXPECT_NEAR(rep, full, 0.01 * full) << spec;
  }
  const OpGraph g8 = load_graph(kGpt8);
  const Cluster c8 = load_cluster("preset:dgx-a100-pod:8");
  for (const std::string spec : {"3d:dp=1,tp=1,pp=4,micro=8,schedule=1f1b,recompute=full",
                                 "3d:dp=2,tp=1,pp=4,micro=8,schedule=1f1b,recompute=full",
                                 "3d:dp=2,tp=8,pp=4,micro=8,schedule=1f1b,recompute=full",
                                 "3d:dp=2,tp=8,pp=4,micro=8,schedule=1f1b,recompute=full,zero=1",
                                 "3d:dp=16,tp=1,pp=1,micro=1,overlap=off", "3d:dp=2,tp=8,pp=2,micro=4",
                                 "3d:dp=4,tp=4,pp=4,micro=8,schedule=1f1b", "3d:dp=2,tp=8,pp=4,micro=8",
                                 "3d:dp=16,tp=2,pp=2,micro=4,recompute=selective", "3d:dp=16,tp=1,pp=1,micro=1",
                                 "3d:dp=64,tp=1,pp=1,micro=1", "3d:dp=2,tp=2,pp=4,micro=8,schedule=interleaved:2",
                                 "3d:dp=1,tp=4,pp=2,micro=8,schedule=interleaved:2,recompute=full"}) {
    const double full = full_step(g8, c8, spec), rep = representative_step(g8, c8, spec);
    EXPECT_NEAR(rep, full, 0.01 * full) << spec;
  }
}

// Megatron-LM's largest row (1T parameters, t = 8, p = 64, 512 micro-batches per
// replica, 3,072 GPUs) is priced from one replica's blocks: the step it represents
// has hundreds of millions of op instances, the simulation a few hundred thousand.
TEST(Representative, ATrillionParametersOnThreeThousandGpus) {
  const OpGraph g = load_graph("zoo:megatron-1t:bits=16");
  const Cluster c = load_cluster("preset:dgx-a100-pod:384");
  auto sim = EvaluatorRegistry::instance().create("analytic");
  const RepresentativeResult r =
      simulate_representative(g, c, "3d:dp=6,tp=8,pp=64,micro=512,schedule=1f1b,recompute=full", *sim);
  EXPECT_EQ(r.devices_used, 3072);
  EXPECT_EQ(r.stages.size(), 64u);
  EXPECT_GT(r.ops_represented, 100 * r.ops_simulated);
  // 1F1B: stage s holds at most p - s micro-batches.
  for (int s = 0; s < 64; ++s) EXPECT_EQ(r.stages[s].in_flight, 64 - s) << s;
  EXPECT_GT(r.step_time_us, 0);
  EXPECT_LT(r.bubble_fraction, 0.2);  // (p - 1)/m = 12% of the ideal for balanced stages
}

// The 3-D search prunes only what cannot fit or cannot win: its best is the best
// of every candidate simulated, and every simulated step lies above its bound.
TEST(Representative, SearchFindsTheBestOfEveryCandidate) {
  const OpGraph g = load_graph("zoo:gpt:layers=4,hidden=256,heads=8,seq_len=128,vocab=1000,batch=32");
  const Cluster c = load_cluster("preset:dgx-a100-pod:2");
  auto sim = EvaluatorRegistry::instance().create("analytic");
  ThreeDSearchOptions options;
  options.micro_batch_sizes = {1, 2};
  options.recompute = {"none", "full"};
  options.interleave = {1, 2};
  const ThreeDSearchResult r = search_three_d(g, c, *sim, options);
  ASSERT_GE(r.best, 0);
  double best = std::numeric_limits<double>::infinity();
  int pruned = 0;
  for (const ThreeDCandidate& x : r.candidates) {
    const RepresentativeResult full = simulate_representative(g, c, x.spec, *sim);
    EXPECT_GE(full.step_time_us, x.lower_bound_us * (1 - 1e-12)) << x.spec;
    EXPECT_GE(x.estimate_us, x.lower_bound_us) << x.spec;
    if (full.feasible) best = std::min(best, full.step_time_us);
    if (x.status == "ok") EXPECT_DOUBLE_EQ(x.result.step_time_us, full.step_time_us) << x.spec;
    pruned += x.status == "pruned: cannot win";
  }
  EXPECT_DOUBLE_EQ(r.candidates[r.best].result.step_time_us, best);
  for (const ThreeDCandidate& x : r.candidates)
    if (x.status == "pruned: cannot win") EXPECT_GE(x.lower_bound_us, best) << x.spec;
  EXPECT_EQ(r.simulated + pruned, static_cast<int>(r.candidates.size()));
  // 4 layers: pp in 1, 2, 4 only; 16 devices: tp up to 8. Interleaved:2 only where
  // its chunks have whole layers (pp = 2) and micro-batches come in groups of pp.
  int interleaved = 0;
  for (const ThreeDCandidate& x : r.candidates) {
    EXPECT_EQ(x.spec.find("pp=8"), std::string::npos) << x.spec;
    if (x.spec.find("interleaved:2") == std::string::npos) continue;
    ++interleaved;
    EXPECT_NE(x.spec.find("pp=2,"), std::string::npos) << x.spec;
  }
  EXPECT_GT(interleaved, 0);
}

// A model whose weights, gradients and Adam state cannot fit the devices however
// it is split is refused before any simulation.
TEST(Representative, SearchPrunesWhatCannotFit) {
  const OpGraph g = load_graph("zoo:gpt:layers=4,hidden=256,heads=8,seq_len=128,vocab=1000,batch=8");
  Cluster c = load_cluster("preset:dgx-a100-pod:1");
  Cluster small("small-memory");
  Device d = c.device(0);
  d.memory_bytes = 1e6;  // 1 MB per GPU
  for (int i = 0; i < 8; ++i) {
    d.name = "g" + std::to_string(i);
    small.add_device(d);
  }
  small.add_switch("sw");
  for (int i = 0; i < 8; ++i) small.connect("g" + std::to_string(i), "sw", 300e9, 1);
  small.finalize();
  auto sim = EvaluatorRegistry::instance().create("analytic");
  const ThreeDSearchResult r = search_three_d(g, small, *sim);
  EXPECT_EQ(r.best, -1);
  EXPECT_EQ(r.simulated, 0);
  for (const ThreeDCandidate& x : r.candidates) EXPECT_EQ(x.status, "pruned: memory") << x.spec;
}

TEST(Representative, RefusesWhatItDoesNotRepresent) {
  const OpGraph g = load_graph(kGpt);
  const Cluster c = load_cluster("preset:dgx-a100-pod:2");
  auto sim = EvaluatorRegistry::instance().create("analytic");
  const auto error = [&](const std::string& spec) {
    try {
      simulate_representative(g, c, spec, *sim);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("dp:2").find("takes a 3d spec"), std::string::npos);
  EXPECT_NE(error("3d:dp=2,tp=1,pp=1,zero=3").find("ZeRO-3"), std::string::npos);
  EXPECT_NE(error("3d:dp=1,tp=1,pp=2,micro=3,schedule=interleaved:2").find("not a multiple of 2"), std::string::npos);
  EXPECT_NE(error("3d:dp=1,tp=1,pp=1,micro=4,schedule=interleaved:2").find("pp of at least 2"), std::string::npos);
  EXPECT_NE(error("3d:dp=1,tp=4,pp=2,micro=4,schedule=interleaved:4").find("32 devices"), std::string::npos);
  EXPECT_NE(error("3d:dp=1,tp=1,pp=2,micro=4,schedule=zigzag").find("zigzag"), std::string::npos);
  EXPECT_NE(error("3d:dp=2,tp=1,pp=1,collective=tree").find("ring"), std::string::npos);
  EXPECT_NE(error("3d:dp=4,tp=4,pp=2").find("32 devices"), std::string::npos);
  EXPECT_NE(error("3d:dp=1,tp=1,pp=2,micro=32").find("32 micro-batches"), std::string::npos);
}

}  // namespace
}  // namespace aware
