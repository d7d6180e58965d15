#include "core/search_exchange.h"

#include "core/errors.h"

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

}  // namespace aware
