#include "gui/graph_view.h"

#include <algorithm>
#include <cmath>

#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QToolTip>
#include <QWheelEvent>

#include "core/units.h"
#include "gui/trace_analysis.h"

namespace aware::gui {

QColor device_colour(int device) {
  static const QColor kPalette[] = {
      QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0x59, 0xa1, 0x4f),
      QColor(0xb0, 0x7a, 0xa1), QColor(0xed, 0xc9, 0x48), QColor(0x76, 0xb7, 0xb2),
      QColor(0xff, 0x9d, 0xa7), QColor(0x9c, 0x75, 0x5f), QColor(0xba, 0xb0, 0xac),
      QColor(0x8c, 0xd1, 0x7d), QColor(0x86, 0xbc, 0xb6), QColor(0xd3, 0x72, 0x95)};
  if (device < 0) return QColor(0xd9, 0xd9, 0xd9);
  const int n = static_cast<int>(std::size(kPalette));
  QColor c = kPalette[device % n];
  return device >= n ? c.darker(100 + 30 * (device / n)) : c;
}

// One op. Paints itself cheaply when small on screen.
class NodeItem : public QGraphicsItem {
 public:
  NodeItem(int op, Phase phase, QString name, double w, double h)
      : op_(op), phase_(phase), name_(std::move(name)), rect_(-w / 2, -h / 2, w, h) {
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(false);
    setZValue(1);
  }
  int op() const { return op_; }
  void setColour(QColor c) {
    colour_ = c;
    update();
  }
  QRectF boundingRect() const override { return rect_.adjusted(-3, -3, 3, 3); }
  QPainterPath shape() const override {
    QPainterPath p;
    p.addRect(rect_);
    return p;
  }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) override {
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const bool selected = isSelected();
    if (lod < 0.12 && !selected) {
      painter->fillRect(rect_, colour_);
      return;
    }
    QPen pen(selected ? QColor(Qt::black) : colour_.darker(170), selected ? 4 : 1.5);
    if (phase_ == Phase::kBackward) pen.setStyle(Qt::DashLine);
    if (phase_ == Phase::kUpdate) pen.setStyle(Qt::DotLine);
    painter->setPen(pen);
    painter->setBrush(selected ? colour_.lighter(130) : colour_);
    if (phase_ == Phase::kForward) {
      painter->drawRect(rect_);
    } else if (phase_ == Phase::kBackward) {
      painter->drawRoundedRect(rect_, rect_.height() / 2, rect_.height() / 2);
    } else {
      const double c = rect_.height() / 3;
      const QPointF pts[] = {
          {rect_.left() + c, rect_.top()},     {rect_.right() - c, rect_.top()},
          {rect_.right(), rect_.center().y()}, {rect_.right() - c, rect_.bottom()},
          {rect_.left() + c, rect_.bottom()},  {rect_.left(), rect_.center().y()}};
      painter->drawPolygon(pts, 6);
    }
    if (lod >= 0.45) {
      painter->setPen(Qt::black);
      QFont f = painter->font();
      f.setPointSizeF(8);
      painter->setFont(f);
      const QRectF text = rect_.adjusted(6, 0, -6, 0);
      painter->drawText(text, Qt::AlignCenter,
                        painter->fontMetrics().elidedText(name_, Qt::ElideMiddle,
                                                          static_cast<int>(text.width())));
    }
  }

 private:
  int op_;
  Phase phase_;
  QString name_;
  QRectF rect_;
  QColor colour_ = device_colour(-1);
};

