#include "core/progress.h"

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

void StderrProgress::on_progress(const Progress& p) {
  const double now = now_s();
  const bool last = p.total > 0 && p.done >= p.total;
  if (!last && now - last_print_s_ < interval_s_) return;
  last_print_s_ = now;
  char line[512];
  int len = std::snprintf(line, sizeof line, "\r%s", p.task.c_str());
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
  std::fprintf(stderr, "%s\033[K", line);
  std::fflush(stderr);
  printed_ = true;
}

void StderrProgress::finish() {
  if (printed_) {
    std::fprintf(stderr, "\n");
    printed_ = false;
  }
}

}  // namespace aware
