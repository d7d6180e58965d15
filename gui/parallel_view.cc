#include "gui/parallel_view.h"

#include <algorithm>
#include <cmath>

#include <QPainter>

namespace aware::gui {

namespace {

QString megabytes(double bytes) {
  if (bytes >= 1e9) return QStringLiteral("%1 GB").arg(bytes / 1e9, 0, 'f', 2);
  return QStringLiteral("%1 MB").arg(bytes / 1e6, 0, 'f', bytes >= 1e7 ? 0 : 2);
}

QString time_text(double us) {
  if (us >= 1e6) return QStringLiteral("%1 s").arg(us / 1e6, 0, 'f', 2);
  if (us >= 1e3) return QStringLiteral("%1 ms").arg(us / 1e3, 0, 'f', 1);
  return QStringLiteral("%1 µs").arg(us, 0, 'f', 0);
}

}  // namespace

ParallelView::ParallelView(Mode mode, QWidget* parent) : QWidget(parent), mode_(mode) {
  setMinimumSize(320, 240);
  setAutoFillBackground(true);
}

void ParallelView::clear(const QString& why) {
  message_ = why;
  chart_ = {};
  grid_ = {};
  update();
}

void ParallelView::setStep(const OpGraph& graph, const Placement& placement, const Trace& trace,
                           const QString& strategy) {
  clear({});
  strategy_ = strategy;
  if (mode_ == Mode::kPipeline) {
    chart_ = schedule_chart(graph, placement, trace);
    if (chart_.lanes.empty())
      message_ = QStringLiteral("No pipeline here: apply a strategy with micro-batches (pipeline:P,micro=M or "
                                "3d:dp=D,tp=T,pp=P,micro=M) to see its schedule");
  } else {
    grid_ = device_grid(graph, placement);
    if (grid_.cells.size() < 2)
      message_ = QStringLiteral("One device: apply a parallel strategy (e.g. 3d:dp=2,tp=2,pp=2) to see its grid");
  }
  update();
}

void ParallelView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), Qt::white);
  if (!message_.isEmpty()) {
    p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap, message_);
    return;
  }
  if (mode_ == Mode::kPipeline) paintPipeline(p);
  else paintGrid(p);
}

void ParallelView::paintPipeline(QPainter& p) {
  const int label = 70, top = 28, bottom = 40, right = 40;
  const int lanes = static_cast<int>(chart_.lanes.size());
  const double span = std::max(chart_.step_us, 1e-9);
  const double lane_h = std::clamp((height() - top - bottom) / std::max(1.0, static_cast<double>(lanes)), 4.0, 40.0);
  const double scale = (width() - label - right) / span;
  p.setPen(Qt::black);
  QString title = QStringLiteral("%1: %2 micro-batches on %3 devices of the first replica; step %4; bubble %5%")
                      .arg(strategy_.isEmpty() ? QStringLiteral("pipeline") : strategy_)
                      .arg(chart_.micro_batches)
                      .arg(lanes)
                      .arg(time_text(chart_.step_us))
                      .arg(100 * chart_.bubble_fraction, 0, 'f', 1);
  if (chart_.lanes_left_out > 0) title += QStringLiteral(" (%1 more devices not drawn)").arg(chart_.lanes_left_out);
  p.drawText(QRect(4, 4, width() - 8, 20), Qt::AlignLeft | Qt::AlignVCenter, title);
  const QColor forward(0x4c, 0x78, 0xa8), backward(0x59, 0xa1, 0x4f);
  QFont small = p.font();
  small.setPointSizeF(std::max(5.0, std::min(small.pointSizeF(), lane_h * 0.45)));
  for (int i = 0; i < lanes; ++i) {
    const ScheduleLane& lane = chart_.lanes[static_cast<std::size_t>(i)];
    const double y = top + i * lane_h;
    p.setPen(Qt::black);
    p.setFont(QFont());
    if (lane_h >= 10)
      p.drawText(QRectF(2, y, label - 6, lane_h), Qt::AlignRight | Qt::AlignVCenter,
                 QStringLiteral("device %1").arg(lane.device));
    p.setFont(small);
    for (const PassBar& bar : lane.bars) {
      const QRectF box(label + bar.start_us * scale, y + 1, std::max(1.0, (bar.end_us - bar.start_us) * scale),
                       std::max(1.0, lane_h - 2));
      p.setPen(lane_h >= 8 ? QPen(Qt::white, 0.5) : Qt::NoPen);
      p.setBrush(bar.forward ? forward : backward);
      p.drawRect(box);
      const QString text = QString::number(bar.micro);
      if (box.width() > 4 + 6 * text.size() && lane_h >= 10) {
        p.setPen(Qt::white);
        p.drawText(box, Qt::AlignCenter, text);
      }
    }
  }
  // The time axis and the legend.
  p.setFont(QFont());
  p.setPen(Qt::black);
  const double axis_y = top + lanes * lane_h + 4;
  p.drawLine(QPointF(label, axis_y), QPointF(width() - right, axis_y));
  for (int k = 0; k <= 4; ++k) {
    const double x = label + (width() - label - right) * k / 4.0;
    p.drawLine(QPointF(x, axis_y), QPointF(x, axis_y + 4));
    p.drawText(QRectF(x - 40, axis_y + 4, 80, 16), Qt::AlignHCenter, time_text(span * k / 4));
  }
  const double ly = height() - 16;
  p.setBrush(forward);
  p.drawRect(QRectF(label, ly, 12, 10));
  p.drawText(QRectF(label + 16, ly - 3, 200, 16), Qt::AlignLeft, QStringLiteral("forward pass (micro-batch k)"));
  p.setBrush(backward);
  p.drawRect(QRectF(label + 220, ly, 12, 10));
  p.drawText(QRectF(label + 236, ly - 3, 220, 16), Qt::AlignLeft, QStringLiteral("backward pass; gaps are bubbles"));
}

