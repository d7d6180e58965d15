// Registers every baseline placer with PlacerRegistry::instance():
//   single, round-robin, random, expert, metis, heft, m-topo, m-etf, m-sct,
//   random-search, anneal.
// Idempotent and thread-safe (the registry locks; a second call re-adds the same
// entries). Called by register_builtins() (builtins/), not directly.
#pragma once

#include <string>
#include <vector>

namespace aware {

void register_baseline_placers();

// The names register_baseline_placers() adds, cheapest first (the order `compare`
// uses for "all").
std::vector<std::string> baseline_placer_names();

}  // namespace aware
