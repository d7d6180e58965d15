// The timeline tab: the placed step's timeline and, on request, a second
// timeline of the same graph, cluster and placement from another evaluator
// (a measured step under a simulated one, or two simulators), stacked.
//
// Each timeline has a caption naming its evaluator and step time. While both
// show, they share one time axis: the same µs per pixel (fitted to the longer
// step, so the shorter one is visibly shorter) and the same scroll, and a zoom,
// scroll or selection in one is followed by the other. The page runs nothing
// itself: it says which evaluator to compare with (comparisonEvaluatorChanged)
// and the window feeds it results from a worker thread. GUI thread only.
#pragma once

#include <memory>

#include <QString>
#include <QWidget>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "core/placement.h"
#include "gui/trace_analysis.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QSplitter;

namespace aware::gui {

class TimelineView;

// "m-etf · cpu (measured): step 251.6 ms" — the method (omitted when empty), the
// evaluator, whether the registry says it measures ("measured" trait) or
// simulates, and the step time, or why the placement is infeasible.
std::string step_caption(const std::string& method, const std::string& evaluator,
                         const StepResult& result);

class TimelinePage : public QWidget {
  Q_OBJECT

 public:
  explicit TimelinePage(QWidget* parent = nullptr);

  // Top: the placed step (owned by the page).
  TimelineView* mainView() const { return main_view_; }
  // Bottom: the comparison (owned by the page; hidden while none is chosen).
  TimelineView* comparisonView() const { return comparison_view_; }

  // Names offered after "none" (EvaluatorRegistry names); keeps the choice if
  // it is still offered, else goes back to none.
  void setEvaluatorNames(const QStringList& names);
  // The evaluator chosen to compare with; empty for none.
  QString comparisonEvaluator() const;
  // Chooses one of the offered names ("" or "none": no comparison). False, and
  // no change, for a name not offered. Emits comparisonEvaluatorChanged when the
  // choice changes.
  bool setComparisonEvaluator(const QString& name);
  // Whether the bottom timeline is shown (a comparison is chosen).
  bool comparisonShown() const;

  // The top timeline and its caption.
  void setMainTrace(std::shared_ptr<const OpGraph> graph, const Cluster& cluster,
                    const Trace& trace, const TraceCriticalPath& path, const QString& caption);
  void clearMain(const QString& caption);

  // The bottom timeline: a result (caption and trace), a note in place of one
  // (e.g. "nothing placed yet"; `error` shows it in red), or busy while an
  // evaluation runs. None of these shows the bottom when no comparison is chosen.
  void setComparisonTrace(std::shared_ptr<const OpGraph> graph, const Cluster& cluster,
                          const Trace& trace, const TraceCriticalPath& path, const QString& caption,
                          const QString& tooltip);
  void setComparisonNote(const QString& note, bool error = false);
  void setComparisonBusy(bool busy);
  bool comparisonBusy() const { return busy_; }

  QString mainCaption() const;
  QString comparisonCaption() const;

  // Selects `op` in both timelines (-1 clears) without emitting opSelected; the
  // top one scrolls to it and the bottom one follows the scroll.
  void selectOp(int op);
  // Fits the shown timelines to the width, on one scale when both show.
  void fitAll();

 Q_SIGNALS:
  // The user (or setComparisonEvaluator) chose another evaluator; empty for none.
  void comparisonEvaluatorChanged(const QString& name);
  // An op was clicked in either timeline (the other one already selected it).
  void opSelected(int op);

 private:
  bool comparing() const;
  // One scale and scroll for both: the longer step fits the narrower view.
  void fitTogether();
  // Makes `to` show the time window `from` shows.
  void follow(TimelineView* from, TimelineView* to);
  void updateVisibility();

  QLabel* main_caption_ = nullptr;
  QComboBox* compare_combo_ = nullptr;
  QProgressBar* busy_bar_ = nullptr;
  QSplitter* splitter_ = nullptr;
  TimelineView* main_view_ = nullptr;
  QWidget* comparison_pane_ = nullptr;
  QLabel* comparison_caption_ = nullptr;
  TimelineView* comparison_view_ = nullptr;
  bool busy_ = false;
  bool syncing_ = false;  // a follow() or fitTogether() in progress: do not echo
};

}  // namespace aware::gui
