#include "core/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace aware {
namespace {
double now_s() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}
}  // namespace

namespace {
std::atomic<bool> g_line_open{false};
}  // namespace

bool stderr_progress_line_open() { return g_line_open.load(std::memory_order_relaxed); }

StderrProgress::~StderrProgress() { finish(); }

StderrProgress::StderrProgress(double interval_s)
    : interval_s_(interval_s), terminal_(::isatty(::fileno(stderr)) == 1) {}

void StderrProgress::on_progress(const Progress& p) {
  const double now = now_s();
  const bool last = p.total > 0 && p.done >= p.total;
  // A log file gets whole lines, at most one every kLogIntervalS, and no escape codes.
  const double interval = terminal_ ? interval_s_ : std::max(interval_s_, kLogIntervalS);
  if (!last && now - last_print_s_ < interval) return;
  // A log gets each state once: work that reports its last step and then "done"
  // with the same count (every search does) would otherwise print it twice; on a
  // terminal the second line only overwrites the first.
  if (!terminal_ && printed_any_ && p.task == last_task_ && p.done == last_done_ && p.total == last_total_)
    return;
  printed_any_ = true;
  last_task_ = p.task;
  last_done_ = p.done;
  last_total_ = p.total;
  last_print_s_ = now;
  char line[512];
  int len = std::snprintf(line, sizeof line, "%s%s", terminal_ ? "\r" : "", p.task.c_str());
  if (p.total > 0) {
    len += std::snprintf(line + len, sizeof line - len, " %lld/%lld (%.0f%%)", p.done, p.total,
                         100.0 * p.done / p.total);
  } else if (p.done > 0) {
    len += std::snprintf(line + len, sizeof line - len, " %lld", p.done);
  }
  if (p.best_step_us >= 0 && len < 400)
    len += std::snprintf(line + len, sizeof line - len, " best %.3f ms", p.best_step_us / 1e3);
  if (len < 400) len += std::snprintf(line + len, sizeof line - len, " %.1fs", p.elapsed_s);
  if (p.eta_s >= 0 && len < 400)
    len += std::snprintf(line + len, sizeof line - len, " eta %.0fs", p.eta_s);
  if (!p.message.empty() && len < 400)
    len += std::snprintf(line + len, sizeof line - len, " %s", p.message.c_str());
  if (terminal_) {
    std::fprintf(stderr, "%s\033[K", line);
    printed_ = true;
    g_line_open.store(true, std::memory_order_relaxed);
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
}

void StderrProgress::finish() {
  if (printed_) {
    std::fprintf(stderr, "\n");
    printed_ = false;
    g_line_open.store(false, std::memory_order_relaxed);
  }
}

}  // namespace aware
