// The timeline: a Gantt chart of one simulated step from the evaluator's
// Trace — a lane per device and per link channel used (bus lanes in placeto
// mode), one bar per op and one per (transfer × channel). Bars on the critical
// path carry a red outline; idle time is the bare lane. The wheel zooms the
// time axis; lane names and the time ruler stay pinned. Clicking a bar selects
// its op (a transfer selects its producer). GUI thread only.
#pragma once

#include <memory>
#include <vector>

#include <QGraphicsView>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "core/placement.h"
#include "gui/trace_analysis.h"

namespace aware::gui {

class BarItem;

class TimelineView : public QGraphicsView {
  Q_OBJECT

 public:
  struct Bar {
    int op = -1;        // the op this bar runs, or the producer of a transfer
    int transfer = -1;  // index into Trace::transfers, -1 for an op bar
    int lane = -1;
    double start_us = 0;
    double end_us = 0;
    bool critical = false;
  };

  explicit TimelineView(QWidget* parent = nullptr);
  ~TimelineView() override;

  void setTrace(std::shared_ptr<const OpGraph> graph, const Cluster& cluster, const Trace& trace,
                const TraceCriticalPath& path);
  void clearTrace();

  int barCount() const { return static_cast<int>(bars_.size()); }
  Bar bar(int i) const;
  const TimelineLanes& lanes() const { return lanes_; }
  int selectedOp() const;
  // Selects the op's bar (-1 clears) without emitting opSelected.
  void selectOp(int op, bool centre = true);
  void fitAll();

 Q_SIGNALS:
  void opSelected(int op);

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void drawBackground(QPainter* painter, const QRectF& rect) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void onSelectionChanged();

  std::shared_ptr<const OpGraph> graph_;
  TimelineLanes lanes_;
  std::vector<BarItem*> bars_;
  std::vector<int> bar_of_op_;
  double end_us_ = 0;
  bool programmatic_ = false;
};

}  // namespace aware::gui
