// The graph view: a layered drawing of the op graph in a QGraphicsView.
//
// One lightweight item per op and per edge. Forward ops are rectangles,
// backward ops rounded with a dashed border, update ops cut-cornered with a
// dotted border; nodes take their device's colour; edges thicken with bytes and
// turn red when they cross devices. Wheel zooms, drag pans, a click selects
// (Ctrl+click adds, Shift+drag selects a box, right click offers the moves).
// Below a zoom level no text is drawn and nodes are plain filled boxes, so a
// 10,000-op graph pans smoothly. GUI thread only.
#pragma once

#include <memory>
#include <vector>

#include <QColor>
#include <QGraphicsView>

#include "core/op_graph.h"
#include "core/placement.h"
#include "gui/graph_layout.h"

namespace aware::gui {

class NodeItem;
class EdgeItem;

// A distinct colour per device id (repeats after a dozen, darker).
QColor device_colour(int device);

class GraphView : public QGraphicsView {
  Q_OBJECT

 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Rebuilds the scene. The view keeps `graph` alive while it shows it.
  void setGraph(std::shared_ptr<const OpGraph> graph, GraphLayout layout);
  void clearGraph();
  // Colours nodes by device and marks cut edges; null clears the colouring.
  // `device_names` label the tooltips.
  void setPlacement(const Placement* placement, std::vector<std::string> device_names = {});

  int nodeItemCount() const { return static_cast<int>(nodes_.size()); }
  int edgeItemCount() const { return static_cast<int>(edges_.size()); }
  int cutEdgeCount() const;
  const GraphLayout& layout() const { return layout_; }
  bool hasGraph() const { return graph_ != nullptr; }

  // The scene item drawing `op` (owned by the scene), or null.
  QGraphicsItem* nodeItem(int op) const;
  int selectedOp() const;
  // Every selected op, in id order (click, Ctrl+click, Shift+drag a box).
  std::vector<int> selectedOps() const;
  // Selects exactly `ops` without emitting opSelected.
  void selectOps(const std::vector<int>& ops);
  // Selects every op in `op`'s row of the layered drawing (a layer of the
  // network's dataflow). Returns how many.
  int selectLayerOf(int op);
  // Selects `op` (-1 clears) without emitting opSelected; centres it when asked.
  void selectOp(int op, bool centre = true);
  // Next op (after the current selection) whose name contains `text`,
  // case-insensitively; selects, centres and zooms to it. Returns -1 when none.
  int findOp(const QString& text);
  void fitAll();
  // Zooms so nodes are drawn with their names (scale 1 = scene units as pixels).
  void zoomTo(double scale);
  double zoom() const;

  // The tooltip text for `op` (its numbers and device).
  QString opToolTip(int op) const;

 Q_SIGNALS:
  void opSelected(int op);
  // A right click on the drawing: the window offers the what-if menu there.
  void editMenuRequested(const QPoint& global_pos);

 protected:
  void wheelEvent(QWheelEvent* event) override;
  bool viewportEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  void onSelectionChanged();

  std::shared_ptr<const OpGraph> graph_;
  GraphLayout layout_;
  const Placement* placement_ = nullptr;
  Placement placement_copy_;
  std::vector<std::string> device_names_;
  std::vector<NodeItem*> nodes_;
  std::vector<EdgeItem*> edges_;
  bool programmatic_ = false;
  int last_found_ = -1;
  bool fitted_ = false;  // still showing the whole graph: refit on resize
};

}  // namespace aware::gui
