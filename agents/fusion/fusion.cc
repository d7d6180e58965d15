// The public helpers around fuse_by_comm_ratio: mapping placements between the
// fine and coarse graphs, reading FusionOptions from placer options, and the
// JSON report. The coarsening is in coarsener.cc and fused_graph.cc.
#include "agents/fusion/fusion.h"

#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace aware {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

Placement expand_placement(const FusionResult& fusion, const Placement& coarse) {
  const int groups = static_cast<int>(fusion.ops_of_group.size());
  if (coarse.size() != groups)
    throw ConfigError("expand_placement: the coarse placement has " +
                      std::to_string(coarse.size()) + " entries for " + std::to_string(groups) +
                      " fused nodes");
  Placement fine(std::vector<int>(fusion.group_of_op.size(), -1));
  for (size_t op = 0; op < fusion.group_of_op.size(); ++op)
    fine[static_cast<int>(op)] = coarse[fusion.group_of_op[op]];
  return fine;
}

Placement coarsen_placement(const FusionResult& fusion, const Placement& fine) {
  if (fine.size() != static_cast<int>(fusion.group_of_op.size()))
    throw ConfigError("coarsen_placement: the placement has " + std::to_string(fine.size()) +
                      " entries for " + std::to_string(fusion.group_of_op.size()) + " ops");
  Placement coarse(std::vector<int>(fusion.ops_of_group.size(), 0));
  std::map<int, int> votes;
  for (size_t g = 0; g < fusion.ops_of_group.size(); ++g) {
    votes.clear();
    for (int op : fusion.ops_of_group[g]) ++votes[fine[op]];
    int best = -1, best_votes = -1;
    for (const auto& [device, count] : votes)
      if (count > best_votes) best = device, best_votes = count;
    coarse[static_cast<int>(g)] = best;
  }
  return coarse;
}

FusionOptions fusion_options_from(const Options& options, const std::string& owner) {
  FusionOptions out;
  out.target_size = static_cast<int>(option_int(options, "fusion.target_size", 0, owner));
  out.threshold = option_double(options, "fusion.threshold", out.threshold, owner);
  out.chain_rule = option_int(options, "fusion.chain", 1, owner) != 0;
  out.comm_rule = option_int(options, "fusion.comm", 1, owner) != 0;
  out.memory_fraction =
      option_double(options, "fusion.memory_fraction", out.memory_fraction, owner);
  const std::string cost = option_string(options, "fusion.cost", "exact");
  if (cost == "exact") {
    out.cost_mode = FusedCostMode::kExactWhenHomogeneous;
  } else if (cost == "roofline") {
    out.cost_mode = FusedCostMode::kRooflineOfSum;
  } else {
    throw ConfigError(owner + ": fusion.cost must be exact or roofline, got '" + cost + "'");
  }
  const std::string edges = option_string(options, "fusion.edges", "pair");
  if (edges == "class") {
    out.edges = FusedEdgeMode::kPerTensorClass;
  } else if (edges == "pair") {
    out.edges = FusedEdgeMode::kOnePerPair;
  } else {
    throw ConfigError(owner + ": fusion.edges must be pair or class, got '" + edges + "'");
  }
  if (out.target_size < 0) throw ConfigError(owner + ": fusion.target_size must not be negative");
  if (!(out.threshold > 0)) throw ConfigError(owner + ": fusion.threshold must be > 0");
  if (!(out.memory_fraction > 0 && out.memory_fraction <= 1))
    throw ConfigError(owner + ": fusion.memory_fraction must be in (0, 1]");
  return out;
}

nlohmann::json fusion_stats_json(const FusionStats& s) {
  nlohmann::json j;
  j["ops_before"] = s.ops_before;
  j["ops_after"] = s.ops_after;
  j["edges_before"] = s.edges_before;
  j["edges_after"] = s.edges_after;
  j["colocation_merges"] = s.colocation_merges;
  j["colocation_unresolved"] = s.colocation_unresolved;
  j["chain_merges"] = s.chain_merges;
  j["comm_merges"] = s.comm_merges;
  j["target_merges"] = s.target_merges;
  j["rejected_cycle"] = s.rejected_cycle;
  j["rejected_memory"] = s.rejected_memory;
  j["target_met"] = s.target_met;
  j["slowest_route_Bps"] = s.slowest_route_Bps == kInf ? -1.0 : s.slowest_route_Bps;
  j["slowest_route_latency_us"] = s.slowest_route_latency_us;
  j["memory_limit_bytes"] = s.memory_limit_bytes == kInf ? -1.0 : s.memory_limit_bytes;
  j["largest_node_memory_bytes"] = s.largest_node_memory_bytes;
  j["largest_node_ops"] = s.largest_node_ops;
  j["internal_bytes"] = s.internal_bytes;
  j["cut_bytes"] = s.cut_bytes;
  return j;
}

nlohmann::json fusion_mapping_json(const OpGraph& fine, const FusionResult& fusion) {
  nlohmann::json j;
  j["graph"] = fine.name();
  j["coarse_graph"] = fusion.coarse.name();
  nlohmann::json groups = nlohmann::json::array();
  for (size_t g = 0; g < fusion.ops_of_group.size(); ++g) {
    nlohmann::json names = nlohmann::json::array();
    for (int op : fusion.ops_of_group[g]) names.push_back(fine.op(op).name);
    groups.push_back({{"node", fusion.coarse.op(static_cast<int>(g)).name}, {"ops", names}});
  }
  j["groups"] = groups;
  j["stats"] = fusion_stats_json(fusion.stats);
  return j;
}

}  // namespace aware
