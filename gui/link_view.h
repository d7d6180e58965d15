// The links view: how many bytes one step sends over each link for the placement
// shown. On a mesh cluster (preset:mesh:WxH) a heat map: cores as squares
// (shaded by how many ops they run), the links between neighbouring routers as
// bars coloured from white (idle) to red (the busiest). On any other cluster,
// the busiest links as a bar chart. GUI thread only.
#pragma once

#include <string>
#include <vector>

#include <QWidget>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware::gui {

// Bytes one step sends over each directed channel (Hop::channel(): 2 * link +
// direction): every edge whose ends are on different devices adds its bytes to
// each channel of the route between them.
std::vector<double> channel_bytes(const OpGraph& graph, const Cluster& cluster, const Placement& placement);

class LinkView : public QWidget {
  Q_OBJECT

 public:
  explicit LinkView(QWidget* parent = nullptr);
  void setStep(const OpGraph& graph, const Cluster& cluster, const Placement& placement);
  void clear(const QString& why);

  bool isMesh() const { return mesh_w_ > 0; }
  double maxLinkBytes() const { return max_bytes_; }
  // The busiest link's name ("" when nothing crosses a link); on a mesh, the
  // busiest between two routers.
  const std::string& busiestLink() const { return busiest_; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  void paintMesh(QPainter& p);
  void paintBars(QPainter& p);

  QString message_ = QStringLiteral("not placed yet");
  std::vector<std::string> link_names_;
  std::vector<std::pair<int, int>> link_ends_;  // node ids
  std::vector<double> link_bytes_;              // both directions, the larger
  std::vector<int> ops_on_device_;
  int devices_ = 0, mesh_w_ = 0, mesh_h_ = 0;
  double max_bytes_ = 0;
  std::string busiest_;
};

}  // namespace aware::gui
