// The one observer interface long work reports through (search, compare,
// pre-training). The CLI prints it on stderr; the GUI draws it.
#pragma once

#include <atomic>
#include <string>

namespace aware {

struct Progress {
  std::string task;          // what is running, e.g. "anneal on nmt4"
  long long done = 0;        // units done (evaluations, episodes, cells)
  long long total = 0;       // units planned; 0 when unknown
  double best_step_us = -1;  // best step time so far, < 0 when none
  double elapsed_s = 0;
  double eta_s = -1;         // < 0 when unknown
  std::string message;
  // Learned agents, after each policy update on one graph: the update's sampled
  // placements (mean, fastest, slowest step time, penalised as the agent sees
  // them) and the policy's mean entropy per decision (nats). < 0 when none.
  double sample_mean_us = -1, sample_min_us = -1, sample_max_us = -1;
  double entropy = -1;
};

class ProgressObserver {
 public:
  virtual ~ProgressObserver() = default;
  // Called from the working thread; implementations must be quick.
  virtual void on_progress(const Progress& progress) = 0;
  // Work polls this and stops early (returning its best so far) when true.
  virtual bool cancelled() const { return cancel_.load(std::memory_order_relaxed); }
  void cancel() { cancel_.store(true, std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancel_{false};
};

// Prints one self-overwriting line on stderr, at most every `interval_s` seconds,
// when stderr is a terminal; otherwise (a log file, a pipe) plain lines, at most one
// every kLogIntervalS seconds, with no carriage returns or escape codes.
// True while a self-overwriting progress line stands unfinished on stderr (a
// terminal only): whoever prints next on stderr ends it first, and nobody else
// needs to print a blank line "just in case".
bool stderr_progress_line_open();

class StderrProgress : public ProgressObserver {
 public:
  static constexpr double kLogIntervalS = 10.0;
  explicit StderrProgress(double interval_s = 0.5);
  ~StderrProgress() override;
  void on_progress(const Progress& progress) override;
  void finish();

 private:
  double interval_s_;
  bool terminal_ = false;
  double last_print_s_ = -1e9;
  bool printed_ = false;
  // The last line printed (a log only prints a state once).
  bool printed_any_ = false;
  std::string last_task_;
  long long last_done_ = 0, last_total_ = 0;
};

}  // namespace aware
