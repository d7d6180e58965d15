// Every registered evaluator, with its default options, against what its
// registry entry claims (RegistryInfo::traits): the hand-computed schedules on
// point-to-point links, determinism, agreement with a reference evaluator; and
// what every evaluator must do: infeasibility as a result, bad input as an
// error, finite results, one report per op to a step observer.
// A new evaluator is covered by being registered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/exporters.h"
#include "core/graph_algorithms.h"
#include "core/random_dag.h"
#include "core/step_observer.h"
#include "sim/schedule_checks.h"
#include "tests/conformance/conformance.h"
#include "test_graphs.h"

namespace aware {
namespace {

using testing::chain_graph;
using testing::diamond_graph;
using testing::fork_join_graph;
using testing::star_cluster;
using testing::timed_op;

std::vector<std::string> evaluator_names() {
  register_builtins();
  return EvaluatorRegistry::instance().names();
}

class EvaluatorConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    info_ = EvaluatorRegistry::instance().info(GetParam());
    // An evaluator that needs hardware this machine lacks ("needs": "gpu") cannot
    // be created here; it says why, and its suite is skipped with that line.
    const std::string needs = testing::trait(info_, "needs");
    try {
      evaluator_ = EvaluatorRegistry::instance().create(GetParam());
    } catch (const Error& e) {
      if (needs.empty()) throw;
      GTEST_SKIP() << GetParam() << " needs " << needs << ": " << e.what();
    }
  }
  double tolerance() const {
    const std::string t = testing::trait(info_, "tolerance");
    return t.empty() ? 1e-9 : std::stod(t);
  }
  void expect_step(const OpGraph& g, const Cluster& c, std::vector<int> devices, double want_us) {
    const StepResult r = evaluator_->evaluate(g, c, Placement(std::move(devices)));
    EXPECT_TRUE(r.feasible) << r.infeasible_reason;
    EXPECT_NEAR(r.step_time_us, want_us, tolerance() * want_us) << g.name();
  }

  RegistryInfo info_;
  std::unique_ptr<Evaluator> evaluator_;
};

// Star clusters of testing::star_cluster: two hops per route, 1 us per hop, 1 GB/s,
// so a 1000-byte tensor takes 2 + 1 = 3 us between devices (see tests/sim/analytic_test.cc
// for the schedules worked out op by op).
TEST_P(EvaluatorConformance, HandComputedSchedulesOnLinks) {
  if (testing::trait(info_, "models") != "links") GTEST_SKIP() << GetParam() << " does not claim them";
  expect_step(chain_graph(), star_cluster(2), {0, 0, 0}, 60);
  expect_step(chain_graph(), star_cluster(2), {0, 1, 0}, 66);
  expect_step(diamond_graph(), star_cluster(2), {0, 0, 1, 0}, 51);
  expect_step(fork_join_graph(), star_cluster(2), {0, 0, 0, 1, 1, 0}, 66);
}

// Two 4000-byte transfers meet on the channel sw->dev2 at t = 10 (2 us latency,
// 4 us each alone). First come first served: [10,16], [16,22], c runs [22,27].
// Fair sharing: both move at half rate and end at 10 + 2 + 8 = 20; c runs [20,25].
TEST_P(EvaluatorConformance, ContendedLinkFollowsItsSharingModel) {
  const std::string sharing = testing::trait(info_, "link_sharing");
  if (sharing.empty()) GTEST_SKIP() << GetParam() << " claims no link-sharing model";
  const OpGraph g = testing::contended_graph();
  ASSERT_TRUE(sharing == "fcfs" || sharing == "fair") << sharing;
  expect_step(g, star_cluster(3), {0, 1, 2}, sharing == "fcfs" ? 27 : 25);
}

TEST_P(EvaluatorConformance, DeterministicAndCloneable) {
  const OpGraph g = testing::layered_dag(60, 3);
  const Cluster c = star_cluster(3);
  const Placement p = round_robin_placement(g, c);
  const StepResult r1 = evaluator_->evaluate(g, c, p);
  const StepResult r2 = evaluator_->evaluate(g, c, p);
  const StepResult r3 = evaluator_->clone()->evaluate(g, c, p);
  if (testing::trait(info_, "deterministic") != "1") {
    // Measured evaluators: the same placement stays feasible and its time finite.
    EXPECT_EQ(r1.feasible, r2.feasible);
    EXPECT_TRUE(std::isfinite(r2.step_time_us));
    return;
  }
  EXPECT_EQ(r1.step_time_us, r2.step_time_us);
  EXPECT_EQ(r1.peak_memory_bytes, r2.peak_memory_bytes);
  EXPECT_EQ(r1.bytes_moved, r2.bytes_moved);
  EXPECT_EQ(r1.step_time_us, r3.step_time_us);
}

