// Parallel strategies as graph rewrites: a strategy spec ("dp:4,collective=ring",
// "hybrid:2xm-etf", "pipeline:4,micro=8", "bagging:4", "mapreduce:8,cache=on")
// turns a training-step graph into a bigger graph plus a placement of it, so that
// every evaluator, placer, timeline and the GUI work on the result unchanged.
//
// The rewritten graph processes the whole global batch of the input graph in one
// step (graph.batch() samples), so step times of different strategies compare as
// "time per global batch". The specs, their options and the cost model of each
// inserted op are documented in docs/strategies.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "core/placement.h"
#include "core/registry.h"

namespace aware {

class Cluster;
class Evaluator;
class ProgressObserver;

// A parsed spec: its kind ("single", "dp", "hybrid", "pipeline", "bagging",
// "mapreduce"), the positional argument after the colon (may be empty) and the
// key=value options after it.
struct StrategySpec {
  std::string kind;
  std::string argument;
  Options options;
  std::string text;  // as given
};

// Parses "KIND[:ARG][,key=value...]". Throws ConfigError naming the spec for an
// unknown kind, an option the kind does not take, or a malformed option.
StrategySpec parse_strategy_spec(const std::string& text);
// parse_strategy_spec, then what can be checked without a graph or a cluster: the
// argument (a count, a method, a collective) and every option's value, as the
// kind's StrategyKind::check says. Throws ConfigError naming the spec. What needs
// the graph or the cluster (more replicas than devices, a batch too small to
// split) is left to apply_strategy. For commands that check every spec before
// any work (`compare --strategies`, `strategy apply`).
StrategySpec check_strategy_spec(const std::string& text);
// Splits a comma-separated list of specs ("dp:ring,dp:4,collective=ps,pipeline")
// into specs: a piece holding '=' belongs to the spec before it.
std::vector<std::string> split_strategy_list(const std::string& text);
// The kinds and a one-line description of each, for help text (the registry's).
std::vector<std::pair<std::string, std::string>> strategy_kinds();

// What a strategy needs besides the graph and the cluster (hybrid runs a placer).
struct StrategyContext {
  Evaluator* evaluator = nullptr;      // for placers that search by simulation
  std::uint64_t seed = 1;
  long long budget_evals = 0;          // for the hybrid's placer; 0 = its default
  double budget_seconds = 0;
  ProgressObserver* progress = nullptr;
  Options placer_options;
  // hybrid only: each op's device within its replica's group, given (the 3d
  // spec's pipeline of tensor-parallel ranks) instead of placed by the method.
  const std::vector<int>* group_slots = nullptr;
  // 3d only: each op's pipeline piece, given (by op id of the graph) instead of
  // cut by the 3d rewrite (the representative simulation's, cut at the whole
  // batch as the full rewrite cuts it, for its one micro-batch's step).
  const std::vector<int>* pipeline_pieces = nullptr;
};

struct StrategyResult {
  std::string spec;            // canonical text, e.g. "dp:4,collective=ring,bucket_mb=25,overlap=on"
  OpGraph graph;               // the rewritten step; graph.batch() = the global batch
  Placement placement;         // a device per op of `graph`
  int replicas = 1;            // model copies that run at once
  int devices_used = 1;
  double global_batch = 0;     // samples per step
  std::vector<std::string> notes;  // how the batch was split, what was approximated
};

// Applies `spec` to `graph` on `cluster`. Throws ConfigError (bad spec, more
// replicas than devices, a batch smaller than the replica count) or GraphError
// (a graph without the batch or phase metadata the rewrite needs), each in one line
// naming the graph and the spec. The result's graph passes OpGraph::validate().
StrategyResult apply_strategy(const OpGraph& graph, const Cluster& cluster,
                              const std::string& spec, const StrategyContext& context = {});
StrategyResult apply_strategy(const OpGraph& graph, const Cluster& cluster,
                              const StrategySpec& spec, const StrategyContext& context = {});

// One kind of strategy as the registry holds it: what `strategy list` prints,
// the options its specs take, the rewrite, and the specs the conformance suite
// (tests/conformance/strategy_conformance_test.cc) runs it with.
struct StrategyKind {
  std::string name;           // the spec's KIND
  std::string description;    // one line: the spec's shape and what it does
  std::vector<std::string> options;  // the key=value options it takes
  // The rewrite; the spec is parsed and its options checked against `options`.
  std::function<StrategyResult(const OpGraph&, const Cluster&, const StrategySpec&, const StrategyContext&)> apply;
  std::string example;        // a spec that works on any cluster of 2+ devices
  // A spec with one replica, one stage, one group, whose step must equal the
  // plain step on one device; empty when the kind has none (mapreduce: a job's
  // fixed costs are part of every iteration).
  std::string one_replica;
  // Throws ConfigError for an argument or option value that apply would refuse on
  // any graph and cluster; empty: the parse alone (a plugin's kind may have none).
  std::function<void(const StrategySpec&)> check;
  // The graph the conformance suite runs the example on, as a graph spec; empty: a
  // small ResNet-50 step (kinds that need a particular structure name one).
  std::string example_graph;
};

// Every strategy kind by name. The library's own rewrites are registered when the
// registry is first used; add() takes more (a plugin's). Thread-safe.
class StrategyRegistry {
 public:
  static StrategyRegistry& instance();
  // Adds or replaces `kind`; throws ConfigError for an empty name or no rewrite.
  void add(StrategyKind kind);
  bool has(const std::string& name) const;
  // The kind; ConfigError "unknown kind ... (known: ...)" otherwise.
  StrategyKind get(const std::string& name) const;
  std::vector<std::string> names() const;  // sorted

 private:
  StrategyRegistry();
  mutable std::mutex mutex_;
  std::map<std::string, StrategyKind> kinds_;
};

// Ops the rewrites insert carry this block name ("collective", "pipeline",
// "mapreduce" ops are all tagged so), so reports can tell them from model ops.
inline constexpr const char* kStrategyBlock = "strategy";

}  // namespace aware
