// Parallel chains of a search (core/search_exchange.h): the meeting's choice by
// hand, the thread group's collective behaviour (same outcome for all, stop for
// all, a failed chain or a missing one ends the others), and anneal and
// random-search run as chains on threads: deterministic, every chain ending with
// the same best, budgets split, methods that cannot run as chains refused.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/errors.h"
#include "core/evaluator.h"
#include "core/placer.h"
#include "core/search_exchange.h"
#include "tests/agents/placer_runs.h"
#include "tests/expect_error.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

ChainBest brought(bool feasible, double step_us, std::vector<int> devices, bool stop = false) {
  ChainBest b;
  b.feasible = feasible;
  b.step_us = step_us;
  b.placement = Placement(std::move(devices));
  b.stop = stop;
  return b;
}

TEST(SearchChains, AMeetingPicksFeasibleFirstThenTheShortestStepThenTheLowestChain) {
  const ChainMeeting m = best_of({brought(false, 10, {0}), brought(true, 50, {1}), brought(true, 50, {2}),
                                  brought(true, 70, {3})});
  EXPECT_EQ(m.from_chain, 1);
  EXPECT_TRUE(m.best.feasible);
  EXPECT_EQ(m.best.step_us, 50);
  EXPECT_EQ(m.best.placement, Placement(std::vector<int>{1}));
  EXPECT_FALSE(m.stop);
  EXPECT_TRUE(best_of({brought(true, 5, {0}), brought(true, 9, {1}, true)}).stop) << "one chain's stop stops all";
  EXPECT_EQ(best_of({brought(false, 9, {0}), brought(false, 8, {1})}).from_chain, 1) << "all infeasible: the shortest";
}

TEST(SearchChains, EveryChainOfAGroupLeavesAMeetingWithTheSameOutcome) {
  ThreadChainGroup group(3);
  std::vector<ChainMeeting> seen(6);
  std::vector<std::thread> threads;
  for (int k = 0; k < 3; ++k)
    threads.emplace_back([&, k] {
      for (int round = 0; round < 2; ++round)
        seen[static_cast<size_t>(2 * k + round)] =
            group.member(k).meet(brought(true, 100.0 - 10 * k + 30 * round * k, {k}, round == 1 && k == 2));
    });
  for (auto& t : threads) t.join();
  for (int k = 0; k < 3; ++k) {
    // Round 0: steps 100, 90, 80 -> chain 2. Round 1: 100, 120, 140 -> chain 0, and chain 2 asked to stop.
    EXPECT_EQ(seen[static_cast<size_t>(2 * k)].from_chain, 2);
    EXPECT_FALSE(seen[static_cast<size_t>(2 * k)].stop);
    EXPECT_EQ(seen[static_cast<size_t>(2 * k + 1)].from_chain, 0);
    EXPECT_TRUE(seen[static_cast<size_t>(2 * k + 1)].stop);
  }
}

TEST(SearchChains, AFailedOrMissingChainEndsTheOthers) {
  {
    ThreadChainGroup group(2);
    std::atomic<bool> threw{false};
    std::thread waiting([&] {
      try {
        group.member(0).meet(brought(true, 1, {0}));
      } catch (const Error& e) {
        threw = std::string(e.what()).find("chain 1 failed") != std::string::npos;
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    group.abandon("chain 1 failed: out of memory");
    waiting.join();
    EXPECT_TRUE(threw) << "a waiting chain is woken and told why";
    EXPECT_THROW(group.member(1).meet(brought(true, 1, {0})), Error) << "and no later meeting happens";
  }
  ThreadChainGroup group(2, std::chrono::seconds(1));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(group.member(0).meet(brought(true, 1, {0})), Error);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << "no hang past the timeout";
}

// `method` as `chains` chains on threads (what `aware place --chains` does).
std::vector<Placement> run_chains(const std::string& method, const OpGraph& g, const Cluster& c, long long budget,
                                  int chains, std::uint64_t seed = 1, Options options = {}) {
  auto sim = EvaluatorRegistry::instance().create("analytic");
  return place_on_thread_chains(
      method, chains, g, c, testing::place_context(sim.get(), budget, seed, std::move(options)));
}

using testing::analytic_step_us;

TEST(SearchChains, AnnealAndRandomSearchRunAsChainsThatEndWithOneBest) {
  const OpGraph g = testing::layered_dag(60, 3);
  const Cluster c = testing::star_cluster(4);
  const double start = testing::best_list_schedule_us(g, c);
  for (const char* method : {"anneal", "random-search"}) {
    const std::vector<Placement> three = run_chains(method, g, c, 600, 3);
    for (const Placement& p : three) {
      check_placement(g, c, p);
      EXPECT_EQ(p, three[0]) << method << ": every chain ends with the best of all";
    }
    EXPECT_LE(analytic_step_us(g, c, three[0]), start) << method;
    EXPECT_EQ(run_chains(method, g, c, 600, 3), three) << method << ": same seed and chains, same result";
    EXPECT_NE(run_chains(method, g, c, 600, 3, 2)[0].size(), 0u);
  }
  // Meetings more often change what the chains do, not that they agree.
  const auto often = run_chains("anneal", g, c, 600, 2, 1, {{"exchange_every", "5"}});
  EXPECT_EQ(often[0], often[1]);
}

TEST(SearchChains, TooLittleWorkOrAMethodThatCannotRunAsChainsIsRefused) {
  const OpGraph g = testing::layered_dag(20, 2);
  const Cluster c = testing::star_cluster(2);
  testing::expect_error<ConfigError>(
      [&] { run_chains("anneal", g, c, 40, 4); },
      {"40 evaluations split over 4 chains leaves fewer than 16 each"});
  testing::expect_error<ConfigError>([&] { run_chains("heft", g, c, 400, 2); },
                                     {"does not run as parallel chains"});
  EXPECT_THROW(run_chains("anneal", g, c, 400, 2, 1, {{"exchange_every", "-1"}}), ConfigError);
}

}  // namespace
}  // namespace aware