// evaluate_move is the moved placement's evaluate: bit for bit where the
// evaluator is deterministic, over accepted and rejected moves alike. Bad moves
// are errors.
TEST_P(EvaluatorConformance, MovesGiveTheMovedPlacementsStep) {
  const OpGraph g = testing::layered_dag(60, 5);
  const Cluster c = star_cluster(3);
  Placement current = round_robin_placement(g, c);
  auto reference = evaluator_->clone();
  std::uint64_t state = 17;
  // Measured evaluators run each step for real: a few moves are enough.
  const int count = testing::trait(info_, "deterministic") == "1" ? 12 : 3;
  for (int i = 0; i < count; ++i) {
    std::vector<OpMove> moves;
    for (int k = 0; k <= i % 3; ++k)
      moves.push_back({static_cast<int>(uniform_below(state, g.num_ops())),
                       static_cast<int>(uniform_below(state, c.num_devices()))});
    Placement next = current;
    for (const OpMove& m : moves) next[m.op] = m.device;
    const StepResult moved = evaluator_->evaluate_move(g, c, current, moves);
    const StepResult full = reference->evaluate(g, c, next);
    EXPECT_EQ(moved.evaluator, GetParam());
    EXPECT_EQ(moved.feasible, full.feasible) << "move " << i;
    if (testing::trait(info_, "deterministic") == "1") {
      EXPECT_EQ(moved.step_time_us, full.step_time_us) << "move " << i;
      EXPECT_EQ(moved.peak_memory_bytes, full.peak_memory_bytes) << "move " << i;
      EXPECT_EQ(moved.bytes_moved, full.bytes_moved) << "move " << i;
    } else {
      EXPECT_TRUE(std::isfinite(moved.step_time_us)) << "move " << i;
    }
    if (i % 2 == 0) current = next;  // accepted
  }
  EXPECT_THROW(evaluator_->evaluate_move(g, c, current, {{g.num_ops(), 0}}), DeviceError);
  EXPECT_THROW(evaluator_->evaluate_move(g, c, current, {{0, c.num_devices()}}), DeviceError);
}

TEST_P(EvaluatorConformance, ResultsAreFiniteAndAboveTheLowerBound) {
  for (std::uint64_t seed : {1u, 2u}) {
    const OpGraph g = testing::layered_dag(50, seed);
    const Cluster c = star_cluster(3);
    const StepResult r = evaluator_->evaluate(g, c, round_robin_placement(g, c));
    EXPECT_EQ(r.evaluator, GetParam());
    EXPECT_TRUE(std::isfinite(r.step_time_us));
    EXPECT_GT(r.step_time_us, 0);
    EXPECT_GE(r.step_time_us * (1 + tolerance()) + 1e-6, lower_bound(g, c).bound_us());
    ASSERT_EQ(static_cast<int>(r.device_busy_us.size()), c.num_devices());
    ASSERT_EQ(static_cast<int>(r.peak_memory_bytes.size()), c.num_devices());
    for (double busy : r.device_busy_us) EXPECT_TRUE(std::isfinite(busy) && busy >= 0);
  }
}

TEST_P(EvaluatorConformance, OutOfMemoryIsAResultWithAReason) {
  // 600 MB of parameters on each of two ops: fine apart, too much together on 1 GB.
  OpGraph g("oom");
  const int a = g.add_op(timed_op("a", 10, 1000, 600e6));
  const int b = g.add_op(timed_op("b", 10, 1000, 600e6));
  g.add_edge(a, b);
  const Cluster c = star_cluster(2);
  StepResult r;
  ASSERT_NO_THROW(r = evaluator_->evaluate(g, c, Placement({0, 0})));
  EXPECT_FALSE(r.feasible);
  EXPECT_NE(r.infeasible_reason.find("out of memory"), std::string::npos) << r.infeasible_reason;
  EXPECT_TRUE(evaluator_->evaluate(g, c, Placement({0, 1})).feasible);
}

TEST_P(EvaluatorConformance, BadInputIsAnError) {
  const OpGraph g = chain_graph();
  const Cluster c = star_cluster(2);
  EXPECT_THROW(evaluator_->evaluate(g, c, Placement({0, 7, 0})), Error);   // no device 7
  EXPECT_THROW(evaluator_->evaluate(g, c, Placement({0, -1, 0})), Error);  // negative device
  EXPECT_THROW(evaluator_->evaluate(g, c, Placement({0, 1})), Error);      // one op short
  EXPECT_THROW(EvaluatorRegistry::instance().create(GetParam(), {{"no-such-option", "1"}}),
               ConfigError);
}

