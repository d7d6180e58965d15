#include "gui/timeline_view.h"

#include <algorithm>
#include <cmath>

#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QPainter>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>

#include "gui/graph_view.h"

namespace aware::gui {

namespace {
constexpr double kLaneHeight = 28;
constexpr double kBarHeight = 20;
constexpr double kHeaderWidth = 150;  // pixels of pinned lane names
constexpr double kRulerHeight = 22;   // pixels of pinned time ruler
// Scene x is time in µs scaled by this, so scene units stay near pixels at fit.
constexpr double kSceneUnitsPerUs = 1.0;
}  // namespace

// One bar. Its label is drawn in device pixels, so it does not stretch when
// only the time axis is zoomed.
class BarItem : public QGraphicsItem {
 public:
  BarItem(TimelineView::Bar bar, QColor colour, QString label)
      : bar_(bar), colour_(colour), label_(std::move(label)) {
    const double y = bar.lane * kLaneHeight + (kLaneHeight - kBarHeight) / 2;
    rect_ = QRectF(bar.start_us * kSceneUnitsPerUs, y,
                   std::max(1e-3, (bar.end_us - bar.start_us) * kSceneUnitsPerUs), kBarHeight);
    setFlag(ItemIsSelectable);
    setZValue(bar.critical ? 2 : 1);
  }
  const TimelineView::Bar& bar() const { return bar_; }
  QRectF boundingRect() const override { return rect_; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    const QTransform world = painter->worldTransform();
    QRectF px = world.mapRect(rect_);
    if (px.width() < 1) px.setWidth(1);  // every bar stays visible
    painter->save();
    painter->resetTransform();
    painter->fillRect(px, isSelected() ? colour_.lighter(140) : colour_);
    if (isSelected()) {
      painter->setPen(QPen(Qt::black, 3));
      painter->drawRect(px);
    } else if (bar_.critical) {
      painter->setPen(QPen(QColor(0xd6, 0x27, 0x28), 2));
      painter->drawRect(px.adjusted(1, 1, -1, -1));
    } else if (px.width() > 4) {
      painter->setPen(QPen(colour_.darker(150), 1));
      painter->drawRect(px);
    }
    if (px.width() > 40) {
      painter->setPen(Qt::black);
      QFont f = painter->font();
      f.setPointSizeF(7.5);
      painter->setFont(f);
      const QRectF text = px.adjusted(3, 0, -3, 0);
      painter->drawText(text, Qt::AlignVCenter | Qt::AlignLeft,
                        painter->fontMetrics().elidedText(label_, Qt::ElideRight,
                                                          static_cast<int>(text.width())));
    }
    painter->restore();
  }

 private:
  TimelineView::Bar bar_;
  QColor colour_;
  QString label_;
  QRectF rect_;
};

TimelineView::TimelineView(QWidget* parent) : QGraphicsView(parent) {
  setScene(new QGraphicsScene(this));
  setDragMode(ScrollHandDrag);
  setTransformationAnchor(AnchorUnderMouse);
  setViewportUpdateMode(FullViewportUpdate);  // pinned header and ruler redraw with the view
  setViewportMargins(0, 0, 0, 0);
  setAlignment(Qt::AlignLeft | Qt::AlignTop);
  connect(scene(), &QGraphicsScene::selectionChanged, this, &TimelineView::onSelectionChanged);
  connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, [this] {
    if (!programmatic_window_) Q_EMIT timeWindowChanged();
  });
}

// The scene is a child QObject, deleted only in ~QObject, after this class's part
// of the object is gone; its items' destruction emits selectionChanged, which
// would then call onSelectionChanged on a half-destroyed view (UBSan: a bad
// downcast). Disconnect first.
TimelineView::~TimelineView() { scene()->disconnect(this); }

void TimelineView::clearTrace() {
  programmatic_ = true;
  scene()->clear();
  programmatic_ = false;
  bars_.clear();
  bar_of_op_.clear();
  lanes_ = {};
  graph_.reset();
  end_us_ = 0;
  viewport()->update();
}

