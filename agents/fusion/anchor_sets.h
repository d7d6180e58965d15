// Position-aware anchor sets (P-GNN, You et al. 2019; Aware step 2, the torch-free
// part): Bourgain anchor-set sampling and, per node and anchor set, the largest
// distance score s = 1 / (d + 1) to any anchor of the set and the anchor that
// attains it. The learned part (messages MLP(h_v, s * h_anchor)) lives in agents/rl.
//
// Layout: row-major num_nodes x num_sets arrays of float scores and int anchor
// ids, ready to become [n, k] tensors. Plain values; every function is pure and
// thread-safe. Randomness: core/rng.h's splitmix64 / uniform_below only.
#pragma once

#include <cstdint>
#include <vector>

#include "core/op_graph.h"

namespace aware {

// Anchor sets of node ids in [0, num_nodes). sets[j] is in draw order.
struct AnchorSets {
  int num_nodes = 0;
  std::vector<std::vector<int>> sets;
  std::vector<int> size_class;  // sets[j] belongs to class i: size floor(n / 2^(i+1))
  int num_sets() const { return static_cast<int>(sets.size()); }
};

// Bourgain schedule: m = floor(log2 n); for i = 0..m-1, floor(c * m) sets of
// floor(n / 2^(i+1)) distinct nodes drawn uniformly (partial Fisher-Yates). Sets
// are ordered by class, then draw. n < 2 or floor(c * m) == 0 gives no sets (as
// P-GNN's get_random_anchorset). Same (n, c, seed): same sets. Throws ConfigError
// when n < 0 or c < 0.
AnchorSets sample_anchor_sets(int num_nodes, double c, std::uint64_t seed);
// The number of sets sample_anchor_sets would draw: floor(c * m) * m.
int anchor_set_count(int num_nodes, double c);

// Which hop distance d(v, anchor) means.
enum class AnchorDirection {
  kUndirected,  // edges walked both ways (P-GNN)
  kToAnchor,    // directed paths v ~> anchor (a P-GNN precompute on a DiGraph)
  kFromAnchor,  // directed paths anchor ~> v
};

struct AnchorDistanceOptions {
  AnchorDirection direction = AnchorDirection::kUndirected;
  int max_hops = -1;  // d > max_hops counts as unreachable; < 0: no cut-off
};

// score[v * k + j] = max over a in sets[j] of 1 / (d(v, a) + 1), 0 when no anchor
// of the set is within max_hops. anchor[v * k + j] = the anchor attaining it; ties
// (and score 0) go to the anchor earliest in the set, as torch.max would pick, so
// the id is always a valid node (its message is 0 * h when the score is 0).
struct AnchorDistances {
  int num_nodes = 0;
  int num_sets = 0;
  std::vector<float> score;
  std::vector<int> anchor;
  float score_at(int node, int set) const {
    return score[static_cast<size_t>(node) * num_sets + set];
  }
  int anchor_at(int node, int set) const {
    return anchor[static_cast<size_t>(node) * num_sets + set];
  }
};

// Hop distances on `graph`'s edges (parallel edges count once). One multi-source
// BFS per set, level by level, so O(k (n + e)). Throws ConfigError when the sets
// were drawn for another node count or name a node out of range.
AnchorDistances anchor_distances(const OpGraph& graph, const AnchorSets& sets,
                                 const AnchorDistanceOptions& options = {});

// The same on a plain adjacency list (out-neighbours per node), for graphs that
// are not OpGraphs.
AnchorDistances anchor_distances(const std::vector<std::vector<int>>& successors,
                                 const AnchorSets& sets, const AnchorDistanceOptions& options = {});

}  // namespace aware
