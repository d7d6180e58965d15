#include "core/search_exchange.h"

#include <exception>
#include <thread>

#include "core/errors.h"
#include "core/evaluator.h"
#include "core/placer.h"

namespace aware {

ChainMeeting best_of(const std::vector<ChainBest>& brought) {
  AWARE_CHECK(!brought.empty(), "a meeting of no chains");
  ChainMeeting out;
  out.best = brought[0];
  for (size_t i = 0; i < brought.size(); ++i) {
    const ChainBest& b = brought[i];
    out.stop = out.stop || b.stop;
    const bool better = b.feasible != out.best.feasible ? b.feasible : b.step_us < out.best.step_us;
    if (i > 0 && better) {
      out.best = b;
      out.from_chain = static_cast<int>(i);
    }
  }
  out.best.stop = out.stop;
  return out;
}

class ThreadChainGroup::Member final : public SearchExchange {
 public:
  Member(ThreadChainGroup& group, int chain) : group_(group), chain_(chain) {}
  int chain() const override { return chain_; }
  int chains() const override { return group_.chains(); }
  ChainMeeting meet(const ChainBest& mine) override { return group_.meet(chain_, mine); }

 private:
  ThreadChainGroup& group_;
  int chain_;
};

ThreadChainGroup::ThreadChainGroup(int chains, std::chrono::seconds timeout) : timeout_(timeout) {
  if (chains < 1) throw ConfigError("a chain group needs at least one chain");
  brought_.resize(static_cast<size_t>(chains));
  for (int i = 0; i < chains; ++i) members_.push_back(std::make_unique<Member>(*this, i));
}

ThreadChainGroup::~ThreadChainGroup() = default;

SearchExchange& ThreadChainGroup::member(int chain) {
  AWARE_CHECK(chain >= 0 && chain < chains(), "no such chain");
  return *members_[static_cast<size_t>(chain)];
}

void ThreadChainGroup::abandon(const std::string& why) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (abandoned_.empty()) abandoned_ = why.empty() ? "a chain failed" : why;
  changed_.notify_all();
}

ChainMeeting ThreadChainGroup::meet(int chain, const ChainBest& mine) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!abandoned_.empty()) throw Error("chain " + std::to_string(chain) + " stops: " + abandoned_);
  const long long round = round_;
  brought_[static_cast<size_t>(chain)] = mine;
  if (++arrived_ == chains()) {
    outcome_ = best_of(brought_);
    arrived_ = 0;
    ++round_;
    changed_.notify_all();
    return outcome_;
  }
  if (!changed_.wait_for(lock, timeout_, [&] { return round_ != round || !abandoned_.empty(); }))
    throw Error("chain " + std::to_string(chain) + ": the other chains did not meet within " +
                std::to_string(timeout_.count()) + " s");
  if (round_ == round) throw Error("chain " + std::to_string(chain) + " stops: " + abandoned_);
  return outcome_;
}

std::vector<Placement> place_on_thread_chains(const std::string& method, int chains, const OpGraph& graph,
                                              const Cluster& cluster, const PlaceContext& context) {
  if (context.evaluator == nullptr) throw ConfigError(method + " as chains needs an evaluator");
  ThreadChainGroup group(chains);
  std::vector<Placement> results(static_cast<size_t>(chains));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(chains));
  std::vector<std::thread> threads;
  for (int k = 0; k < chains; ++k)
    threads.emplace_back([&, k] {
      try {
        std::unique_ptr<Evaluator> evaluator = context.evaluator->clone();
        std::unique_ptr<Placer> placer = PlacerRegistry::instance().create(method);
        PlaceContext chain = context;
        chain.evaluator = evaluator.get();
        chain.exchange = &group.member(k);
        if (k != 0) chain.progress = nullptr;  // chain 0 reports (and is cancelled) for all
        results[static_cast<size_t>(k)] = placer->place(graph, cluster, chain);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(k)] = std::current_exception();
        group.abandon("chain " + std::to_string(k) + " failed: " + e.what());
      }
    });
  for (std::thread& t : threads) t.join();
  // A chain's own error first, not another's report that it stopped because of it.
  for (const auto& error : errors)
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (const Error& e) {
        if (std::string(e.what()).find(" stops: ") == std::string::npos) throw;
      }
    }
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  return results;
}

}  // namespace aware
