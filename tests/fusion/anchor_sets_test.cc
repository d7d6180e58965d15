// P-GNN anchor sets: the Bourgain schedule, determinism, and hand-computed
// distance scores on a path and a star.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "agents/fusion/anchor_sets.h"
#include "core/errors.h"
#include "core/op_graph.h"
#include "datasets/zoo.h"

namespace aware {
namespace {

OpGraph graph_with_edges(int n, const std::vector<std::pair<int, int>>& edges) {
  OpGraph g("hand");
  for (int i = 0; i < n; ++i) {
    Op op;
    op.name = "n" + std::to_string(i);
    op.type = "Test";
    op.output_bytes = {1};
    g.add_op(op);
  }
  for (auto [a, b] : edges) g.add_edge(a, b);
  return g;
}

// 0 -> 1 -> 2 -> 3 -> 4
OpGraph path5() { return graph_with_edges(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}}); }
// 0 -> 1, 0 -> 2, 0 -> 3, 0 -> 4
OpGraph star5() { return graph_with_edges(5, {{0, 1}, {0, 2}, {0, 3}, {0, 4}}); }

AnchorSets given(int n, std::vector<std::vector<int>> sets) {
  AnchorSets s;
  s.num_nodes = n;
  s.sets = std::move(sets);
  s.size_class.assign(s.sets.size(), 0);
  return s;
}

// Undirected path, set {0}: d = v, s = 1 / (v + 1).
// Set {0, 4}: node 1 -> 0 (d 1, s 1/2); node 2 ties at d 2 -> the first anchor, 0
// (s 1/3); node 3 -> 4 (d 1). Set {4, 0}: node 2's tie goes to 4.
TEST(AnchorDistances, PathUndirected) {
  const AnchorDistances d = anchor_distances(path5(), given(5, {{0}, {0, 4}, {4, 0}}));
  ASSERT_EQ(d.num_nodes, 5);
  ASSERT_EQ(d.num_sets, 3);
  const float expected0[] = {1.0f, 1.0f / 2, 1.0f / 3, 1.0f / 4, 1.0f / 5};
  for (int v = 0; v < 5; ++v) {
    EXPECT_FLOAT_EQ(d.score_at(v, 0), expected0[v]) << v;
    EXPECT_EQ(d.anchor_at(v, 0), 0);
  }
  const float expected1[] = {1.0f, 1.0f / 2, 1.0f / 3, 1.0f / 2, 1.0f};
  const int anchor1[] = {0, 0, 0, 4, 4};
  const int anchor2[] = {0, 0, 4, 4, 4};
  for (int v = 0; v < 5; ++v) {
    EXPECT_FLOAT_EQ(d.score_at(v, 1), expected1[v]) << v;
    EXPECT_EQ(d.anchor_at(v, 1), anchor1[v]) << v;
    EXPECT_FLOAT_EQ(d.score_at(v, 2), expected1[v]) << v;
    EXPECT_EQ(d.anchor_at(v, 2), anchor2[v]) << v;
  }
}

// Cut-off 2 hops from anchor 0: nodes 3 and 4 score 0, anchor stays a valid id.
TEST(AnchorDistances, PathCutoff) {
  AnchorDistanceOptions o;
  o.max_hops = 2;
  const AnchorDistances d = anchor_distances(path5(), given(5, {{0}}), o);
  EXPECT_FLOAT_EQ(d.score_at(2, 0), 1.0f / 3);
  EXPECT_FLOAT_EQ(d.score_at(3, 0), 0.0f);
  EXPECT_FLOAT_EQ(d.score_at(4, 0), 0.0f);
  EXPECT_EQ(d.anchor_at(4, 0), 0);
}

// Directed: v ~> 4 always exists (d = 4 - v); v ~> 0 only from 0. From anchor 0, d = v.
TEST(AnchorDistances, PathDirected) {
  AnchorDistanceOptions to;
  to.direction = AnchorDirection::kToAnchor;
  const AnchorDistances d = anchor_distances(path5(), given(5, {{4}, {0}}), to);
  for (int v = 0; v < 5; ++v) {
    EXPECT_FLOAT_EQ(d.score_at(v, 0), 1.0f / (4 - v + 1)) << v;
    EXPECT_FLOAT_EQ(d.score_at(v, 1), v == 0 ? 1.0f : 0.0f) << v;
  }
  AnchorDistanceOptions from;
  from.direction = AnchorDirection::kFromAnchor;
  const AnchorDistances f = anchor_distances(path5(), given(5, {{0}}), from);
  for (int v = 0; v < 5; ++v) EXPECT_FLOAT_EQ(f.score_at(v, 0), 1.0f / (v + 1)) << v;
}

