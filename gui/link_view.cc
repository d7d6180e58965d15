#include "gui/link_view.h"

#include <algorithm>
#include <numeric>

#include <QPainter>

namespace aware::gui {

std::vector<double> channel_bytes(const OpGraph& graph, const Cluster& cluster, const Placement& placement) {
  std::vector<double> bytes(static_cast<size_t>(2 * cluster.num_links()), 0);
  for (const Edge& e : graph.edges()) {
    const int a = placement[e.src], b = placement[e.dst];
    if (a == b) continue;
    for (const Hop& hop : cluster.route(a, b)) bytes[static_cast<size_t>(hop.channel())] += e.bytes;
  }
  return bytes;
}

LinkView::LinkView(QWidget* parent) : QWidget(parent) {
  setMinimumSize(320, 240);
  setAutoFillBackground(true);
}

void LinkView::clear(const QString& why) {
  message_ = why;
  link_names_.clear();
  link_ends_.clear();
  link_bytes_.clear();
  ops_on_device_.clear();
  devices_ = mesh_w_ = mesh_h_ = 0;
  max_bytes_ = 0;
  busiest_.clear();
  update();
}

void LinkView::setStep(const OpGraph& graph, const Cluster& cluster, const Placement& placement) {
  clear({});
  const std::vector<double> channels = channel_bytes(graph, cluster, placement);
  devices_ = cluster.num_devices();
  for (int l = 0; l < cluster.num_links(); ++l) {
    const Link& link = cluster.link(l);
    link_names_.push_back(link.name);
    link_ends_.push_back({link.a, link.b});
    link_bytes_.push_back(std::max(channels[static_cast<size_t>(2 * l)], channels[static_cast<size_t>(2 * l + 1)]));
    // On a mesh only router-to-router links count: a core's own link to its
    // router is on chip and carries all of its traffic.
    const bool counts = !cluster.is_mesh() || (link.a >= devices_ && link.b >= devices_);
    if (counts && link_bytes_.back() > max_bytes_) {
      max_bytes_ = link_bytes_.back();
      busiest_ = link.name;
    }
  }
  ops_on_device_.assign(static_cast<size_t>(devices_), 0);
  for (int op = 0; op < graph.num_ops(); ++op) ++ops_on_device_[static_cast<size_t>(placement[op])];
  if (cluster.is_mesh()) {
    mesh_w_ = cluster.mesh_width();
    mesh_h_ = cluster.mesh_height();
  }
  update();
}

namespace {
// White (idle) through yellow to red (the busiest).
QColor heat(double f) {
  f = std::clamp(f, 0.0, 1.0);
  if (f < 0.5) return QColor::fromRgbF(1.0f, 1.0f, static_cast<float>(1 - 2 * f));
  return QColor::fromRgbF(1.0f, static_cast<float>(1 - (f - 0.5) * 2 * 0.85), 0.0f);
}

QString bytes_text(double b) {
  if (b >= 1e6) return QStringLiteral("%1 MB").arg(b / 1e6, 0, 'f', 2);
  if (b >= 1e3) return QStringLiteral("%1 kB").arg(b / 1e3, 0, 'f', 1);
  return QStringLiteral("%1 B").arg(b, 0, 'f', 0);
}
}  // namespace

void LinkView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), Qt::white);
  if (!message_.isEmpty() || link_bytes_.empty()) {
    p.drawText(rect(), Qt::AlignCenter, message_.isEmpty() ? QStringLiteral("no links") : message_);
    return;
  }
  const QString title =
      max_bytes_ > 0 ? QStringLiteral("Bytes per step over each link; busiest %1: %2")
                           .arg(QString::fromStdString(busiest_), bytes_text(max_bytes_))
                     : QStringLiteral("Nothing crosses a link: every transfer stays on its device");
  p.drawText(QRect(0, 4, width(), 20), Qt::AlignHCenter, title);
  if (isMesh()) paintMesh(p);
  else paintBars(p);
}

void LinkView::paintMesh(QPainter& p) {
  const int top = 30, margin = 16;
  const double cell = std::min((width() - 2.0 * margin) / mesh_w_, (height() - top - margin - 24.0) / mesh_h_);
  const double x0 = (width() - cell * mesh_w_) / 2, y0 = top;
  const int most_ops = ops_on_device_.empty() ? 1 : std::max(1, *std::max_element(ops_on_device_.begin(), ops_on_device_.end()));
  const auto centre = [&](int core) {
    return QPointF(x0 + (core % mesh_w_ + 0.5) * cell, y0 + (core / mesh_w_ + 0.5) * cell);
  };
  // Router-to-router links (both ends routers: node ids >= devices).
  for (size_t l = 0; l < link_ends_.size(); ++l) {
    const auto [a, b] = link_ends_[l];
    if (a < devices_ || b < devices_) continue;
    const double f = max_bytes_ > 0 ? link_bytes_[l] / max_bytes_ : 0;
    QPen pen(heat(f), std::max(2.0, cell * 0.28));
    pen.setCapStyle(Qt::FlatCap);
    p.setPen(pen);
    p.drawLine(centre(a - devices_), centre(b - devices_));
  }
  // Cores over the links, shaded by how many ops they run.
  for (int c = 0; c < devices_; ++c) {
    const QPointF m = centre(c);
    const double s = cell * 0.45;
    const double f = static_cast<double>(ops_on_device_[static_cast<size_t>(c)]) / most_ops;
    p.setPen(QPen(QColor(0x55, 0x55, 0x55), 1));
    p.setBrush(QColor::fromRgbF(static_cast<float>(1 - 0.6 * f), static_cast<float>(1 - 0.45 * f), 1.0f));
    p.drawRect(QRectF(m.x() - s / 2, m.y() - s / 2, s, s));
  }
  p.setPen(Qt::black);
  p.drawText(QRect(0, height() - 22, width(), 20), Qt::AlignHCenter,
             QStringLiteral("%1 x %2 mesh, XY routing: link colour white (idle) to red (busiest); cores darker with more ops")
                 .arg(mesh_w_)
                 .arg(mesh_h_));
}

void LinkView::paintBars(QPainter& p) {
  std::vector<size_t> order(link_bytes_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return link_bytes_[a] > link_bytes_[b]; });
  const int rows = std::min<int>(static_cast<int>(order.size()), std::max(1, (height() - 40) / 18));
  const int label = 160, right = 90;
  for (int i = 0; i < rows; ++i) {
    const size_t l = order[static_cast<size_t>(i)];
    const int y = 30 + i * 18;
    p.setPen(Qt::black);
    p.drawText(QRect(4, y, label - 8, 16), Qt::AlignRight | Qt::AlignVCenter, QString::fromStdString(link_names_[l]));
    const double f = max_bytes_ > 0 ? link_bytes_[l] / max_bytes_ : 0;
    p.setPen(Qt::NoPen);
    p.setBrush(heat(0.25 + 0.75 * f));
    p.drawRect(QRectF(label, y + 2, (width() - label - right) * f, 12));
    p.setPen(Qt::black);
    p.drawText(QRect(width() - right + 4, y, right - 8, 16), Qt::AlignLeft | Qt::AlignVCenter, bytes_text(link_bytes_[l]));
  }
}

}  // namespace aware::gui
