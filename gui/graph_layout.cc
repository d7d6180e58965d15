#include "gui/graph_layout.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "core/graph_algorithms.h"

namespace aware::gui {
namespace {

// Places one layer's nodes (already in order) as close to their wanted x as the
// minimum spacing allows: a left-to-right pass pushes right, a right-to-left
// pass pulls back, and the average of both keeps the layer centred on its wants.
void place_layer(const std::vector<int>& nodes, const std::vector<double>& want,
                 std::vector<double>& x) {
  const double pitch = kNodeWidth + kNodeGap;
  const std::size_t n = nodes.size();
  if (n == 0) return;
  std::vector<double> right(n), left(n);
  for (std::size_t i = 0; i < n; ++i) {
    right[i] = want[i];
    if (i > 0) right[i] = std::max(right[i], right[i - 1] + pitch);
  }
  for (std::size_t k = n; k-- > 0;) {
    left[k] = want[k];
    if (k + 1 < n) left[k] = std::min(left[k], left[k + 1] - pitch);
  }
  for (std::size_t i = 0; i < n; ++i) x[nodes[i]] = 0.5 * (left[i] + right[i]);
  // The average of two valid spacings can still be too tight: fix left to right.
  for (std::size_t i = 1; i < n; ++i) x[nodes[i]] = std::max(x[nodes[i]], x[nodes[i - 1]] + pitch);
}

}  // namespace

GraphLayout layered_layout(const OpGraph& graph, int sweeps) {
  const auto begin = std::chrono::steady_clock::now();
  const int n = graph.num_ops();
  GraphLayout out;
  out.engine = "layered";
  out.node_width = kNodeWidth;
  out.node_height = kNodeHeight;
  out.centre.resize(n);
  out.edge_path.resize(graph.num_edges());
  out.layer.assign(n, 0);

  // Longest-path layering from the sources.
  const std::vector<int> order = topological_order(graph);
  int num_layers = n > 0 ? 1 : 0;
  for (int v : order) {
    for (int e : graph.in_edges(v))
      out.layer[v] = std::max(out.layer[v], out.layer[graph.edge(e).src] + 1);
    num_layers = std::max(num_layers, out.layer[v] + 1);
  }
  // Sources (weights, inputs) sit just above their first consumer rather than
  // all in layer 0, so a weight does not send an edge across the whole drawing.
  for (int v = 0; v < n; ++v) {
    if (!graph.in_edges(v).empty() || graph.out_edges(v).empty()) continue;
    int first = num_layers;
    for (int e : graph.out_edges(v)) first = std::min(first, out.layer[graph.edge(e).dst]);
    out.layer[v] = std::max(0, first - 1);
  }
  std::vector<std::vector<int>> layers(num_layers);
  for (int v : order) layers[out.layer[v]].push_back(v);

  // Initial x: index in layer, centred.
  const double pitch = kNodeWidth + kNodeGap;
  std::vector<double> x(n, 0);
  for (auto& layer : layers)
    for (std::size_t i = 0; i < layer.size(); ++i)
      x[layer[i]] = (static_cast<double>(i) - 0.5 * (layer.size() - 1)) * pitch;

  // Barycentre sweeps: down uses predecessors, up uses successors. Long edges
  // have no dummy nodes (training graphs join forward and backward ops across
  // hundreds of layers); neighbours in any layer count by their current x.
  std::vector<double> key(n, 0);
  std::vector<double> want;
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    const bool down = sweep % 2 == 0;
    for (int li = 0; li < num_layers; ++li) {
      auto& layer = layers[down ? li : num_layers - 1 - li];
      for (int v : layer) {
        const auto& edges = down ? graph.in_edges(v) : graph.out_edges(v);
        if (edges.empty()) {
          key[v] = x[v];
          continue;
        }
        double sum = 0;
        for (int e : edges) sum += x[down ? graph.edge(e).src : graph.edge(e).dst];
        key[v] = sum / edges.size();
      }
      std::stable_sort(layer.begin(), layer.end(), [&](int a, int b) { return key[a] < key[b]; });
      want.resize(layer.size());
      for (std::size_t i = 0; i < layer.size(); ++i) want[i] = key[layer[i]];
      place_layer(layer, want, x);
    }
  }

  const double layer_pitch = kNodeHeight + kLayerGap;
  for (int v = 0; v < n; ++v) out.centre[v] = {x[v], out.layer[v] * layer_pitch};
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return out;
}

GraphLayout auto_layout(const OpGraph& graph, int graphviz_max_ops) {
  if (graph.num_ops() <= graphviz_max_ops && graphviz_available()) {
    try {
      return graphviz_layout(graph);
    } catch (...) {
      // Fall through to our own layout: a drawing is better than none.
    }
  }
  return layered_layout(graph);
}

}  // namespace aware::gui
