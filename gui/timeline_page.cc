#include "gui/timeline_page.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QSplitter>
#include <QVBoxLayout>

#include "core/evaluator.h"
#include "gui/timeline_view.h"

namespace aware::gui {

namespace {
const QString kNone = QStringLiteral("none");
}  // namespace

std::string step_caption(const std::string& method, const std::string& evaluator,
                         const StepResult& result) {
  // An evaluator registered since (or a name from a file) may not be known here.
  bool measured = false;
  if (EvaluatorRegistry::instance().has(evaluator)) {
    const Options traits = EvaluatorRegistry::instance().info(evaluator).traits;
    const auto it = traits.find("measured");
    measured = it != traits.end() && it->second == "1";
  }
  std::string text = method.empty() ? "" : method + " · ";
  text += evaluator + (measured ? " (measured)" : " (simulated)") + ": ";
  if (!result.feasible) return text + "infeasible: " + result.infeasible_reason;
  return text + "step " + format_time_us(result.step_time_us);
}

TimelinePage::TimelinePage(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);

  auto* top_row = new QHBoxLayout();
  top_row->setContentsMargins(4, 2, 4, 0);
  main_caption_ = new QLabel(this);
  main_caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  compare_combo_ = new QComboBox(this);
  compare_combo_->addItem(kNone);
  compare_combo_->setToolTip(
      QStringLiteral("run the same placement on another evaluator and show its timeline "
                     "below, on the same time scale"));
  busy_bar_ = new QProgressBar(this);
  busy_bar_->setRange(0, 0);  // busy: an evaluation reports no progress
  busy_bar_->setMaximumWidth(120);
  busy_bar_->setTextVisible(false);
  busy_bar_->hide();
  top_row->addWidget(main_caption_, 1);
  top_row->addWidget(busy_bar_);
  top_row->addWidget(new QLabel(QStringLiteral("Compare with"), this));
  top_row->addWidget(compare_combo_);
  layout->addLayout(top_row);

  splitter_ = new QSplitter(Qt::Vertical, this);
  main_view_ = new TimelineView(splitter_);
  comparison_pane_ = new QWidget(splitter_);
  auto* pane_layout = new QVBoxLayout(comparison_pane_);
  pane_layout->setContentsMargins(0, 0, 0, 0);
  pane_layout->setSpacing(2);
  comparison_caption_ = new QLabel(comparison_pane_);
  comparison_caption_->setContentsMargins(4, 2, 4, 0);
  comparison_caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  comparison_caption_->setWordWrap(true);
  comparison_view_ = new TimelineView(comparison_pane_);
  pane_layout->addWidget(comparison_caption_);
  pane_layout->addWidget(comparison_view_, 1);
  splitter_->addWidget(main_view_);
  splitter_->addWidget(comparison_pane_);
  splitter_->setChildrenCollapsible(false);
  splitter_->setStretchFactor(0, 1);
  splitter_->setStretchFactor(1, 1);
  layout->addWidget(splitter_, 1);
  comparison_pane_->hide();

  connect(compare_combo_, &QComboBox::currentTextChanged, this, [this] {
    updateVisibility();
    Q_EMIT comparisonEvaluatorChanged(comparisonEvaluator());
  });
  // Each view follows the other's zoom and scroll, and both refit together.
  connect(main_view_, &TimelineView::timeWindowChanged, this,
          [this] { follow(main_view_, comparison_view_); });
  connect(comparison_view_, &TimelineView::timeWindowChanged, this,
          [this] { follow(comparison_view_, main_view_); });
  connect(main_view_, &TimelineView::fitted, this, &TimelinePage::fitTogether);
  connect(comparison_view_, &TimelineView::fitted, this, &TimelinePage::fitTogether);
  // A click in one selects the same op in the other; the window hears of it once.
  connect(main_view_, &TimelineView::opSelected, this, [this](int op) {
    comparison_view_->selectOp(op, false);
    Q_EMIT opSelected(op);
  });
  connect(comparison_view_, &TimelineView::opSelected, this, [this](int op) {
    main_view_->selectOp(op, false);
    Q_EMIT opSelected(op);
  });
}

void TimelinePage::setEvaluatorNames(const QStringList& names) {
  const QString chosen = compare_combo_->currentText();
  const QSignalBlocker block(compare_combo_);
  compare_combo_->clear();
  compare_combo_->addItem(kNone);
  for (const QString& name : names) {
    compare_combo_->addItem(name);
    if (EvaluatorRegistry::instance().has(name.toStdString()))
      compare_combo_->setItemData(
          compare_combo_->count() - 1,
          QString::fromStdString(EvaluatorRegistry::instance().description(name.toStdString())),
          Qt::ToolTipRole);
  }
  const int index = compare_combo_->findText(chosen);
  compare_combo_->setCurrentIndex(std::max(0, index));
  if (index < 0 && chosen != kNone) {
    updateVisibility();
    Q_EMIT comparisonEvaluatorChanged({});
  }
}

