// Graphs for the learned-agent tests, and a run on one of them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "agents/rl/trainer.h"
#include "core/op_graph.h"
#include "tests/test_graphs.h"

namespace aware::testing {

// A chain of 7 ops whose tensors are empty: on links without latency
// (testing::zero_latency_star) every placement takes the same time, so the
// policy-gradient term carries no signal, and what moves the policy is the
// imitation term under test.
inline OpGraph flat_chain() {
  OpGraph g("flat-chain");
  for (int i = 0; i < 7; ++i) g.add_op(timed_op("op" + std::to_string(i), 100, 0));
  for (int i = 0; i + 1 < 7; ++i) g.add_edge(i, i + 1);
  return g;
}

// A small asymmetric DAG: different costs and sizes, a fork, a join and a side branch.
inline OpGraph asymmetric_graph() {
  OpGraph g("asym");
  const double us[] = {100, 250, 80, 400, 120, 60, 300};
  const double bytes[] = {1e5, 3e5, 2e4, 8e5, 1e5, 5e4, 2e5};
  for (int i = 0; i < 7; ++i) g.add_op(timed_op("op" + std::to_string(i), us[i], bytes[i]));
  for (auto [s, d] : std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}, {2, 5}, {5, 6}})
    g.add_edge(s, d);
  return g;
}

// Aware unfused on the flat chain, 800 evaluations, cloning its last sample
// with weight 5 every update: the elite step at its strongest.
inline rl::TrainOptions strong_elite_on_the_flat_chain() {
  rl::TrainOptions t;
  t.budget_evals = 800;
  t.seed = 4;
  t.agent_options = {{"fusion", "off"}};
  t.elite = 1;
  t.elite_window = 1;
  t.elite_weight = 5;
  return t;
}

// Two independent chains of `length` ops (1 ms each) whose tensors are large
// (`bytes`, 10 ms on a 1 GB/s link): the best placement on two devices puts one
// chain on each device (step ~ length ms, half of one device's 2 x length ms).
inline OpGraph two_chains_graph(int length = 6, double bytes = 10e6) {
  OpGraph g("two-chains");
  for (const char* chain : {"a", "b"}) {
    int prev = -1;
    for (int i = 0; i < length; ++i) {
      const int id = g.add_op(timed_op(std::string(chain) + std::to_string(i), 1000, bytes));
      if (prev >= 0) g.add_edge(prev, id);
      prev = id;
    }
  }
  return g;
}

// `chains` independent chains of `length` ops (1 ms each, `bytes` per tensor),
// chain k's ops numbered k * length .. k * length + length - 1.
inline OpGraph parallel_chains_graph(int chains, int length = 6, double bytes = 10e6) {
  OpGraph g(std::to_string(chains) + "-chains");
  for (int k = 0; k < chains; ++k) {
    int prev = -1;
    for (int i = 0; i < length; ++i) {
      const int id = g.add_op(timed_op(std::string(1, static_cast<char>('a' + k)) + std::to_string(i), 1000, bytes));
      if (prev >= 0) g.add_edge(prev, id);
      prev = id;
    }
  }
  return g;
}

}  // namespace aware::testing
