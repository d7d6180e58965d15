// MainWindow exports: a view as PNG, the placement, the Chrome trace and the
// compare table as CSV, each written through a temporary file; and the export
// dialog that asks for the path.
#include <algorithm>
#include <sstream>

#include <QFileDialog>
#include <QSaveFile>
#include <QTabWidget>

#include <nlohmann/json.hpp>

#include "core/exporters.h"
#include "core/formats.h"
#include "gui/compare_view.h"
#include "gui/main_window.h"
#include "gui/workbench.h"

namespace aware::gui {

bool MainWindow::exportPng(const QString& view, const QString& path) {
  QWidget* w = viewWidget(view);
  if (w == nullptr) {
    reportError(
        QStringLiteral("export: unknown view '%1' (graph, timeline, curve, compare, window)")
            .arg(view));
    return false;
  }
  if (!savePng(w->grab(), path)) {
    reportError(QStringLiteral("export: cannot write PNG '%1'").arg(path));
    return false;
  }
  return true;
}

bool MainWindow::savePng(const QPixmap& pixmap, const QString& path) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return false;
  if (!pixmap.save(&file, "PNG")) {
    file.cancelWriting();
    return false;
  }
  return file.commit();
}

bool MainWindow::exportPlacement(const QString& path) {
  if (!workbench_->hasPlacement()) {
    reportError(QStringLiteral("export: nothing is placed yet"));
    return false;
  }
  return reportingErrors([&] {
    write_placement_file(workbench_->graph(), workbench_->cluster(), workbench_->placement(),
                         path.toStdString());
  });
}

bool MainWindow::exportTrace(const QString& path) {
  if (!workbench_->hasPlacement()) {
    reportError(QStringLiteral("export: no trace yet (place the graph first)"));
    return false;
  }
  return reportingErrors([&] {
    const nlohmann::json doc =
        trace_to_chrome(workbench_->graph(), workbench_->cluster(), workbench_->trace());
    write_text_file_atomic(path.toStdString(), doc.dump(1));
  });
}

bool MainWindow::exportCompareCsv(const QString& path) {
#ifdef AWARE_GUI_HAVE_BASELINES
  if (!compare_view_->hasTable()) {
    reportError(QStringLiteral("export: no comparison yet"));
    return false;
  }
  return reportingErrors([&] {
    std::ostringstream out;
    write_compare_csv(compare_view_->table(), out);
    write_text_file_atomic(path.toStdString(), out.str());
  });
#else
  (void)path;
  reportError(QStringLiteral("export: this build has no compare runner"));
  return false;
#endif
}

void MainWindow::exportDialog(const QString& what) {
  if (what == "png") {
    const QStringList views = viewNames();
    const QString view = views[std::max(0, tabs_->currentIndex()) % views.size()];
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export PNG"),
                                                      view + ".png", QStringLiteral("PNG (*.png)"));
    if (!path.isEmpty()) exportPng(view, path);
  } else if (what == "placement") {
    const QString path =
        QFileDialog::getSaveFileName(this, QStringLiteral("Export placement"), "placement.json",
                                     QStringLiteral("JSON (*.json)"));
    if (!path.isEmpty()) exportPlacement(path);
  } else if (what == "trace") {
    const QString path = QFileDialog::getSaveFileName(
        this, QStringLiteral("Export Chrome trace"), "trace.json", QStringLiteral("JSON (*.json)"));
    if (!path.isEmpty()) exportTrace(path);
  } else if (what == "csv") {
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export comparison"),
                                                      "compare.csv", QStringLiteral("CSV (*.csv)"));
    if (!path.isEmpty()) exportCompareCsv(path);
  }
}

}  // namespace aware::gui
