// The parallelism views of a pipelined or 3-D strategy's step (strategies/
// schedule_chart.h reads them from the rewrite and its trace):
//  - "pipeline": one lane per device of the first replica, a bar per pass (a
//    micro-batch's forward, blue, or backward, green, numbered), on the step's
//    time axis, so that the schedule's order and its bubbles (the gaps) show;
//  - "grid": the devices as the dp x pp x tp grid (replicas side by side, stages
//    down, tensor-parallel ranks across), each cell with its device, the layers
//    it holds, its rank's share and its weights.
// A step without micro-batches or replicas says so in one line. GUI thread only.
#pragma once

#include <QString>
#include <QWidget>

#include "core/op_graph.h"
#include "core/placement.h"
#include "strategies/schedule_chart.h"

namespace aware::gui {

class ParallelView : public QWidget {
  Q_OBJECT

 public:
  enum class Mode { kPipeline, kGrid };
  explicit ParallelView(Mode mode, QWidget* parent = nullptr);
  void setStep(const OpGraph& graph, const Placement& placement, const Trace& trace, const QString& strategy);
  void clear(const QString& why);

  const ScheduleChart& chart() const { return chart_; }
  const DeviceGrid& grid() const { return grid_; }
  // What the view says instead of drawing (empty when it draws).
  const QString& message() const { return message_; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  void paintPipeline(QPainter& p);
  void paintGrid(QPainter& p);

  Mode mode_;
  QString message_ = QStringLiteral("not placed yet");
  QString strategy_;
  ScheduleChart chart_;
  DeviceGrid grid_;
};

}  // namespace aware::gui
