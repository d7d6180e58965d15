// The exhaustive placer: the best of every placement, checked against an
// enumeration written here over the ops (not the units), with threads, with a
// budget (stopped, and saying so), and refusing a graph too large to enumerate.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/placer.h"
#include "tests/agents/placer_runs.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

using testing::analytic_step_us;
using testing::place_with;

double enumerate_best(const OpGraph& g, const Cluster& c) {
  const int n = g.num_ops(), D = c.num_devices();
  Placement p(std::vector<int>(n, 0));
  double best = std::numeric_limits<double>::infinity();
  while (true) {
    best = std::min(best, analytic_step_us(g, c, p));
    int k = 0;
    while (k < n && ++p[k] == D) p[k++] = 0;
    if (k == n) return best;
  }
}

TEST(Exhaustive, FindsTheBestOfEveryPlacement) {
  for (int D : {2, 3}) {
    const OpGraph g = testing::layered_dag(9, 4, 3);
    const Cluster c = testing::star_cluster(D, 1e9);
    const double best = enumerate_best(g, c);
    const Placement one = place_with("exhaustive", g, c, 0);
    EXPECT_NEAR(analytic_step_us(g, c, one), best, 1e-9 * best) << D << " devices";
    EXPECT_EQ(place_with("exhaustive", g, c, 0, 1, {{"threads", "2"}}), one);
  }
}

TEST(Exhaustive, ABudgetStopsItAndTheReportSaysSo) {
  const OpGraph g = testing::layered_dag(10, 6, 3);
  const Cluster c = testing::star_cluster(2, 1e9);
  const std::string report = std::string(::testing::TempDir()) + "/exhaustive-report.json";
  place_with("exhaustive", g, c, 100, 1, {{"report", report}});
  nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
  EXPECT_EQ(j.at("evaluated").get<long long>(), 100);
  EXPECT_FALSE(j.at("complete").get<bool>());
  EXPECT_EQ(j.at("placements").get<double>(), 1024);
  place_with("exhaustive", g, c, 0, 1, {{"report", report}});
  j = nlohmann::json::parse(std::ifstream(report));
  EXPECT_EQ(j.at("evaluated").get<long long>(), 1024);
  EXPECT_TRUE(j.at("complete").get<bool>());
  EXPECT_THROW(place_with("exhaustive", g, c, 0, 1, {{"max_placements", "1000"}}), ConfigError);
}

}  // namespace
}  // namespace aware
