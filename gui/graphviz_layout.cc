// Graphviz "dot" layout through libgvc/libcgraph. Graphviz keeps global state,
// so this is called from the GUI thread only.
#include <chrono>
#include <string>

#include "core/errors.h"
#include "gui/graph_layout.h"

#ifdef AWARE_HAVE_GRAPHVIZ
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#endif

namespace aware::gui {

#ifdef AWARE_HAVE_GRAPHVIZ
namespace {

// cgraph takes char* for names that it copies; keep the strings alive meanwhile.
char* mutable_chars(std::string& s) { return s.data(); }

// Declares an attribute for every graph / node / edge of `g` with `value` as
// its default (so no per-object strings are needed).
void set_default(Agraph_t* g, int kind, const char* name, const std::string& value) {
  std::string n = name, v = value;
  agattr(g, kind, mutable_chars(n), mutable_chars(v));
}

}  // namespace

bool graphviz_available() {
  static const bool available = [] {
    GVC_t* gvc = gvContext();
    std::string name = "probe";
    Agraph_t* g = agopen(mutable_chars(name), Agdirected, nullptr);
    std::string a = "a";
    agnode(g, mutable_chars(a), 1);
    const bool ok = gvLayout(gvc, g, "dot") == 0;
    if (ok) gvFreeLayout(gvc, g);
    agclose(g);
    gvFreeContext(gvc);
    return ok;
  }();
  return available;
}

GraphLayout graphviz_layout(const OpGraph& graph) {
  const auto begin = std::chrono::steady_clock::now();
  GVC_t* gvc = gvContext();
  std::string gname = "g";
  Agraph_t* g = agopen(mutable_chars(gname), Agdirected, nullptr);
  // Sizes in inches (72 points); labels are drawn by Qt, so Graphviz gets none.
  set_default(g, AGRAPH, "nodesep", std::to_string(kNodeGap / 72.0));
  set_default(g, AGRAPH, "ranksep", std::to_string(kLayerGap / 72.0));
  // Network simplex (ranks and x coordinates) bounded to 5 iterations per node:
  // unbounded, it took 16 s on a 3-layer GPT training step (256 ops) and over 200
  // s on 4 layers (333 ops), with its residual and weight edges; bounded, 0.5 s and
  // 1.5 s, the drawing much the same.
  set_default(g, AGRAPH, "nslimit", "5");
  set_default(g, AGRAPH, "nslimit1", "5");
  set_default(g, AGNODE, "shape", "box");
  set_default(g, AGNODE, "fixedsize", "true");
  set_default(g, AGNODE, "label", "");
  set_default(g, AGNODE, "width", std::to_string(kNodeWidth / 72.0));
  set_default(g, AGNODE, "height", std::to_string(kNodeHeight / 72.0));
  std::vector<Agnode_t*> nodes(graph.num_ops());
  for (int v = 0; v < graph.num_ops(); ++v) {
    std::string id = "n" + std::to_string(v);
    nodes[v] = agnode(g, mutable_chars(id), 1);
  }
  std::vector<Agedge_t*> edges(graph.num_edges());
  for (int e = 0; e < graph.num_edges(); ++e) {
    std::string id = "e" + std::to_string(e);
    edges[e] = agedge(g, nodes[graph.edge(e).src], nodes[graph.edge(e).dst], mutable_chars(id), 1);
  }
  if (gvLayout(gvc, g, "dot") != 0) {
    agclose(g);
    gvFreeContext(gvc);
    throw Error("graphviz: dot layout failed for graph '" + graph.name() + "'");
  }
  GraphLayout out;
  out.engine = "dot";
  out.node_width = kNodeWidth;
  out.node_height = kNodeHeight;
  out.layer.assign(graph.num_ops(), -1);
  out.centre.resize(graph.num_ops());
  out.edge_path.resize(graph.num_edges());
  const double top = GD_bb(g).UR.y;  // Graphviz y grows upwards; the scene's downwards
  for (int v = 0; v < graph.num_ops(); ++v)
    out.centre[v] = {ND_coord(nodes[v]).x, top - ND_coord(nodes[v]).y};
  for (int e = 0; e < graph.num_edges(); ++e) {
    const splines* spl = ED_spl(edges[e]);
    if (spl == nullptr || spl->size < 1) continue;
    const bezier& bz = spl->list[0];
    auto& path = out.edge_path[e];
    for (int i = 0; i < bz.size; ++i) path.push_back({bz.list[i].x, top - bz.list[i].y});
    // With an arrowhead the curve stops short of the node; end it at the tip.
    if (bz.eflag && !path.empty()) {
      path.back() = {bz.ep.x, top - bz.ep.y};
    }
    if ((path.size() - 1) % 3 != 0) path.clear();  // not a cubic chain: draw our own
  }
  gvFreeLayout(gvc, g);
  agclose(g);
  gvFreeContext(gvc);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return out;
}

#else

bool graphviz_available() { return false; }
GraphLayout graphviz_layout(const OpGraph& graph) {
  throw Error("graphviz: this build has no Graphviz (graph '" + graph.name() + "')");
}

#endif

}  // namespace aware::gui