// One edge: a cubic path, width by bytes, red when it crosses devices.
class EdgeItem : public QGraphicsItem {
 public:
  EdgeItem(QPainterPath path, double width) : path_(std::move(path)), width_(width) {
    setAcceptedMouseButtons(Qt::NoButton);
    setZValue(0);
    bounds_ = path_.boundingRect().adjusted(-width_, -width_, width_, width_);
  }
  void setCut(bool cut) {
    if (cut == cut_) return;
    cut_ = cut;
    setZValue(cut ? 0.5 : 0);
    update();
  }
  bool cut() const { return cut_; }
  QRectF boundingRect() const override { return bounds_; }
  QPainterPath shape() const override { return QPainterPath(); }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    QPen pen(cut_ ? QColor(0xd6, 0x27, 0x28) : QColor(0x80, 0x80, 0x80, 150), width_);
    pen.setCapStyle(Qt::FlatCap);
    painter->setPen(pen);
    painter->setBrush(Qt::NoBrush);
    if (path_.elementCount() == 2)
      painter->drawLine(QPointF(path_.elementAt(0)), QPointF(path_.elementAt(1)));
    else
      painter->drawPath(path_);
  }

 private:
  QPainterPath path_;
  double width_;
  QRectF bounds_;
  bool cut_ = false;
};

namespace {

double edge_width(double bytes) {
  // 64 KB -> ~1.7, 1 MB -> ~3, 16 MB -> ~4.5, 1 GB -> ~7.
  return std::clamp(1.0 + 1.2 * std::log10(std::max(bytes, 1e4) / 2e4), 0.8, 8.0);
}

}  // namespace

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
  setScene(new QGraphicsScene(this));
  setDragMode(ScrollHandDrag);
  setTransformationAnchor(AnchorUnderMouse);
  setOptimizationFlags(DontSavePainterState | DontAdjustForAntialiasing);
  setViewportUpdateMode(SmartViewportUpdate);
  setBackgroundBrush(QColor(0xfb, 0xfb, 0xf8));
  connect(scene(), &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
}

// As in ~TimelineView: the scene outlives this class's part of the object, and
// its items' destruction may emit selectionChanged.
GraphView::~GraphView() { scene()->disconnect(this); }

void GraphView::clearGraph() {
  programmatic_ = true;
  scene()->clear();
  programmatic_ = false;
  nodes_.clear();
  edges_.clear();
  graph_.reset();
  placement_ = nullptr;
  last_found_ = -1;
}