// Star, set {1}: leaf 1 scores 1, the centre 1/2, the other leaves 1/3 (two hops).
// Directed towards anchor 1: only the centre (0 -> 1) reaches it.
// Set {2, 3}: the centre ties at d 1 -> anchor 2; leaf 4 ties at d 2 -> anchor 2.
TEST(AnchorDistances, Star) {
  const AnchorDistances d = anchor_distances(star5(), given(5, {{1}, {2, 3}}));
  EXPECT_FLOAT_EQ(d.score_at(1, 0), 1.0f);
  EXPECT_FLOAT_EQ(d.score_at(0, 0), 0.5f);
  for (int v : {2, 3, 4}) EXPECT_FLOAT_EQ(d.score_at(v, 0), 1.0f / 3);
  EXPECT_EQ(d.anchor_at(0, 1), 2);
  EXPECT_FLOAT_EQ(d.score_at(0, 1), 0.5f);
  EXPECT_EQ(d.anchor_at(4, 1), 2);
  EXPECT_FLOAT_EQ(d.score_at(4, 1), 1.0f / 3);
  EXPECT_EQ(d.anchor_at(3, 1), 3);

  AnchorDistanceOptions to;
  to.direction = AnchorDirection::kToAnchor;
  const AnchorDistances t = anchor_distances(star5(), given(5, {{1}}), to);
  EXPECT_FLOAT_EQ(t.score_at(0, 0), 0.5f);
  EXPECT_FLOAT_EQ(t.score_at(1, 0), 1.0f);
  for (int v : {2, 3, 4}) EXPECT_FLOAT_EQ(t.score_at(v, 0), 0.0f);
}

// n = 100: m = 6; c = 0.5 -> 3 sets per class, c = 1 -> 6; sizes 50, 25, 12, 6, 3, 1.
TEST(AnchorSets, BourgainSchedule) {
  const AnchorSets s = sample_anchor_sets(100, 0.5, 42);
  ASSERT_EQ(s.num_sets(), 18);
  EXPECT_EQ(anchor_set_count(100, 0.5), 18);
  const int sizes[] = {50, 25, 12, 6, 3, 1};
  for (int j = 0; j < s.num_sets(); ++j) {
    EXPECT_EQ(s.size_class[j], j / 3);
    ASSERT_EQ(static_cast<int>(s.sets[j].size()), sizes[j / 3]);
    const std::set<int> distinct(s.sets[j].begin(), s.sets[j].end());
    EXPECT_EQ(distinct.size(), s.sets[j].size()) << "drawn with replacement";
    for (int v : s.sets[j]) {
      EXPECT_GE(v, 0);
      EXPECT_LT(v, 100);
    }
  }
  EXPECT_EQ(sample_anchor_sets(100, 1.0, 42).num_sets(), 36);
  // Tiny graphs: m = floor(log2 n); floor(0.5 * 1) = 0 sets for n = 2, 3.
  EXPECT_EQ(sample_anchor_sets(1, 0.5, 1).num_sets(), 0);
  EXPECT_EQ(sample_anchor_sets(3, 0.5, 1).num_sets(), 0);
  EXPECT_EQ(sample_anchor_sets(4, 0.5, 1).num_sets(), 2);  // m 2, 1 per class: sizes 2, 1
  EXPECT_THROW(sample_anchor_sets(-1, 0.5, 1), ConfigError);
}

TEST(AnchorSets, SameSeedSameSets) {
  const AnchorSets a = sample_anchor_sets(500, 0.5, 7);
  const AnchorSets b = sample_anchor_sets(500, 0.5, 7);
  const AnchorSets c = sample_anchor_sets(500, 0.5, 8);
  EXPECT_EQ(a.sets, b.sets);
  EXPECT_NE(a.sets, c.sets);
}

// Every node is drawn about as often as every other (the draw is uniform).
TEST(AnchorSets, DrawIsRoughlyUniform) {
  std::vector<int> count(64, 0);
  for (std::uint64_t seed = 1; seed <= 400; ++seed)
    for (const auto& set : sample_anchor_sets(64, 1.0, seed).sets)
      for (int v : set) ++count[v];
  // Per seed: 6 classes x 6 copies, sizes 32..1 -> 6 * 63 = 378 draws over 64 nodes.
  const double mean = 400.0 * 378 / 64;
  for (int v = 0; v < 64; ++v) EXPECT_NEAR(count[v], mean, 0.1 * mean) << v;
}

TEST(AnchorDistances, ZooGraphShapesAndRanges) {
  const OpGraph g = build_zoo_model("resnet50");
  const AnchorSets s = sample_anchor_sets(g.num_ops(), 0.5, 3);
  AnchorDistanceOptions o;
  o.max_hops = 6;
  o.direction = AnchorDirection::kToAnchor;
  const AnchorDistances d = anchor_distances(g, s, o);
  ASSERT_EQ(d.score.size(), static_cast<size_t>(g.num_ops()) * s.num_sets());
  ASSERT_EQ(d.anchor.size(), d.score.size());
  for (int v = 0; v < g.num_ops(); ++v) {
    for (int j = 0; j < s.num_sets(); ++j) {
      const float score = d.score_at(v, j);
      EXPECT_TRUE(score == 0.0f || (score >= 1.0f / 7 && score <= 1.0f));
      const int a = d.anchor_at(v, j);
      ASSERT_GE(a, 0);
      EXPECT_TRUE(std::find(s.sets[j].begin(), s.sets[j].end(), a) != s.sets[j].end());
      // A node in the set is its own nearest anchor.
      if (a == v) EXPECT_FLOAT_EQ(score, 1.0f);
    }
  }
  EXPECT_THROW(anchor_distances(g, sample_anchor_sets(10, 0.5, 1)), ConfigError);
}

}  // namespace
}  // namespace aware