void TimelineView::setTrace(std::shared_ptr<const OpGraph> graph, const Cluster& cluster,
                            const Trace& trace, const TraceCriticalPath& path) {
  clearTrace();
  graph_ = std::move(graph);
  lanes_ = timeline_lanes(cluster, trace);
  std::vector<char> op_critical(graph_->num_ops(), 0), transfer_critical(trace.transfers.size(), 0);
  for (int op : path.ops) op_critical[op] = 1;
  for (int t : path.transfers) transfer_critical[t] = 1;
  bar_of_op_.assign(graph_->num_ops(), -1);
  scene()->setItemIndexMethod(QGraphicsScene::NoIndex);
  for (const OpSpan& s : trace.ops) {
    if (s.op < 0 || s.op >= graph_->num_ops()) continue;
    Bar b{s.op,       -1,       std::clamp(s.device, 0, std::max(0, lanes_.num_device_lanes - 1)),
          s.start_us, s.end_us, op_critical[s.op] != 0};
    const Op& op = graph_->op(s.op);
    QColor c = device_colour(s.device);
    if (op.phase == Phase::kBackward) c = c.darker(125);
    if (op.phase == Phase::kUpdate) c = c.lighter(135);
    auto* item = new BarItem(b, c, QString::fromStdString(op.name));
    scene()->addItem(item);
    bar_of_op_[s.op] = static_cast<int>(bars_.size());
    bars_.push_back(item);
    end_us_ = std::max(end_us_, s.end_us);
  }
  const QColor transfer_colour(0x7f, 0x8c, 0x9d);
  for (int t = 0; t < static_cast<int>(trace.transfers.size()); ++t) {
    const TransferSpan& tr = trace.transfers[t];
    std::vector<int> lanes;
    for (int c : tr.channels) lanes.push_back(lanes_.lane_of_channel.at(c));
    if (tr.channels.empty()) {
      std::string bus = tr.lane;
      if (bus.empty() && tr.src_device >= 0 && tr.src_device < cluster.num_devices())
        bus = "bus " + cluster.device(tr.src_device).name;
      lanes.push_back(lanes_.lane_of_bus.at(bus));
    }
    const QString label = tr.src_op >= 0 && tr.src_op < graph_->num_ops()
                              ? QString::fromStdString(graph_->op(tr.src_op).name)
                              : QString();
    for (int lane : lanes) {
      Bar b{tr.src_op, t, lane, tr.start_us, tr.end_us, transfer_critical[t] != 0};
      auto* item = new BarItem(b, transfer_colour, label);
      scene()->addItem(item);
      bars_.push_back(item);
    }
    end_us_ = std::max(end_us_, tr.end_us);
  }
  scene()->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  scene()->setSceneRect(0, 0, std::max(1.0, end_us_ * kSceneUnitsPerUs),
                        lanes_.names.size() * kLaneHeight);
  fitAll();
}

TimelineView::Bar TimelineView::bar(int i) const { return bars_.at(i)->bar(); }

double TimelineView::fitPixelsPerUs() const {
  // The width left of the pinned header, less a margin on the right.
  const double width = std::max(50.0, viewport()->width() - kHeaderWidth - 10);
  return width / std::max(1.0, fitSpanUs());
}

double TimelineView::pixelsPerUs() const { return transform().m11() * kSceneUnitsPerUs; }

double TimelineView::leftUs() const {
  return mapToScene(QPoint(static_cast<int>(kHeaderWidth), 0)).x() / kSceneUnitsPerUs;
}

void TimelineView::updateSceneRect() {
  const double sx = transform().m11();
  // Left: the header's width in pixels before t = 0; right: 8 pixels after the
  // span, so that at the fit scale the rect is 2 pixels narrower than the
  // viewport (rounding must not conjure a scroll bar). Recomputed on every zoom:
  // a rect fixed at the fit scale would hide the step's end when zoomed in.
  setSceneRect(QRectF(-kHeaderWidth / sx, -kRulerHeight,
                      std::max(1.0, fitSpanUs()) * kSceneUnitsPerUs + (kHeaderWidth + 8) / sx,
                      lanes_.names.size() * kLaneHeight + kRulerHeight + 4));
}

void TimelineView::fitAll() {
  if (bars_.empty()) return;
  // Fit the time axis to the width left of the pinned header; lanes at pixel height.
  programmatic_window_ = true;
  setTransform(QTransform::fromScale(fitPixelsPerUs() / kSceneUnitsPerUs, 1));
  setViewportMargins(0, 0, 0, 0);
  updateSceneRect();
  horizontalScrollBar()->setValue(horizontalScrollBar()->minimum());
  verticalScrollBar()->setValue(verticalScrollBar()->minimum());
  programmatic_window_ = false;
  Q_EMIT fitted();
}

void TimelineView::setTimeWindow(double pixels_per_us, double left_us) {
  if (!(pixels_per_us > 0) || bars_.empty()) return;
  programmatic_window_ = true;
  const int vertical = verticalScrollBar()->value();
  setTransform(QTransform::fromScale(pixels_per_us / kSceneUnitsPerUs, 1));
  updateSceneRect();
  verticalScrollBar()->setValue(vertical);
  // The scroll value is in device pixels; correct the (rounded) first guess once.
  QScrollBar* h = horizontalScrollBar();
  for (int attempt = 0; attempt < 2; ++attempt) {
    const double error_px = (left_us - leftUs()) * pixels_per_us;
    if (std::abs(error_px) < 0.5) break;
    h->setValue(h->value() + static_cast<int>(std::lround(error_px)));
  }
  programmatic_window_ = false;
  viewport()->update();
}

