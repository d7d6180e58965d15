// Factories of the individual baseline placers (registered by register.cc).
// Each returned placer is independent; one instance must not be used from two
// threads at once.
#pragma once

#include <memory>
#include <vector>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "core/placer.h"

namespace aware::baselines {

std::unique_ptr<Placer> make_single_placer();        // "single"
std::unique_ptr<Placer> make_round_robin_placer();   // "round-robin"
std::unique_ptr<Placer> make_random_placer();        // "random"
std::unique_ptr<Placer> make_expert_placer();        // "expert"
std::unique_ptr<Placer> make_metis_placer();         // "metis"
std::unique_ptr<Placer> make_heft_placer();          // "heft"
std::unique_ptr<Placer> make_m_topo_placer();        // "m-topo"
std::unique_ptr<Placer> make_m_etf_placer();         // "m-etf"
std::unique_ptr<Placer> make_m_sct_placer();         // "m-sct"
std::unique_ptr<Placer> make_random_search_placer(); // "random-search"
std::unique_ptr<Placer> make_random_sampling_placer(); // "random-sampling"
std::unique_ptr<Placer> make_anneal_placer();        // "anneal"
std::unique_ptr<Placer> make_anneal_graph_placer();  // "anneal-graph"
std::unique_ptr<Placer> make_genetic_placer();       // "genetic"
std::unique_ptr<Placer> make_exhaustive_placer();    // "exhaustive"

// The cheap one-shot placers a search starts from, in the order they are tried:
// m-etf, heft, m-sct, expert, m-topo, single, round-robin (fresh instances).
std::vector<std::unique_ptr<Placer>> cheap_placers();

// m-TOPO's memory cap per device, bytes: the graph's total op memory / devices +
// the largest op's memory (op_memory_bytes), never above the device's own memory.
std::vector<double> m_topo_memory_caps(const OpGraph& graph, const Cluster& cluster);

}  // namespace aware::baselines
