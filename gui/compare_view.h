// The comparison view: a table of step times (and ratio to the lower bound)
// per (model, device count) and method, and a bar chart of the same against
// the lower bound. Display only: the window runs run_compare() on a worker.
#pragma once

#include <QWidget>

#ifdef AWARE_GUI_HAVE_BASELINES
#include "experiments/compare.h"
#endif

class QTableWidget;
class QChartView;

namespace aware::gui {

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);

#ifdef AWARE_GUI_HAVE_BASELINES
  void setTable(const CompareTable& table);
  const CompareTable& table() const { return table_; }
#endif
  bool hasTable() const { return has_table_; }
  QTableWidget* tableWidget() const { return table_widget_; }
  QChartView* chartView() const { return chart_view_; }
  // Where the window puts its run controls (above the table).
  QWidget* controls() const { return controls_; }

 private:
  QWidget* controls_;
  QTableWidget* table_widget_;
  QChartView* chart_view_;
  bool has_table_ = false;
#ifdef AWARE_GUI_HAVE_BASELINES
  CompareTable table_;
#endif
};

}  // namespace aware::gui
