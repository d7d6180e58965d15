// Shared pieces of the conformance suites: names from the registries (as gtest
// parameter names), and the one reference check every twin evaluator uses.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/evaluator.h"
#include "core/op_graph.h"

namespace aware::testing {

// "m-etf" -> "m_etf": gtest parameter names must be identifiers.
inline std::string param_name(const std::string& registry_name) {
  std::string out;
  for (char c : registry_name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

// Reads a trait of a registry entry ("" when absent).
inline std::string trait(const RegistryInfo& info, const std::string& key) {
  const auto it = info.traits.find(key);
  return it == info.traits.end() ? std::string() : it->second;
}

// The one reference comparison (as faiss's compareIndices): `evaluator` gives the
// step time, busy time per device, bytes moved and feasibility of `reference`
// within `rel_tol` on every case. With `times` false (a measured evaluator, whose
// times are what it measures; `aware validate` compares those) only what it does
// not measure is compared, exactly: feasibility and the bytes its copies move.
struct EvaluationCase {
  std::string label;
  OpGraph graph;
  Cluster cluster;
  Placement placement;
};

inline void expect_same_results(Evaluator& reference, Evaluator& evaluator,
                                const std::vector<EvaluationCase>& cases, double rel_tol, bool times = true) {
  for (const EvaluationCase& c : cases) {
    SCOPED_TRACE(c.label + ": " + evaluator.name() + " vs " + reference.name());
    const StepResult want = reference.evaluate(c.graph, c.cluster, c.placement);
    const StepResult got = evaluator.evaluate(c.graph, c.cluster, c.placement);
    EXPECT_EQ(got.feasible, want.feasible) << got.infeasible_reason << " / " << want.infeasible_reason;
    if (!times) {
      EXPECT_EQ(got.bytes_moved, want.bytes_moved);
      EXPECT_EQ(got.device_busy_us.size(), want.device_busy_us.size());
      continue;
    }
    EXPECT_NEAR(got.step_time_us, want.step_time_us, rel_tol * want.step_time_us);
    EXPECT_NEAR(got.bytes_moved, want.bytes_moved, rel_tol * want.bytes_moved + 1e-9);
    ASSERT_EQ(got.device_busy_us.size(), want.device_busy_us.size());
    for (size_t d = 0; d < want.device_busy_us.size(); ++d)
      EXPECT_NEAR(got.device_busy_us[d], want.device_busy_us[d], rel_tol * want.device_busy_us[d] + 1e-9);
  }
}

}  // namespace aware::testing