void ParallelView::paintGrid(QPainter& p) {
  const int top = 28, margin = 10, gap = 12;
  const int replicas_drawn = std::min(grid_.replicas, 4);
  const int stages = std::max(1, grid_.stages), ranks = std::max(1, grid_.ranks);
  p.setPen(Qt::black);
  p.drawText(QRect(4, 4, width() - 8, 20), Qt::AlignLeft | Qt::AlignVCenter,
             QStringLiteral("%1: %2 replicas (across) x %3 stages (down) x %4 tensor-parallel ranks (across), %5 devices%6")
                 .arg(strategy_.isEmpty() ? QStringLiteral("placement") : strategy_)
                 .arg(grid_.replicas)
                 .arg(stages)
                 .arg(ranks)
                 .arg(grid_.cells.size())
                 .arg(grid_.replicas > replicas_drawn
                          ? QStringLiteral("; the first %1 replicas drawn (the others are copies)").arg(replicas_drawn)
                          : QString()));
  const double block_w = (width() - 2.0 * margin - gap * (replicas_drawn - 1)) / std::max(1, replicas_drawn);
  const double cell_w = block_w / ranks, cell_h = std::min(90.0, (height() - top - margin) / static_cast<double>(stages));
  double most = 0;
  for (const GridCell& c : grid_.cells) most = std::max(most, c.param_bytes);
  QFont small = p.font();
  small.setPointSizeF(std::max(5.0, std::min(small.pointSizeF(), cell_h / 5.5)));
  p.setFont(small);
  for (const GridCell& c : grid_.cells) {
    if (c.replica >= replicas_drawn) continue;
    const QRectF box(margin + c.replica * (block_w + gap) + c.rank * cell_w, top + c.stage * cell_h, cell_w - 2,
                     cell_h - 2);
    // Shaded by the weights it holds, from white to the heaviest device's blue.
    const double f = most > 0 ? c.param_bytes / most : 0;
    p.setPen(QPen(QColor(0x55, 0x55, 0x55), 1));
    p.setBrush(QColor::fromRgbF(static_cast<float>(1 - 0.45 * f), static_cast<float>(1 - 0.3 * f), 1.0f));
    p.drawRect(box);
    QString layers = c.first_layer < 0 ? QStringLiteral("no layers")
                     : c.first_layer == c.last_layer
                         ? QStringLiteral("layer %1").arg(c.first_layer)
                         : QStringLiteral("layers %1-%2").arg(c.first_layer).arg(c.last_layer);
    if (c.embedding) layers = QStringLiteral("embedding, ") + layers;
    if (c.head) layers += QStringLiteral(", head");
    const QString text = QStringLiteral("device %1\n%2\nrank %3 of %4 (1/%4 of each split weight)\nweights %5")
                             .arg(c.device)
                             .arg(layers)
                             .arg(c.rank)
                             .arg(ranks)
                             .arg(megabytes(c.param_bytes));
    p.setPen(Qt::black);
    p.drawText(box.adjusted(3, 2, -3, -2), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, text);
  }
}

}  // namespace aware::gui
