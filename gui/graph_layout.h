// Layouts of an OpGraph for the graph view: node centres and sizes, and for
// each edge an optional polyline of cubic Bézier control points.
//
// Plain C++ (no Qt): the GUI turns a GraphLayout into scene items. Two engines:
// Graphviz "dot" (good drawings, slow past a few hundred nodes) and our own
// layered layout (longest-path layers, barycentre ordering sweeps, priority x
// placement) that lays out 10,000 ops in well under a second. Not thread-safe
// only in that Graphviz keeps global state: call graphviz_layout() from one
// thread at a time.
#pragma once

#include <string>
#include <vector>

#include "core/op_graph.h"

namespace aware::gui {

struct LayoutPoint {
  double x = 0;
  double y = 0;
};

struct GraphLayout {
  std::string engine;               // "dot" or "layered"
  double seconds = 0;               // wall-clock time the layout took
  std::vector<LayoutPoint> centre;  // per op id, scene units (y grows downwards)
  double node_width = 0;
  double node_height = 0;
  // Per edge id: cubic Bézier control points p0 c1 c2 p1 [c1 c2 p2 ...]; empty
  // means "draw a curve from the source's bottom to the target's top".
  std::vector<std::vector<LayoutPoint>> edge_path;
  std::vector<int> layer;  // per op id; -1 when the engine has no layers (dot)
};

// Sizes shared by both engines, in scene units.
constexpr double kNodeWidth = 120;
constexpr double kNodeHeight = 30;
constexpr double kNodeGap = 24;   // horizontal gap between neighbours in a layer
constexpr double kLayerGap = 56;  // vertical gap between layers

// Our own layered layout. Deterministic; O((V + E) log V) per sweep.
GraphLayout layered_layout(const OpGraph& graph, int sweeps = 6);

// True when the build has Graphviz and its "dot" plugin loads.
bool graphviz_available();
// Graphviz "dot" layout with spline edges. Throws aware::Error when Graphviz is
// missing or the layout fails.
GraphLayout graphviz_layout(const OpGraph& graph);

// dot for graphs of at most `graphviz_max_ops` ops (when available), else layered.
GraphLayout auto_layout(const OpGraph& graph, int graphviz_max_ops = 400);

}  // namespace aware::gui