void GraphView::setGraph(std::shared_ptr<const OpGraph> graph, GraphLayout layout) {
  clearGraph();
  graph_ = std::move(graph);
  layout_ = std::move(layout);
  const OpGraph& g = *graph_;
  // Bulk insertion into a scene no view shows yet (so Qt tracks no dirty
  // regions while 300,000 items arrive), with no index while adding, then one
  // BSP build; the empty old scene goes.
  auto* fresh = new QGraphicsScene(this);
  fresh->setItemIndexMethod(QGraphicsScene::NoIndex);
  setRenderHint(QPainter::Antialiasing, g.num_ops() <= 2000 && g.num_edges() <= 3000);
  const double h = layout_.node_height;
  nodes_.reserve(g.num_ops());
  for (int v = 0; v < g.num_ops(); ++v) {
    auto* item =
        new NodeItem(v, g.op(v).phase, QString::fromStdString(g.op(v).name), layout_.node_width, h);
    item->setPos(layout_.centre[v].x, layout_.centre[v].y);
    fresh->addItem(item);
    nodes_.push_back(item);
  }
  edges_.reserve(g.num_edges());
  for (int e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    QPainterPath path;
    const auto& pts = layout_.edge_path[e];
    if (pts.size() >= 4) {
      path.moveTo(pts[0].x, pts[0].y);
      for (std::size_t i = 1; i + 2 < pts.size(); i += 3)
        path.cubicTo(pts[i].x, pts[i].y, pts[i + 1].x, pts[i + 1].y, pts[i + 2].x, pts[i + 2].y);
    } else {
      const QPointF a(layout_.centre[edge.src].x, layout_.centre[edge.src].y + h / 2);
      const QPointF b(layout_.centre[edge.dst].x, layout_.centre[edge.dst].y - h / 2);
      path.moveTo(a);
      // Short edges curve; long ones (forward to backward across hundreds of
      // layers) stay straight: the raster engine clips a line cheaply but
      // flattens a long curve in full, which made panning crawl.
      if (std::abs(b.y() - a.y()) <= 4 * (h + kLayerGap)) {
        const double bend = std::min(std::abs(b.y() - a.y()) / 2, 60.0);
        path.cubicTo(a + QPointF(0, bend), b - QPointF(0, bend), b);
      } else {
        path.lineTo(b);
      }
    }
    auto* item = new EdgeItem(path, edge_width(edge.bytes));
    fresh->addItem(item);
    edges_.push_back(item);
  }
  fresh->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  fresh->setSceneRect(fresh->itemsBoundingRect().adjusted(-40, -40, 40, 40));
  QGraphicsScene* old = scene();
  old->disconnect(this);
  setScene(fresh);
  connect(fresh, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
  delete old;
  fitAll();
}

void GraphView::setPlacement(const Placement* placement, std::vector<std::string> device_names) {
  device_names_ = std::move(device_names);
  placement_ = nullptr;
  if (placement != nullptr && graph_ && placement->size() == graph_->num_ops()) {
    placement_copy_ = *placement;
    placement_ = &placement_copy_;
  }
  if (!graph_) return;
  for (int v = 0; v < graph_->num_ops(); ++v)
    nodes_[v]->setColour(device_colour(placement_ ? (*placement_)[v] : -1));
  for (int e = 0; e < graph_->num_edges(); ++e) {
    const Edge& edge = graph_->edge(e);
    edges_[e]->setCut(placement_ != nullptr && (*placement_)[edge.src] != (*placement_)[edge.dst]);
  }
}

int GraphView::cutEdgeCount() const {
  return static_cast<int>(
      std::count_if(edges_.begin(), edges_.end(), [](const EdgeItem* e) { return e->cut(); }));
}

QGraphicsItem* GraphView::nodeItem(int op) const {
  return op >= 0 && op < static_cast<int>(nodes_.size()) ? nodes_[op] : nullptr;
}

int GraphView::selectedOp() const {
  for (QGraphicsItem* item : scene()->selectedItems())
    if (auto* node = dynamic_cast<NodeItem*>(item)) return node->op();
  return -1;
}

std::vector<int> GraphView::selectedOps() const {
  std::vector<int> ops;
  for (QGraphicsItem* item : scene()->selectedItems())
    if (auto* node = dynamic_cast<NodeItem*>(item)) ops.push_back(node->op());
  std::sort(ops.begin(), ops.end());
  return ops;
}

void GraphView::selectOps(const std::vector<int>& ops) {
  programmatic_ = true;
  scene()->clearSelection();
  for (int op : ops)
    if (op >= 0 && op < static_cast<int>(nodes_.size())) nodes_[op]->setSelected(true);
  programmatic_ = false;
}

int GraphView::selectLayerOf(int op) {
  if (op < 0 || op >= static_cast<int>(nodes_.size()) || op >= static_cast<int>(layout_.layer.size())) return 0;
  std::vector<int> ops;
  // Graphviz's drawing has no layer numbers: its rows are the nodes at one height.
  const bool rows = layout_.layer[op] < 0;
  for (int v = 0; v < static_cast<int>(layout_.layer.size()); ++v)
    if (rows ? std::abs(layout_.centre[v].y - layout_.centre[op].y) < 1.0 : layout_.layer[v] == layout_.layer[op])
      ops.push_back(v);
  selectOps(ops);
  Q_EMIT opSelected(op);
  return static_cast<int>(ops.size());
}

void GraphView::mousePressEvent(QMouseEvent* event) {
  // Shift+drag draws a selection box; a plain drag pans.
  if (event->button() == Qt::LeftButton && (event->modifiers() & Qt::ShiftModifier))
    setDragMode(RubberBandDrag);
  QGraphicsView::mousePressEvent(event);
}

void GraphView::mouseReleaseEvent(QMouseEvent* event) {
  QGraphicsView::mouseReleaseEvent(event);
  if (dragMode() != ScrollHandDrag) setDragMode(ScrollHandDrag);
}

void GraphView::contextMenuEvent(QContextMenuEvent* event) {
  if (graph_ == nullptr) return;
  // A right click on an unselected op selects it first.
  if (auto* node = dynamic_cast<NodeItem*>(itemAt(event->pos())); node != nullptr && !node->isSelected()) {
    selectOp(node->op(), false);
    Q_EMIT opSelected(node->op());
  }
  Q_EMIT editMenuRequested(event->globalPos());
  event->accept();
}

void GraphView::selectOp(int op, bool centre) {
  programmatic_ = true;
  scene()->clearSelection();
  if (op >= 0 && op < static_cast<int>(nodes_.size())) {
    nodes_[op]->setSelected(true);
    if (centre) {
      centerOn(nodes_[op]);
      fitted_ = false;
    }
  }
  programmatic_ = false;
}

void GraphView::onSelectionChanged() {
  if (programmatic_) return;
  Q_EMIT opSelected(selectedOp());
}

int GraphView::findOp(const QString& text) {
  if (!graph_ || text.isEmpty()) return -1;
  const int n = graph_->num_ops();
  const int from = selectedOp() >= 0 ? selectedOp() : last_found_;
  for (int k = 1; k <= n; ++k) {
    const int v = (from + k + n) % n;
    if (QString::fromStdString(graph_->op(v).name).contains(text, Qt::CaseInsensitive)) {
      last_found_ = v;
      if (zoom() < 0.6) zoomTo(0.8);
      selectOp(v, true);
      Q_EMIT opSelected(v);
      return v;
    }
  }
  return -1;
}

void GraphView::fitAll() {
  // Not scene()->items().isEmpty(): that lists (and sorts) every item, about a
  // second for a 100,000-op graph, and fitAll runs on every resize.
  if (graph_ == nullptr || graph_->num_ops() == 0) return;
  fitInView(sceneRect(), Qt::KeepAspectRatio);
  // A very tall graph fitted whole is a thin line: keep nodes at least a few pixels wide.
  if (zoom() < 0.02) zoomTo(0.02);
  fitted_ = true;
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  if (fitted_) fitAll();
}

double GraphView::zoom() const { return transform().m11(); }

void GraphView::zoomTo(double scale) {
  fitted_ = false;
  const double factor = scale / std::max(zoom(), 1e-9);
  QGraphicsView::scale(factor, factor);
}

void GraphView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  const double factor = std::pow(1.2, steps);
  const double target = std::clamp(zoom() * factor, 0.005, 8.0);
  zoomTo(target);
  event->accept();
}