QString TimelinePage::comparisonEvaluator() const {
  const QString name = compare_combo_->currentText();
  return name == kNone ? QString() : name;
}

bool TimelinePage::setComparisonEvaluator(const QString& name) {
  const int index = compare_combo_->findText(name.isEmpty() ? kNone : name);
  if (index < 0) return false;
  compare_combo_->setCurrentIndex(index);  // emits through currentTextChanged if it changed
  return true;
}

bool TimelinePage::comparing() const { return !comparisonEvaluator().isEmpty(); }

bool TimelinePage::comparisonShown() const { return !comparison_pane_->isHidden(); }

void TimelinePage::updateVisibility() {
  // Half the height each when the second timeline appears.
  if (comparing() && comparison_pane_->isHidden()) splitter_->setSizes({1000, 1000});
  comparison_pane_->setVisible(comparing());
  // Two viewports of one width scroll over one range, so one scrolled to its end
  // can be followed to the same time: no vertical scroll bar coming and going
  // in only one of them.
  const Qt::ScrollBarPolicy policy = comparing() ? Qt::ScrollBarAlwaysOn : Qt::ScrollBarAsNeeded;
  main_view_->setVerticalScrollBarPolicy(policy);
  comparison_view_->setVerticalScrollBarPolicy(policy);
  if (!comparing()) {
    comparison_view_->clearTrace();
    comparison_caption_->clear();
    main_view_->setFitSpanUs(0);
    main_view_->fitAll();
  }
}

void TimelinePage::setMainTrace(std::shared_ptr<const OpGraph> graph, const Cluster& cluster,
                                const Trace& trace, const TraceCriticalPath& path,
                                const QString& caption) {
  main_caption_->setText(caption);
  main_view_->setTrace(std::move(graph), cluster, trace, path);
}

void TimelinePage::clearMain(const QString& caption) {
  main_caption_->setText(caption);
  main_view_->clearTrace();
}

void TimelinePage::setComparisonTrace(std::shared_ptr<const OpGraph> graph, const Cluster& cluster,
                                      const Trace& trace, const TraceCriticalPath& path,
                                      const QString& caption, const QString& tooltip) {
  comparison_caption_->setStyleSheet({});
  comparison_caption_->setText(caption);
  comparison_caption_->setToolTip(tooltip);
  comparison_view_->setTrace(std::move(graph), cluster, trace, path);
  // Keep the op that is selected above selected here too.
  const int op = main_view_->selectedOp();
  if (op >= 0) comparison_view_->selectOp(op, false);
}

void TimelinePage::setComparisonNote(const QString& note, bool error) {
  comparison_view_->clearTrace();
  comparison_caption_->setStyleSheet(error ? QStringLiteral("QLabel { color: #b00020; }")
                                           : QString());
  comparison_caption_->setText(note);
  comparison_caption_->setToolTip({});
  main_view_->setFitSpanUs(0);
  main_view_->fitAll();
}

void TimelinePage::setComparisonBusy(bool busy) {
  busy_ = busy;
  busy_bar_->setVisible(busy);
}

QString TimelinePage::mainCaption() const { return main_caption_->text(); }

QString TimelinePage::comparisonCaption() const { return comparison_caption_->text(); }

void TimelinePage::selectOp(int op) {
  main_view_->selectOp(op, true);
  comparison_view_->selectOp(op, false);
}

void TimelinePage::fitAll() {
  main_view_->fitAll();  // fitTogether() follows through fitted()
  if (!comparing()) return;
  comparison_view_->fitAll();
}

void TimelinePage::fitTogether() {
  if (syncing_ || !comparing() || main_view_->barCount() == 0 || comparison_view_->barCount() == 0)
    return;
  syncing_ = true;
  const double span_us = std::max(main_view_->endUs(), comparison_view_->endUs());
  main_view_->setFitSpanUs(span_us);
  comparison_view_->setFitSpanUs(span_us);
  // The narrower viewport (one may carry a vertical scroll bar) sets the scale.
  const double pixels_per_us =
      std::min(main_view_->fitPixelsPerUs(), comparison_view_->fitPixelsPerUs());
  main_view_->setTimeWindow(pixels_per_us, 0);
  comparison_view_->setTimeWindow(pixels_per_us, 0);
  syncing_ = false;
}

void TimelinePage::follow(TimelineView* from, TimelineView* to) {
  if (syncing_ || !comparing() || from->barCount() == 0 || to->barCount() == 0) return;
  syncing_ = true;
  to->setTimeWindow(from->pixelsPerUs(), from->leftUs());
  syncing_ = false;
}

}  // namespace aware::gui
