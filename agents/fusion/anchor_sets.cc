#include "agents/fusion/anchor_sets.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.h"
#include "core/rng.h"

namespace aware {
namespace {

int floor_log2(int n) {
  int m = 0;
  while ((n >> (m + 1)) > 0) ++m;
  return m;
}

int copies_per_class(int num_nodes, double c) {
  if (num_nodes < 2) return 0;
  return static_cast<int>(std::floor(c * floor_log2(num_nodes)));
}

}  // namespace

int anchor_set_count(int num_nodes, double c) {
  if (num_nodes < 0 || !(c >= 0)) throw ConfigError("anchor sets: need num_nodes >= 0 and c >= 0");
  return copies_per_class(num_nodes, c) * (num_nodes < 2 ? 0 : floor_log2(num_nodes));
}

AnchorSets sample_anchor_sets(int num_nodes, double c, std::uint64_t seed) {
  const int total = anchor_set_count(num_nodes, c);
  AnchorSets out;
  out.num_nodes = num_nodes;
  if (total == 0) return out;
  const int m = floor_log2(num_nodes);
  const int copies = copies_per_class(num_nodes, c);
  std::uint64_t state = seed;
  std::vector<int> pool(num_nodes);
  out.sets.reserve(total);
  for (int i = 0; i < m; ++i) {
    const int size = num_nodes >> (i + 1);  // floor(n / 2^(i+1))
    for (int copy = 0; copy < copies; ++copy) {
      // Partial Fisher-Yates on a fresh identity pool: the first `size` entries
      // are a uniform draw without replacement, in draw order.
      for (int v = 0; v < num_nodes; ++v) pool[v] = v;
      for (int k = 0; k < size; ++k) {
        const int pick = k + uniform_below(state, num_nodes - k);
        std::swap(pool[k], pool[pick]);
      }
      out.sets.emplace_back(pool.begin(), pool.begin() + size);
      out.size_class.push_back(i);
    }
  }
  return out;
}

AnchorDistances anchor_distances(const std::vector<std::vector<int>>& successors,
                                 const AnchorSets& sets, const AnchorDistanceOptions& options) {
  const int n = static_cast<int>(successors.size());
  if (sets.num_nodes != n)
    throw ConfigError("anchor sets were drawn for " + std::to_string(sets.num_nodes) +
                      " nodes, the graph has " + std::to_string(n));
  // Neighbour lists in the direction BFS walks: from the anchors outwards.
  // kToAnchor measures v ~> a, so the search from a follows edges backwards.
  std::vector<std::vector<int>> walk(n);
  for (int u = 0; u < n; ++u) {
    for (int v : successors[u]) {
      if (v < 0 || v >= n)
        throw ConfigError("anchor distances: edge to node " + std::to_string(v) + " out of range");
      if (options.direction != AnchorDirection::kToAnchor) walk[u].push_back(v);
      if (options.direction != AnchorDirection::kFromAnchor) walk[v].push_back(u);
    }
  }
  for (auto& list : walk) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }

  AnchorDistances out;
  out.num_nodes = n;
  out.num_sets = sets.num_sets();
  const size_t k = static_cast<size_t>(out.num_sets);
  out.score.assign(static_cast<size_t>(n) * k, 0.0f);
  out.anchor.assign(static_cast<size_t>(n) * k, -1);
  std::vector<int> dist(n, -1);
  std::vector<int> label(n, -1);  // position in the set of the nearest anchor
  std::vector<int> frontier, next, touched;
  for (size_t j = 0; j < k; ++j) {
    const std::vector<int>& set = sets.sets[j];
    if (set.empty()) continue;
    frontier.clear();
    touched.clear();
    for (int pos = 0; pos < static_cast<int>(set.size()); ++pos) {
      const int a = set[pos];
      if (a < 0 || a >= n)
        throw ConfigError("anchor set names node " + std::to_string(a) + " out of range");
      if (dist[a] >= 0) continue;  // a repeated anchor keeps its first position
      dist[a] = 0;
      label[a] = pos;
      frontier.push_back(a);
      touched.push_back(a);
    }
    // Level-synchronous BFS: a node's label is the smallest set position among
    // the equally near anchors, whatever order the frontier is in.
    for (int d = 0; !frontier.empty() && (options.max_hops < 0 || d < options.max_hops); ++d) {
      next.clear();
      for (int u : frontier) {
        for (int w : walk[u]) {
          if (dist[w] < 0) {
            dist[w] = d + 1;
            label[w] = label[u];
            next.push_back(w);
            touched.push_back(w);
          } else if (dist[w] == d + 1 && label[u] < label[w]) {
            label[w] = label[u];
          }
        }
      }
      frontier.swap(next);
    }
    for (int v = 0; v < n; ++v) {
      const size_t at = static_cast<size_t>(v) * k + j;
      if (dist[v] >= 0) {
        out.score[at] = 1.0f / static_cast<float>(dist[v] + 1);
        out.anchor[at] = set[label[v]];
      } else {
        out.anchor[at] = set.front();
      }
    }
    for (int v : touched) dist[v] = -1, label[v] = -1;
  }
  return out;
}

AnchorDistances anchor_distances(const OpGraph& graph, const AnchorSets& sets,
                                 const AnchorDistanceOptions& options) {
  std::vector<std::vector<int>> successors(graph.num_ops());
  for (const Edge& e : graph.edges()) successors[e.src].push_back(e.dst);
  return anchor_distances(successors, sets, options);
}

}  // namespace aware
