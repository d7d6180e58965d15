// The timeline: a Gantt chart of one simulated step from the evaluator's
// Trace — a lane per device and per link channel used (bus lanes in placeto
// mode), one bar per op and one per (transfer × channel). Bars on the critical
// path carry a red outline; idle time is the bare lane. The wheel zooms the
// time axis; lane names and the time ruler stay pinned. Clicking a bar selects
// its op (a transfer selects its producer). Two views can share one time axis
// (TimelinePage stacks a measured and a simulated step): fitSpanUs widens what
// fitAll() fits, and setTimeWindow() / timeWindowChanged() let one view follow
// the other's zoom and scroll. GUI thread only.
#pragma once

#include <algorithm>
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
  // Fits the fit span (below) into the width right of the lane names; emits fitted().
  void fitAll();

  // The end of the last bar, µs (0 without a trace).
  double endUs() const { return end_us_; }
  // What fitAll() fits: the longer of endUs() and `us` (0: endUs() alone). A view
  // compared with another gets the longer of the two ends, so the shorter step
  // shows shorter.
  void setFitSpanUs(double us) { fit_span_us_ = us; }
  double fitSpanUs() const { return std::max(end_us_, fit_span_us_); }
  // Pixels per µs at which the fit span fills the current width.
  double fitPixelsPerUs() const;
  // Pixels per µs on the time axis now.
  double pixelsPerUs() const;
  // The time at the left edge of the bars' area (right of the lane names), µs.
  double leftUs() const;
  // Shows the time axis at `pixels_per_us`, scrolled so that `left_us` sits at
  // the left edge of the bars' area (as far as the scroll range allows). Emits
  // nothing, so two views can follow each other without echoes.
  void setTimeWindow(double pixels_per_us, double left_us);
  // Zooms the time axis by `factor` about the middle of the bars' area (what
  // the wheel does about the mouse); emits timeWindowChanged().
  void zoomTimeBy(double factor);

 Q_SIGNALS:
  void opSelected(int op);
  // The user zoomed or scrolled the time axis (also a scroll that centring on a
  // selected bar caused). Not emitted by setTimeWindow().
  void timeWindowChanged();
  // fitAll() ran (on a new trace, a resize or a request).
  void fitted();

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void drawBackground(QPainter* painter, const QRectF& rect) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void onSelectionChanged();
  // Scene rect for the current scale: the fit span plus room for the pinned
  // lane names on the left and a small margin on the right, in pixels.
  void updateSceneRect();
  // Zooms by `factor`, keeping the time under viewport pixel `x` in place.
  void zoomAbout(double factor, int x);

  std::shared_ptr<const OpGraph> graph_;
  TimelineLanes lanes_;
  std::vector<BarItem*> bars_;
  std::vector<int> bar_of_op_;
  double end_us_ = 0;
  double fit_span_us_ = 0;
  bool programmatic_ = false;
  bool programmatic_window_ = false;
};

}  // namespace aware::gui