void TimelineView::zoomTimeBy(double factor) {
  const int x = static_cast<int>((kHeaderWidth + viewport()->width()) / 2);
  zoomAbout(factor, x);
}

void TimelineView::zoomAbout(double factor, int x) {
  const double ppu = pixelsPerUs() * factor;
  if (bars_.empty() || !(ppu > 1e-6 * kSceneUnitsPerUs) || ppu > 1e4 * kSceneUnitsPerUs) return;
  // Keep the time under pixel x where it is.
  const double at_us = mapToScene(QPoint(x, 0)).x() / kSceneUnitsPerUs;
  setTimeWindow(ppu, at_us - (x - kHeaderWidth) / ppu);
  Q_EMIT timeWindowChanged();
}

void TimelineView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  fitAll();
}

int TimelineView::selectedOp() const {
  for (QGraphicsItem* item : scene()->selectedItems())
    if (auto* bar = dynamic_cast<BarItem*>(item)) return bar->bar().op;
  return -1;
}

void TimelineView::selectOp(int op, bool centre) {
  programmatic_ = true;
  scene()->clearSelection();
  if (op >= 0 && op < static_cast<int>(bar_of_op_.size()) && bar_of_op_[op] >= 0) {
    BarItem* item = bars_[bar_of_op_[op]];
    item->setSelected(true);
    if (centre) centerOn(item);
  }
  programmatic_ = false;
}

void TimelineView::onSelectionChanged() {
  if (programmatic_) return;
  Q_EMIT opSelected(selectedOp());
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double factor = std::pow(1.25, event->angleDelta().y() / 120.0);
  zoomAbout(factor, static_cast<int>(event->position().x()));
  event->accept();
}

void TimelineView::drawBackground(QPainter* painter, const QRectF& rect) {
  painter->fillRect(rect, QColor(0xff, 0xff, 0xff));
  for (int lane = 0; lane < static_cast<int>(lanes_.names.size()); ++lane) {
    const QRectF r(rect.left(), lane * kLaneHeight, rect.width(), kLaneHeight);
    QColor c = lane < lanes_.num_device_lanes ? QColor(0xee, 0xee, 0xea) : QColor(0xe6, 0xec, 0xf2);
    if (lane % 2) c = c.darker(104);
    painter->fillRect(r.intersected(rect), c);
  }
}

void TimelineView::drawForeground(QPainter* painter, const QRectF&) {
  painter->save();
  painter->resetTransform();
  const QRect vp = viewport()->rect();
  // Pinned lane names.
  painter->fillRect(QRect(0, 0, static_cast<int>(kHeaderWidth), vp.height()),
                    QColor(250, 250, 250, 235));
  QFont f = painter->font();
  f.setPointSizeF(8);
  painter->setFont(f);
  for (int lane = 0; lane < static_cast<int>(lanes_.names.size()); ++lane) {
    const QPoint top = mapFromScene(QPointF(0, lane * kLaneHeight));
    const QRect r(4, top.y(), static_cast<int>(kHeaderWidth) - 8, static_cast<int>(kLaneHeight));
    painter->setPen(lane < lanes_.num_device_lanes ? QColor(Qt::black) : QColor(0x33, 0x44, 0x66));
    painter->drawText(r, Qt::AlignVCenter | Qt::AlignRight,
                      painter->fontMetrics().elidedText(QString::fromStdString(lanes_.names[lane]),
                                                        Qt::ElideLeft, r.width()));
  }
  // Pinned time ruler with ticks at 1/2/5 × 10^k µs.
  painter->fillRect(QRect(0, 0, vp.width(), static_cast<int>(kRulerHeight)), QColor(245, 245, 245));
  painter->setPen(QColor(0x55, 0x55, 0x55));
  const double left_us =
      mapToScene(QPoint(static_cast<int>(kHeaderWidth), 0)).x() / kSceneUnitsPerUs;
  const double right_us = mapToScene(QPoint(vp.width(), 0)).x() / kSceneUnitsPerUs;
  const double span = std::max(1e-3, right_us - left_us);
  const double base = std::pow(10.0, std::floor(std::log10(span / 10)));
  double step = base * 10;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (span / (base * m) <= 10) {
      step = base * m;
      break;
    }
  for (double t = std::ceil(std::max(0.0, left_us) / step) * step; t <= right_us; t += step) {
    const int x = mapFromScene(QPointF(t * kSceneUnitsPerUs, 0)).x();
    if (x < kHeaderWidth) continue;
    painter->drawLine(x, static_cast<int>(kRulerHeight) - 5, x, static_cast<int>(kRulerHeight));
    painter->drawText(x + 2, static_cast<int>(kRulerHeight) - 7,
                      QString::fromStdString(format_time_us(t)));
  }
  painter->restore();
}

}  // namespace aware::gui
