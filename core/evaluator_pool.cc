#include "core/evaluator_pool.h"

#include <chrono>
#include <string>

#include "core/errors.h"

namespace aware {

EvaluatorPool::EvaluatorPool(const Evaluator& prototype, int threads) {
  if (threads < 1 || threads > 1024)
    throw ConfigError("evaluator pool: threads must be 1..1024, got " + std::to_string(threads));
  for (int i = 0; i < threads; ++i) evaluators_.push_back(prototype.clone());
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

EvaluatorPool::~EvaluatorPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& t : workers_) t.join();
}

namespace {
// How long an idle helper (or the caller, waiting for the helpers) spins on
// the batch counter before it sleeps: about what one short evaluation takes.
constexpr auto kSpin = std::chrono::microseconds(100);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until `done()` or kSpin passes; returns done().
template <typename Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (done()) return true;
    cpu_relax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return done();
  }
}
}  // namespace

// Takes items one at a time (evaluations are short and uneven: a shared counter
// balances them better than fixed slices). After an error nothing new starts.
// The batch's fields are written under mutex_ before generation_ is bumped, so
// a helper that saw the new generation reads them as written.
void EvaluatorPool::run_items(int index) {
  Evaluator& evaluator = *evaluators_[index];
  for (;;) {
    const std::size_t item = next_.fetch_add(1);
    if (item >= placements_->size() || failed_.load()) return;
    try {
      (*results_)[item] = evaluator.evaluate(*graph_, *cluster_, (*placements_)[item]);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      failed_ = true;
      return;
    }
  }
}

void EvaluatorPool::worker(int index) {
  long long seen = 0;
  for (;;) {
    spin_until([&] { return stopping_.load() || generation_.load() != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stopping_.load() || generation_.load() != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_items(index);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0) done_.notify_all();
    }
  }
}

std::vector<StepResult> EvaluatorPool::evaluate_batch(const OpGraph& graph, const Cluster& cluster,
                                                      const std::vector<Placement>& placements) {
  std::vector<StepResult> results(placements.size());
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    graph_ = &graph;
    cluster_ = &cluster;
    placements_ = &placements;
    results_ = &results;
    next_ = 0;
    error_ = nullptr;
    failed_ = false;
    // Helpers are woken only when there is more than one item for them to share.
    busy_ = placements.size() > 1 ? static_cast<int>(workers_.size()) : 0;
    wake = busy_ > 0;
    if (wake) ++generation_;
  }
  // Read under the lock above: helpers decrement busy_ as soon as they are woken.
  if (wake) start_.notify_all();
  run_items(0);
  spin_until([&] { return busy_.load() == 0; });
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return busy_ == 0; });
    error = error_;
    graph_ = nullptr;
    cluster_ = nullptr;
    placements_ = nullptr;
    results_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
  return results;
}

}  // namespace aware
