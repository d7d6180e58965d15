// Operator fusion with computation and communication awareness (Aware, step 1):
// coarsen an op graph by merging ops where keeping them apart costs more in
// transfer than it can gain in parallel compute.
//
// The rules, applied to edges (u -> v) of the coarse graph as it shrinks:
//  - chain:  v is u's only consumer and u is v's only producer. The two can never
//            run in parallel, so splitting them only adds a transfer.
//  - comm:   transfer_us(bytes u -> v) on the cluster's slowest device-to-device
//            route (its latency + bytes / its bandwidth) exceeds
//            threshold * min(compute_us(u), compute_us(v)), where compute_us of a
//            node is the sum of its members' fastest-device times (OpCostMatrix
//            min_time_us). Parallelism can save at most the smaller endpoint's
//            time; the transfer costs more than that.
//  - target: while the graph has more than `target_size` nodes after the rules
//            are exhausted, merge the edge with the highest comm-to-compute ratio
//            anyway.
// Merges are taken greedily: chain links first, then comm edges, then target
// merges; within a class highest transfer / min compute first; ties by node id.
// Colocation groups are contracted before anything else (with every op on a path
// between two of their members, which a contraction must absorb to stay acyclic).
//
// Invariants of the result: the coarse graph is a DAG (an edge u -> v is merged
// only when no other path u ~> v exists, checked by a DFS bounded by a
// dynamically maintained topological order); no fused node's memory (params +
// outputs + workspace of its members) exceeds memory_fraction * the smallest
// device's memory (a single op larger than that stays a node on its own); every
// op of a colocation group ends in one node, or, when that node would not fit,
// the nodes holding the group carry the group name as their colocation_group so
// placers keep them together. Deterministic: no randomness at all.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/evaluator.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware {

// How a fused node's compute cost is written into the coarse graph.
enum class FusedCostMode {
  // compute_us = sum of the members' times on the cluster's device 0 when every
  // device of the cluster has the same cost parameters (exact for that cluster),
  // or when every member has a measured compute_us (their sum); otherwise as
  // kRooflineOfSum.
  kExactWhenHomogeneous,
  // compute_us unset; flops and bytes_accessed are the members' sums, so the
  // roofline is max(sum flops / rate, sum bytes / bandwidth) + one launch
  // overhead: never above the sum of the members' rooflines (it forgets that a
  // compute-bound and a memory-bound member cannot overlap, and k - 1 launches).
  kRooflineOfSum,
};

// How edges between fused nodes are written.
enum class FusedEdgeMode {
  // One edge per (source node, destination node) pair, bytes = the distinct
  // tensors crossing it; readers receiving exactly the same tensors share an
  // output slot (a weight read by many nodes stays one tensor). A tensor read by
  // readers with different sets sits in several slots: its extra copies are
  // taken out of the node's workspace, and a node where that is not enough is
  // written as kPerTensorClass, so no node claims more memory than its members.
  // Transfers of such tensors may be counted more than once (pessimistic).
  kOnePerPair,
  // A node's exported tensors grouped by the exact set of nodes reading them;
  // one output slot per group and one edge per (group, reader). Memory and
  // transfers match the full graph (a tensor is held once and sent once per
  // device); a pair of nodes may have several edges.
  kPerTensorClass,
};

struct FusionOptions {
  // Largest coarse graph wanted, in nodes; 0: no target (only the rules merge).
  // The rules always run to completion, so the result may be smaller.
  int target_size = 0;
  // Comm rule factor: merge when transfer_us > threshold * min compute_us. > 0.
  double threshold = 1.0;
  bool chain_rule = true;
  bool comm_rule = true;
  bool colocation = true;  // contract colocation groups first
  // A fused node may hold at most this fraction of the smallest device's memory. (0, 1].
  double memory_fraction = 1.0;
  FusedCostMode cost_mode = FusedCostMode::kExactWhenHomogeneous;
  FusedEdgeMode edges = FusedEdgeMode::kOnePerPair;
};

struct FusionStats {
  int ops_before = 0;
  int ops_after = 0;
  int edges_before = 0;
  int edges_after = 0;
  int colocation_merges = 0;      // groups contracted to one node
  int colocation_unresolved = 0;  // groups left as several nodes sharing a colocation_group
  int chain_merges = 0;
  int comm_merges = 0;
  int target_merges = 0;
  int rejected_cycle = 0;        // candidate merges refused because another path existed
  int rejected_memory = 0;       // refused because the fused node would not fit
  bool target_met = true;        // false when target_size > 0 and nothing more could merge
  double slowest_route_Bps = 0;  // the route the comm rule prices transfers on
  double slowest_route_latency_us = 0;
  double memory_limit_bytes = 0;  // memory_fraction * smallest device memory
  double largest_node_memory_bytes = 0;
  int largest_node_ops = 0;
  double internal_bytes = 0;  // bytes of fine edges now inside a fused node
  double cut_bytes = 0;       // bytes of fine edges still between nodes
};

struct FusionResult {
  OpGraph coarse;                              // a valid DAG; node g holds ops_of_group[g]
  std::vector<int> group_of_op;                // fine op id -> coarse node id
  std::vector<std::vector<int>> ops_of_group;  // coarse node id -> fine op ids, ascending
  FusionStats stats;
};

// Coarsens `graph` for `cluster` (finalized). Op costs come from `table` when
// given, else from each op's compute_us or roofline. The coarse graph:
//  - nodes are numbered in a topological order (ties by smallest member id);
//  - a node of one op keeps that op's name, type, costs and metadata; a fused
//    node is named "<first member>+<k more>", type "Fused", with summed flops,
//    bytes_accessed and param_bytes, compute_us per `cost_mode`, block/layer
//    kept where all members agree;
//  - edges per `edges` (FusedEdgeMode); a tensor read by several ops of one node
//    counts once;
//  - every node's memory (params + outputs + temp) equals its members' total
//    (params + all outputs + workspace) where the slots allow it: outputs no
//    other node reads count as workspace, and a tensor that had to go into
//    several slots is taken back out of the workspace.
// Throws ConfigError on bad options or an unfinalized cluster; GraphError when
// `graph` does not validate. Thread-safe (pure function).
FusionResult fuse_by_comm_ratio(const OpGraph& graph, const Cluster& cluster,
                                const FusionOptions& options = {},
                                const CostTable* table = nullptr);

// The fine placement: every op on its coarse node's device. Throws ConfigError
// when `coarse` does not have one device per coarse node.
Placement expand_placement(const FusionResult& fusion, const Placement& coarse);
// The coarse placement nearest to a fine one: each node on the device holding
// most of its members (ties: the lowest device id). For seeding searches.
Placement coarsen_placement(const FusionResult& fusion, const Placement& fine);

// Reads fusion settings from placer options: fusion.target_size,
// fusion.threshold, fusion.chain (0/1), fusion.comm (0/1),
// fusion.memory_fraction, fusion.cost (exact|roofline), fusion.edges
// (pair|class). Other keys are ignored.
// Throws ConfigError naming `owner` on a bad value.
FusionOptions fusion_options_from(const Options& options, const std::string& owner);

// {"graph", "coarse_graph", "groups": [{"node", "ops": [names...]}...], "stats"}.
nlohmann::json fusion_mapping_json(const OpGraph& fine, const FusionResult& fusion);
nlohmann::json fusion_stats_json(const FusionStats& stats);

}  // namespace aware
