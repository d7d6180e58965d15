// What the GUI tests share: the one QApplication (made in gui_test.cc's main(),
// so it dies before Qt's own statics), the skip where there is none, files in
// the test's temporary folder, and a graph opened and placed as a user would.
// GUI-thread only, like the MainWindow the helpers drive.
#pragma once

#include <string>

#include <gtest/gtest.h>
#include <QApplication>
#include <QString>

#include "gui/main_window.h"

namespace aware::gui {

// The QApplication, or null when main() could not make one (no Qt platform plugin).
inline QApplication* app() { return qobject_cast<QApplication*>(QCoreApplication::instance()); }

// Skips the test where there is no QApplication.
#define REQUIRE_APP() \
  if (app() == nullptr) GTEST_SKIP() << "no QApplication (no Qt platform plugin)"

// `name` in the test binary's temporary folder (AWARE_TEST_TMPDIR).
inline std::string tmp_path(const std::string& name) {
  return std::string(AWARE_TEST_TMPDIR) + "/" + name;
}

// Makes `w` non-interactive (errors go to lastError(), no dialogs), opens the
// cluster `cluster` when it is not empty, then the graph `graph`; a failure
// names the step and lastError().
inline ::testing::AssertionResult open_model(MainWindow& w, const QString& graph,
                                             const QString& cluster = {}) {
  w.setInteractive(false);
  if (!cluster.isEmpty() && !w.openCluster(cluster))
    return ::testing::AssertionFailure() << "cannot open cluster " << cluster.toStdString() << ": "
                                         << w.lastError().toStdString();
  if (!w.openGraph(graph))
    return ::testing::AssertionFailure()
           << "cannot open graph " << graph.toStdString() << ": " << w.lastError().toStdString();
  return ::testing::AssertionSuccess();
}

// Starts the placer `method` and waits up to `timeout_ms` for it to end; succeeds
// when it ended, whether or not it placed (searchError() says why not).
inline ::testing::AssertionResult search_done(MainWindow& w, const QString& method,
                                              int timeout_ms) {
  if (!w.startSearch(method))
    return ::testing::AssertionFailure()
           << "cannot start " << method.toStdString() << ": " << w.lastError().toStdString();
  if (!w.waitForSearch(timeout_ms))
    return ::testing::AssertionFailure() << method.toStdString() << " did not end within "
                                         << timeout_ms << " ms: " << w.searchError().toStdString();
  return ::testing::AssertionSuccess();
}

}  // namespace aware::gui
