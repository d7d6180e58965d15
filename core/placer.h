// The Placer interface every non-learned placer and every agent implements, and
// its registry ("heft", "metis", "anneal", "placeto", "aware", ...).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/evaluator.h"
#include "core/placement.h"
#include "core/registry.h"

namespace aware {

class OpGraph;
class Cluster;
class ProgressObserver;
class SearchExchange;

// What a placer is given besides the graph and the cluster.
struct PlaceContext {
  Evaluator* evaluator = nullptr;    // for placers that search by simulation; may be null
  std::uint64_t seed = 1;            // every random choice derives from it
  long long budget_evals = 0;        // evaluator calls allowed; 0 = the placer's default
  double budget_seconds = 0;         // wall-clock budget; 0 = none
  ProgressObserver* progress = nullptr;  // may be null
  const Placement* start = nullptr;  // a starting placement for local search, may be null
  Options options;                   // placer-specific settings
  // For a search run as one of several chains (threads or MPI ranks) that meet
  // to share their best (core/search_exchange.h); null: a single search. Placers
  // that cannot run as chains refuse a non-null one with ConfigError.
  SearchExchange* exchange = nullptr;
};

class Placer {
 public:
  virtual ~Placer() = default;
  virtual std::string name() const = 0;
  // Returns a complete placement. Never returns one it knows to be infeasible when
  // it can find a feasible one under its rules. Throws ConfigError on bad options,
  // and Error when the graph cannot fit in the cluster at all.
  virtual Placement place(const OpGraph& graph, const Cluster& cluster,
                          const PlaceContext& context) = 0;
  // True when the placer needs context.evaluator.
  virtual bool needs_evaluator() const { return false; }
  // True when place() takes PlaceContext::exchange and runs as one chain of it.
  virtual bool runs_as_chains() const { return false; }
};

using PlacerFactory = std::function<std::unique_ptr<Placer>()>;

// Name -> factory. An entry's OptionSpecs list the PlaceContext::options the
// placer takes; check_options() refuses others before any work starts.
// Thread-safe.
class PlacerRegistry : public Registry<Placer> {
 public:
  static PlacerRegistry& instance();
  // The named placer, wrapped so that place() first checks context.options
  // against the entry's OptionSpecs (ConfigError naming the valid ones, or the
  // range a number must lie in) and prepares its output paths
  // (prepare_output_options): a placer never sees an option it did not declare,
  // and an unwritable output fails before any work. Throws ConfigError for an
  // unknown name.
  std::unique_ptr<Placer> create(const std::string& name) const;

 private:
  PlacerRegistry() : Registry("method") {}
};

}  // namespace aware