// Counts what an evaluator reports and checks it against the trace.
class CountingObserver final : public StepObserver {
 public:
  void on_step_begin(const OpGraph&, const Cluster&, const Placement&) override { ++begins; }
  void on_op(const OpSpan& span) override { ++ops[span.op]; }
  void on_transfer(const TransferSpan&) override { ++transfers; }
  void on_step_end(const StepResult&) override { ++ends; }
  int begins = 0, ends = 0, transfers = 0;
  std::map<int, int> ops;
};

TEST_P(EvaluatorConformance, ObserversSeeEveryOpOnceAndMatchTheTrace) {
  const OpGraph g = fork_join_graph();
  const Cluster c = star_cluster(2);
  const Placement p({0, 0, 0, 1, 1, 0});
  CountingObserver counter;
  Trace trace;
  TraceRecorder recorder(trace);
  ChromeTraceWriter chrome(g, c);
  ObserverFanout fanout;
  fanout.add(&counter);
  fanout.add(&recorder);
  fanout.add(&chrome);
  const StepResult r = evaluator_->evaluate_observed(g, c, p, &fanout);
  EXPECT_EQ(counter.begins, 1);
  EXPECT_EQ(counter.ends, 1);
  ASSERT_EQ(static_cast<int>(counter.ops.size()), g.num_ops());
  for (const auto& [op, times] : counter.ops) EXPECT_EQ(times, 1) << g.op(op).name;
  EXPECT_EQ(counter.transfers, static_cast<int>(trace.transfers.size()));
  EXPECT_EQ(counter.transfers, r.transfers);
  // The same step through evaluate(&trace) records the same spans, and the Chrome
  // export of that trace equals what the writer saw live.
  Trace again;
  const StepResult r_again = evaluator_->evaluate(g, c, p, &again);
  ASSERT_EQ(again.ops.size(), trace.ops.size());
  for (size_t i = 0; i < trace.ops.size(); ++i) {
    EXPECT_EQ(again.ops[i].op, static_cast<int>(i));
    EXPECT_EQ(again.ops[i].device, p[static_cast<int>(i)]);
    // A measured evaluator's second step takes other times; its spans keep their ops.
    if (testing::trait(info_, "deterministic") == "1")
      EXPECT_NEAR(again.ops[i].end_us, trace.ops[i].end_us, 1e-9 + 1e-9 * trace.ops[i].end_us);
    // Every span ends within the step that recorded it.
    EXPECT_LE(trace.ops[i].end_us, r.step_time_us * (1 + 1e-9));
    EXPECT_LE(again.ops[i].end_us, r_again.step_time_us * (1 + 1e-9));
  }
  EXPECT_EQ(trace_to_chrome(g, c, trace), chrome.document());
}

TEST_P(EvaluatorConformance, ValidSchedulesOnGeneratedGraphs) {
  const bool fcfs = testing::trait(info_, "link_sharing") == "fcfs";
  const testing::ScheduleClaims claims{testing::trait(info_, "models") == "links", fcfs,
                                       testing::trait(info_, "deterministic") == "1"};
  const Cluster c = star_cluster(4, 1e9, 1, 64e9);
  for (std::uint64_t seed : {1u, 2u}) {
    const OpGraph g = testing::layered_dag(60, seed);
    SCOPED_TRACE("layered_dag seed " + std::to_string(seed));
    testing::expect_valid_schedule(*evaluator_, claims, g, c, round_robin_placement(g, c),
                                   tolerance());
  }
}

TEST_P(EvaluatorConformance, AgreesWithItsReference) {
  const std::string reference_name = testing::trait(info_, "reference");
  if (reference_name.empty()) GTEST_SKIP() << GetParam() << " names no reference";
  auto reference = EvaluatorRegistry::instance().create(reference_name);
  std::vector<testing::EvaluationCase> cases;
  cases.push_back({"chain split", chain_graph(), star_cluster(2), Placement({0, 1, 0})});
  cases.push_back({"fork-join", fork_join_graph(), star_cluster(2), Placement({0, 0, 0, 1, 1, 0})});
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    // On one device nothing contends, so every model of links agrees.
    OpGraph g = testing::layered_dag(80, seed);
    Placement one(std::vector<int>(g.num_ops(), 0));
    cases.push_back({"layered one device", std::move(g), star_cluster(2, 1e9, 1, 64e9), std::move(one)});
  }
  // A measured evaluator (trait measured=1) agrees on what it does not measure.
  testing::expect_same_results(*reference, *evaluator_, cases, tolerance(),
                               testing::trait(info_, "measured") != "1");
}

INSTANTIATE_TEST_SUITE_P(Registered, EvaluatorConformance, ::testing::ValuesIn(evaluator_names()),
                         [](const auto& info) { return testing::param_name(info.param); });

}  // namespace
}  // namespace aware
