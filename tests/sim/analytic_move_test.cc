// evaluate_move: a move re-simulated from a checkpoint gives what a full
// evaluation of the moved placement gives, bit for bit. Hand-sized cases first,
// then long seeded sequences of accepted and rejected moves on every zoo model.
#include <gtest/gtest.h>

#include <string>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/random_dag.h"
#include "datasets/zoo.h"
#include "sim/analytic/analytic_simulator.h"
#include "sim/schedule_checks.h"
#include "test_graphs.h"

namespace aware {
namespace {

using testing::chain_graph;
using testing::star_cluster;
using testing::with_memory;

// Every field, doubles compared with == (bit-identical for finite values).
void expect_identical(const StepResult& move, const StepResult& full, const std::string& where) {
  testing::expect_same_numbers(move, full, where);
  EXPECT_EQ(move.infeasible_reason, full.infeasible_reason) << where;
  EXPECT_EQ(move.evaluator, full.evaluator) << where;
  EXPECT_EQ(move.notes, full.notes) << where;
}

// Chain a(10) -> b(20) -> c(30) on a two-device star: a 1000-byte tensor takes 3 us.
TEST(AnalyticMoves, ChainMovesMatchHandComputedSchedules) {
  const OpGraph g = chain_graph();
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  const Placement all0(std::vector<int>{0, 0, 0});
  EXPECT_DOUBLE_EQ(sim.evaluate(g, c, all0).step_time_us, 60);
  // b on dev1: a [0,10] | copy [10,13] | b [13,33] | copy [33,36] | c [36,66].
  const StepResult moved = sim.evaluate_move(g, c, all0, {{1, 1}});
  EXPECT_DOUBLE_EQ(moved.step_time_us, 66);
  EXPECT_EQ(moved.transfers, 2);
  expect_identical(moved, AnalyticSimulator().evaluate(g, c, Placement(std::vector<int>{0, 1, 0})),
                   "chain, b moved");
  // Accepted: the next move starts from {0, 1, 0}; c joins b: a, copy, b [13,33], c [33,63].
  const StepResult next = sim.evaluate_move(g, c, Placement(std::vector<int>{0, 1, 0}), {{2, 1}});
  EXPECT_DOUBLE_EQ(next.step_time_us, 63);
  EXPECT_EQ(next.transfers, 1);
  // Rejected: from {0, 1, 0} again the source op a moves instead (re-simulated from
  // round 0): a [0,10] and b [10,30] on dev1, copy [30,33], c [33,63].
  const StepResult source = sim.evaluate_move(g, c, Placement(std::vector<int>{0, 1, 0}), {{0, 1}});
  EXPECT_DOUBLE_EQ(source.step_time_us, 63);
  expect_identical(source, AnalyticSimulator().evaluate(g, c, Placement(std::vector<int>{1, 1, 0})),
                   "chain, a moved");
}

TEST(AnalyticMoves, MovingNothingGivesThePreviousResult) {
  const OpGraph g = chain_graph();
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  const Placement p(std::vector<int>{0, 1, 0});
  expect_identical(sim.evaluate_move(g, c, p, {}), sim.evaluate(g, c, p), "no moves");
  expect_identical(sim.evaluate_move(g, c, p, {{1, 1}}), sim.evaluate(g, c, p), "same device");
}

TEST(AnalyticMoves, ABadMoveNamesTheOpAndDevice) {
  const OpGraph g = chain_graph();
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  const Placement p(std::vector<int>{0, 0, 0});
  for (const OpMove bad : {OpMove{3, 0}, OpMove{1, 2}, OpMove{-1, 0}}) {
    try {
      sim.evaluate_move(g, c, p, {bad});
      ADD_FAILURE() << "no error for op " << bad.op << " device " << bad.device;
    } catch (const DeviceError& e) {
      EXPECT_NE(std::string(e.what()).find("op " + std::to_string(bad.op) + " to device " +
                                           std::to_string(bad.device)),
                std::string::npos)
          << e.what();
    }
  }
  // The evaluator stays usable.
  EXPECT_DOUBLE_EQ(sim.evaluate_move(g, c, p, {{1, 1}}).step_time_us, 66);
}

// A search's pattern: moves of one op or a few, each accepted or rejected at
// random, and now and then a placement from elsewhere (a new base).
int run_sequence(const OpGraph& g, const Cluster& c, AnalyticSimulator& moving,
                 AnalyticSimulator& full, std::uint64_t seed, int count, int* infeasible) {
  std::uint64_t state = seed;
  const int D = c.num_devices();
  Placement current(std::vector<int>(g.num_ops()));
  for (int op = 0; op < g.num_ops(); ++op) current[op] = uniform_below(state, D);
  int compared = 0;
  for (int i = 0; i < count; ++i) {
    std::vector<OpMove> moves;
    const int kind = uniform_below(state, 100);
    if (kind < 3) {  // a placement from elsewhere
      for (int op = 0; op < g.num_ops(); ++op) current[op] = uniform_below(state, D);
    }
    const int ops = kind < 75 ? 1 : 2 + uniform_below(state, 4);
    for (int k = 0; k < ops; ++k) {
      const int op = uniform_below(state, g.num_ops());
      moves.push_back({op, uniform_below(state, D)});
    }
    Placement next = current;
    for (const OpMove& m : moves) next[m.op] = m.device;
    const StepResult r = moving.evaluate_move(g, c, current, moves);
    const StepResult expected = full.evaluate(g, c, next);
    expect_identical(r, expected, g.name() + " on " + c.name() + ", move " + std::to_string(i));
    if (::testing::Test::HasFailure()) return compared;
    *infeasible += !expected.feasible;
    ++compared;
    if (uniform_below(state, 2) == 0) current = next;
  }
  return compared;
}

struct MoveConfig {
  std::string label;
  Options options;
  double memory_fraction = 0;  // > 0: device memory this fraction of one random placement's peak
};

class ZooMoves : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooMoves, AreBitIdenticalToFullEvaluations) {
  const OpGraph g = build_zoo_model(GetParam());
  const Cluster k40 = make_cluster_preset("k40x4");
  const std::vector<MoveConfig> configs = {
      {"contention", {}, 0},
      {"copies on the consumer, slowdowns", {{"copies", "consumer"}, {"slowdown.compute", "1.3"},
                                              {"slowdown.memory", "1.7"}}, 0},
      {"memory tight", {}, 0.8},
      {"placeto", {{"mode", "placeto"}}, 0},
      {"rank queue (moves run in full)", {{"queue", "rank"}, {"copies", "consumer"}}, 0},
      {"one host issues every task", {{"copies", "consumer"}, {"host.op_us", "12"}, {"host.copy_us", "9"}}, 0},
  };
  int total = 0;
  for (const MoveConfig& config : configs) {
    auto moving = AnalyticSimulator::from_options(config.options);
    moving->set_move_checkpoints(AnalyticSimulator::MoveCheckpoints::kAlways);
    auto full = AnalyticSimulator::from_options(config.options);
    Cluster c = k40;
    if (config.memory_fraction > 0) {
      std::uint64_t state = 5;
      Placement random(std::vector<int>(g.num_ops()));
      for (int op = 0; op < g.num_ops(); ++op) random[op] = uniform_below(state, 4);
      const StepResult r = full->evaluate(g, k40, random);
      double peak = 0;
      for (double b : r.peak_memory_bytes) peak = std::max(peak, b);
      c = with_memory(k40, peak * config.memory_fraction);
    }
    int infeasible = 0;
    const int count = config.label == "placeto" || config.options.count("queue") != 0 ? 100 : 450;
    total += run_sequence(g, c, *moving, *full, 1000 + total, count, &infeasible);
    ASSERT_FALSE(HasFailure()) << config.label;
    if (config.memory_fraction > 0) {
      EXPECT_GT(infeasible, 0) << "the tight cluster should refuse some placements";
    }
  }
  EXPECT_EQ(total, 4 * 450 + 2 * 100);  // 12 zoo models: 24,000 moves in all
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooMoves, ::testing::ValuesIn(zoo_model_names()));

// A random layered DAG (no weight sources: moves skip about half the rounds),
// with the default adaptive checkpoints, across several reviews.
TEST(AnalyticMoves, AdaptiveCheckpointsOnARandomDagAreBitIdentical) {
  const OpGraph g = random_layered_dag(400, 3);
  const Cluster c = make_cluster_preset("k40x4");
  AnalyticSimulator moving, full;
  int infeasible = 0;
  EXPECT_EQ(run_sequence(g, c, moving, full, 77, 1500, &infeasible), 1500);
}

// Routes kept only as steps cross them (the form clusters above 256 devices
// take) give the steps every-pair routes give, bit for bit: random placements
// of a zoo model and a random DAG on k40x4 and on a 6x5 mesh, both ways of
// moving copies; moves on sparse routes are full runs and agree too. On k40x4
// this also compares the step's events kept sorted (dense routes) with a heap.
TEST(AnalyticRoutes, RoutesKeptAsCrossedGiveTheSameSteps) {
  const std::vector<OpGraph> graphs = {build_zoo_model("inception_v3"), random_layered_dag(300, 5)};
  const std::vector<Cluster> clusters = {make_cluster_preset("k40x4"), make_cluster_preset("mesh:6x5")};
  for (const Options& options : {Options{}, Options{{"copies", "consumer"}, {"slowdown.memory", "1.5"}}}) {
    for (const OpGraph& g : graphs) {
      for (const Cluster& c : clusters) {
        auto dense = AnalyticSimulator::from_options(options);
        auto sparse = AnalyticSimulator::from_options(options);
        sparse->set_route_table(AnalyticSimulator::RouteTable::kSparse);
        std::uint64_t state = 11;
        Placement current(std::vector<int>(g.num_ops()));
        for (int i = 0; i < 60; ++i) {
          Placement p(std::vector<int>(g.num_ops()));
          const int spread = 1 + uniform_below(state, c.num_devices());
          for (int op = 0; op < g.num_ops(); ++op) p[op] = uniform_below(state, spread);
          const std::string where = g.name() + " on " + c.name() + ", placement " + std::to_string(i);
          expect_identical(sparse->evaluate(g, c, p), dense->evaluate(g, c, p), where);
          const std::vector<OpMove> move = {{uniform_below(state, g.num_ops()), uniform_below(state, c.num_devices())}};
          Placement moved = p;
          moved[move[0].op] = move[0].device;
          expect_identical(sparse->evaluate_move(g, c, p, move), dense->evaluate(g, c, moved), where + ", moved");
          if (HasFailure()) return;
        }
      }
    }
  }
}

// Above 256 devices the routes are kept as crossed on their own: a chain across
// a 20x20 mesh, corner to corner and back, by hand from the cluster's routes.
TEST(AnalyticRoutes, AStepAcrossA400CoreMesh) {
  const Cluster c = make_cluster_preset("mesh:20x20");
  const OpGraph g = chain_graph();  // a(10) -> b(20) -> c(30), 1000-byte tensors
  AnalyticSimulator sim;
  const StepResult r = sim.evaluate(g, c, Placement(std::vector<int>{0, 399, 0}));
  ASSERT_EQ(c.route(0, 399).size(), 19u + 19u + 2u);
  EXPECT_DOUBLE_EQ(r.step_time_us, 10 + c.transfer_time_us(0, 399, 1000) + 20 + c.transfer_time_us(399, 0, 1000) + 30);
  EXPECT_EQ(r.transfers, 2);
}

}  // namespace
}  // namespace aware
