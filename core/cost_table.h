// Measured op-cost tables on disk (format "aware-cost-table", version 1; see
// docs/formats.md), a fingerprint for cache keys, and how much of a graph a table
// covers. The table itself, and how a cost is looked up, is CostTable in
// core/cost_model.h.
//
//   {"format": "aware-cost-table", "version": 1, "graph": "zoo:resnet50",
//    "backend": "cuda", "costs": {"V100": {"conv1": 812.5, ...}, "*": {...}}}
//
// All functions are pure or touch only the named file; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/cost_model.h"

namespace aware {

class OpGraph;
class Cluster;

// The newest version this build writes and reads (1: costs only; 2: + fits;
// 3: + pair_slowdowns).
constexpr int kCostTableFormatVersion = 3;

// What a table was measured on, kept beside it for people and caches; the
// simulators do not read it. Both may be empty.
struct CostTableInfo {
  std::string graph;    // the graph's name or spec ("zoo:resnet50")
  std::string backend;  // who measured it ("cpu", "cuda", "imported", ...)
};

nlohmann::json cost_table_to_json(const CostTable& table, const CostTableInfo& info = {});
// `source` names the document in error messages. Strict: unknown top-level
// fields, a kind that is not an object, an empty op name or kind, and a cost that
// is not a finite number >= 0 throw ParseError naming `source`, the device kind
// and the op. Fills `info` when non-null.
CostTable cost_table_from_json(const nlohmann::json& doc, const std::string& source,
                               CostTableInfo* info = nullptr);
// Reads a cost-table file; throws ParseError naming `path` (see cost_table_from_json).
CostTable read_cost_table_file(const std::string& path, CostTableInfo* info = nullptr);
// Writes through a temporary file and a rename; throws ParseError naming `path`.
void write_cost_table_file(const CostTable& table, const std::string& path,
                           const CostTableInfo& info = {});

// 16 hex digits identifying the entries (names, kinds and the exact values);
// equal tables give equal fingerprints in every process and build. For cache
// keys, not for security.
std::string cost_table_fingerprint(const CostTable& table);

// How a table meets one (graph, cluster): which (op, device) costs it supplies and
// which of its entries nothing uses. Tables may cover several graphs, so unused
// entries are normal; ops the table misses keep their measured compute_us or the
// roofline.
struct CostTableCoverage {
  int pairs_from_table = 0;     // (op, device) pairs priced by the table
  int pairs_total = 0;          // ops x devices
  int ops_missed = 0;           // ops with at least one device the table does not price
  std::string first_missed_op;  // the first such op in id order, or ""
  int entries_unused = 0;       // entries whose op is not in the graph or whose kind no device has
  // Of the missed ops (those with no entry and no compute_us of their own on
  // some device): how many a fit of the table priced, and their share of FLOPs.
  int ops_by_fit = 0;
  int ops_unprofiled = 0;          // missed ops without an op compute_us
  double flops_unprofiled = 0;     // their FLOPs
  double flops_total = 0;          // the graph's FLOPs
};
CostTableCoverage cost_table_coverage(const CostTable& table, const OpGraph& graph,
                                      const Cluster& cluster);

}  // namespace aware