QString GraphView::opToolTip(int op) const {
  if (!graph_ || op < 0 || op >= graph_->num_ops()) return {};
  const Op& o = graph_->op(op);
  QString device = QStringLiteral("not placed");
  if (placement_ != nullptr) {
    const int d = (*placement_)[op];
    device = d < static_cast<int>(device_names_.size()) ? QString::fromStdString(device_names_[d])
                                                        : QString::number(d);
  }
  return QStringLiteral(
             "<b>%1</b> (%2, %3)<br>device: %4<br>%5 GFLOP · outputs %6 · params %7"
             "<br>inputs %8 · consumers %9")
      .arg(QString::fromStdString(o.name).toHtmlEscaped(), QString::fromStdString(o.type),
           QString::fromUtf8(phase_name(o.phase)), device)
      .arg(o.flops / 1e9, 0, 'f', 3)
      .arg(QString::fromStdString(format_bytes(o.total_output_bytes(), BytesStyle::kCompact)),
           QString::fromStdString(format_bytes(o.param_bytes, BytesStyle::kCompact)))
      .arg(graph_->in_edges(op).size())
      .arg(graph_->out_edges(op).size());
}

bool GraphView::viewportEvent(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    for (QGraphicsItem* item : items(help->pos())) {
      if (auto* node = dynamic_cast<NodeItem*>(item)) {
        QToolTip::showText(help->globalPos(), opToolTip(node->op()), this);
        return true;
      }
    }
    QToolTip::hideText();
    return true;
  }
  return QGraphicsView::viewportEvent(event);
}

}  // namespace aware::gui
