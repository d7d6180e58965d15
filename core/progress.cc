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

StderrProgress::~StderrProgress() { finish(); }

StderrProgress::StderrProgress(double interval_s)
    : interval_s_(interval_s), terminal_(::isatty(::fileno(stderr)) == 1) {}

void StderrProgress::on_progress(const Progress& p) {
  const double now = now_s();
  const bool last = p.total > 0 && p.done >= p.total;
  // A log file gets whole lines, at most one every kLogIntervalS, and no escape codes.
  const double interval = terminal_ ? interval_s_ : std::max(interval_s_, kLogIntervalS);
  if (!last && now - last_print_s_ < interval) return;
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
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
}

void StderrProgress::finish() {
  if (printed_) {
    std::fprintf(stderr, "\n");
    printed_ = false;
  }
}

}  // namespace aware
