#include "gui/compare_view.h"

#include <algorithm>

#include <QHeaderView>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QValueAxis>

#include "gui/graph_view.h"

namespace aware::gui {

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  controls_ = new QWidget(this);
  layout->addWidget(controls_);
  auto* split = new QSplitter(Qt::Vertical, this);
  table_widget_ = new QTableWidget(split);
  table_widget_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_widget_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  chart_view_ = new QChartView(split);
  chart_view_->setRenderHint(QPainter::Antialiasing);
  auto* chart = new QChart();
  chart->setTitle(QStringLiteral("Compare: run a comparison to fill the table"));
  chart_view_->setChart(chart);
  split->addWidget(table_widget_);
  split->addWidget(chart_view_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  layout->addWidget(split, 1);
}

#ifdef AWARE_GUI_HAVE_BASELINES
void CompareView::setTable(const CompareTable& table) {
  table_ = table;
  has_table_ = true;
  // Table: one row per (model, devices); one column per method.
  QStringList headers = {"model", "cluster", "devices", "lower bound (ms)"};
  for (const auto& m : table.methods) headers << QString::fromStdString(m) + " (ms)";
  headers << "winner";
  table_widget_->clear();
  table_widget_->setColumnCount(headers.size());
  table_widget_->setHorizontalHeaderLabels(headers);
  table_widget_->setRowCount(static_cast<int>(table.rows.size()));
  for (int r = 0; r < static_cast<int>(table.rows.size()); ++r) {
    const CompareRow& row = table.rows[r];
    auto set = [&](int c, const QString& text) {
      table_widget_->setItem(r, c, new QTableWidgetItem(text));
    };
    set(0, QString::fromStdString(row.model));
    set(1, QString::fromStdString(row.cluster));
    set(2, QString::number(row.devices));
    set(3, QString::number(row.lower_bound_us / 1e3, 'f', 2));
    for (int m = 0; m < static_cast<int>(row.results.size()); ++m) {
      const MethodResult& res = row.results[m];
      QString text;
      if (res.ok())
        text = QStringLiteral("%1 (%2×)")
                   .arg(res.step_time_us / 1e3, 0, 'f', 2)
                   .arg(res.step_time_us / std::max(row.lower_bound_us, 1e-9), 0, 'f', 2);
      else
        text = QString::fromStdString(res.status);
      auto* item = new QTableWidgetItem(text);
      if (!res.reason.empty()) item->setToolTip(QString::fromStdString(res.reason));
      if (res.method == row.winner) item->setBackground(QColor(0xd5, 0xf0, 0xd5));
      table_widget_->setItem(r, 4 + m, item);
    }
    set(4 + static_cast<int>(table.methods.size()),
        QString::fromStdString(row.error.empty() ? row.winner : "error: " + row.error));
  }

  // Bar chart: categories are rows, one set per method plus the lower bound.
  auto* chart = new QChart();
  chart->setTitle(QStringLiteral("Step time per method against the lower bound (%1)")
                      .arg(QString::fromStdString(table.evaluator)));
  auto* series = new QBarSeries(chart);
  QStringList categories;
  for (const auto& row : table.rows)
    categories << QStringLiteral("%1 ×%2").arg(QString::fromStdString(row.model)).arg(row.devices);
  double max_ms = 0;
  auto* bound = new QBarSet(QStringLiteral("lower bound"));
  bound->setColor(QColor(0x55, 0x55, 0x55));
  for (const auto& row : table.rows) {
    *bound << row.lower_bound_us / 1e3;
    max_ms = std::max(max_ms, row.lower_bound_us / 1e3);
  }
  series->append(bound);
  for (int m = 0; m < static_cast<int>(table.methods.size()); ++m) {
    auto* set = new QBarSet(QString::fromStdString(table.methods[m]));
    set->setColor(device_colour(m));
    for (const auto& row : table.rows) {
      const double ms = m < static_cast<int>(row.results.size()) && row.results[m].ok()
                            ? row.results[m].step_time_us / 1e3
                            : 0;  // OOM / error: no bar
      *set << ms;
      max_ms = std::max(max_ms, ms);
    }
    series->append(set);
  }
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis(chart);
  x->append(categories);
  auto* y = new QValueAxis(chart);
  y->setTitleText(QStringLiteral("step time (ms)"));
  y->setRange(0, std::max(1e-3, max_ms * 1.1));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  chart->legend()->setAlignment(Qt::AlignRight);
  QChart* old = chart_view_->chart();
  chart_view_->setChart(chart);
  delete old;
}
#endif

}  // namespace aware::gui
