// Chains of one search that run apart (threads of one process, or the ranks of
// an MPI job) and meet every so many evaluations to share their best. A search
// placer given PlaceContext::exchange runs as one chain of it: its share of the
// budget, its own seed, and at each meeting it may continue from the best any
// chain has found. Every chain must call meet() the same number of times; the
// meeting's `stop` (any chain exhausted, cancelled or past its time) tells them
// all to end together, so no chain waits for one that has left.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/placement.h"

namespace aware {

// One chain's best so far, and whether it wants to stop.
struct ChainBest {
  bool feasible = false;
  double step_us = 0;  // of `placement`
  Placement placement;
  bool stop = false;
};

// The outcome of a meeting: the best of every chain's (feasible first, then the
// shortest step; ties go to the lowest chain), the chain that had it, and
// whether any chain asked to stop.
struct ChainMeeting {
  ChainBest best;
  int from_chain = 0;
  bool stop = false;
};

// Deterministic: the outcome depends only on what the chains brought.
ChainMeeting best_of(const std::vector<ChainBest>& brought);

class SearchExchange {
 public:
  virtual ~SearchExchange() = default;
  virtual int chain() const = 0;   // 0 .. chains() - 1
  virtual int chains() const = 0;  // >= 1
  // Collective: blocks until every chain has brought its best. Throws Error when
  // a peer does not come within the exchange's timeout (a chain died).
  virtual ChainMeeting meet(const ChainBest& mine) = 0;
};

// The chains as threads of one process: member(i) is chain i's exchange, owned
// by the group (which must outlive them). Thread-safe; meet() waits at most
// `timeout` for the others.
class ThreadChainGroup {
 public:
  explicit ThreadChainGroup(int chains, std::chrono::seconds timeout = std::chrono::seconds(3600));
  ~ThreadChainGroup();
  ThreadChainGroup(const ThreadChainGroup&) = delete;
  ThreadChainGroup& operator=(const ThreadChainGroup&) = delete;
  SearchExchange& member(int chain);
  int chains() const { return static_cast<int>(members_.size()); }
  // A chain that failed: every meet() from now on, waiting or not, throws Error
  // naming `why`, so the other chains end instead of waiting for it.
  void abandon(const std::string& why);

 private:
  class Member;
  ChainMeeting meet(int chain, const ChainBest& mine);

  std::chrono::seconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<ChainBest> brought_;
  int arrived_ = 0;
  long long round_ = 0;
  ChainMeeting outcome_;
  std::string abandoned_;
  std::vector<std::unique_ptr<Member>> members_;
};

class OpGraph;
class Cluster;
struct PlaceContext;

// Runs the registered placer `method` as `chains` chains on threads of this
// process, each with its own clone of context.evaluator and its own placer,
// meeting through a ThreadChainGroup; chain 0 keeps context.progress. Returns
// each chain's placement (all the best of all). A chain that fails ends the
// others, and its own error is the one thrown.
std::vector<Placement> place_on_thread_chains(const std::string& method, int chains, const OpGraph& graph,
                                              const Cluster& cluster, const PlaceContext& context);

}  // namespace aware
