// aware reproduce: the plan (which cells each table needs at each budget) and
// the report written from the finished cells. cmd_reproduce.cc runs the cells.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aware::reproduce {

// One child run of this binary: `aware ARGS`, its stdout (one JSON document)
// kept as DIR/cells/KEY.json. Side files (a placement, a curve, a policy) are
// named DIR/cells/KEY.*; the JSON is renamed into place last, so a cell counts
// as finished only when it is whole.
struct Cell {
  std::string key;
  std::string kind;     // place, search, pretrain, simulate, simgrid, fuse, strategy
  std::string graph;    // graph spec: zoo:NAME, family:F:SEED
  std::string model;    // its label in tables
  std::string cluster;  // preset name
  std::string method;   // placer, agent or strategy spec
  std::string variant;  // "", zero-shot, pretrained, fusion=off, position=off
  int seed = 1;
  long long evals = 0;
  std::vector<std::string> args;
  std::vector<std::string> needs;  // keys of cells that must finish first
  // Measures on this machine's cores (the hardware table): runs alone, with no
  // other cell beside it, whatever --jobs says.
  bool exclusive = false;
};

// What one budget runs.
struct Budget {
  std::string name;
  long long evals = 0;            // searches, learned or not
  std::vector<int> seeds;         // every table but compare
  std::vector<int> compare_seeds;
  std::vector<std::string> compare_models, compare_clusters, placers;
  long long compare_evals = 0;
  std::vector<std::string> fusion_models;
  std::string fusion_cluster;
  long long fusion_evals = 0;
  std::vector<std::string> simgrid_models, simgrid_clusters;
  std::vector<std::string> agent_models;
  std::string agent_cluster;
  std::vector<std::string> agent_methods;
  std::vector<std::string> table1_models, table1_clusters;
  // The presets table: Table 1's rows with each agent's `--preset paper`
  // (docs/agents.md), every run given these wall-clock seconds.
  double preset_seconds = 0;
  std::vector<std::string> families;
  int family_count = 12;              // members 1..count; every fourth held out
  long long pretrain_per_graph = 100; // evaluations per training member
  std::string transfer_cluster;
  std::string transfer_zoo_model;     // fine-tuned from the cifar10 policy ("" : none)
  std::vector<std::string> ablation_models, ablation_clusters;
  std::vector<std::string> strategy_models, strategy_clusters, strategy_specs;
  // The hardware-fidelity table (scripts/hw-validate's run): the cpu executor
  // on two cores, calibrated, then these graphs' placements measured and
  // predicted. hw_tag names the configuration in the cells' keys.
  std::vector<std::string> hw_graphs, hw_methods;
  std::string hw_tag;
  int hw_calibrate_repeats = 7, hw_repeats = 5, hw_rounds = 3, hw_random = 5;
  // The mesh table (`aware mesh map`): spiking networks on neuromorphic meshes.
  std::vector<std::pair<std::string, std::string>> mesh_cases;  // network, mesh
};

struct Plan {
  Budget budget;
  std::vector<Cell> cells;                                  // run order, each key once
  std::map<std::string, std::vector<std::string>> tables;   // table -> its cells' keys
  std::vector<std::string> left_out;                        // tables not run here, and why
  std::filesystem::path cell_dir;       // where the cells' files are read from
  // The same folder as the cells' own arguments name it: relative to the report's
  // folder, which every cell runs in, so that no absolute path is recorded.
  std::filesystem::path cell_arg_dir = "cells";
  std::map<std::string, size_t> index;                      // key -> position in cells

  const Cell& cell(const std::string& key) const;
  bool has(const std::string& table) const { return tables.count(table) > 0; }
  std::vector<const Cell*> cells_of(const std::string& table) const;
};

// The presets table's cells' variant: paper-tSECONDS (e.g. paper-t30).
std::string preset_variant(const Budget& b);

// The list schedulers the strategy table takes the best placement of.
const std::vector<std::string>& strategy_placers();

// The non-learned placers the Aware tables compare against (the best of them
// per row), as in experiments/aware_tables.sh.
const std::vector<std::string>& nonlearned_placers();

// Every table, in report order.
const std::vector<std::string>& table_names();

// The learned agents' tables need LibTorch (`aware search`), the simgrid table
// the SimGrid evaluator, fusion `aware fuse`: a build without one leaves that
// table out and says so in the report.
struct Features {
  bool rl = false, simgrid = false, fusion = false, hw = false;  // hw: the cpu executor
};

// Throws ConfigError for an unknown budget or table, or bad seeds.
// `evals` > 0 replaces the budget's evaluations per search (compare, agents,
// the Aware tables; fusion keeps its own).
Plan make_plan(const std::string& budget, const std::string& only, const std::string& seeds,
               const std::filesystem::path& cell_dir, const Features& features, long long evals = 0);

// The report's sections (Markdown) from the finished cells; figures as chart
// specs under DIR/figures, drawn by `plot` (aware-plot; empty: none) and by
// `gui` (aware-gui, the compare charts; empty: none).
std::string write_report_sections(const Plan& plan, const std::filesystem::path& dir,
                                  const std::string& plot, const std::string& gui);

// A self-contained HTML page of the Markdown this tool writes (headings, tables,
// lists, paragraphs, images inlined as data URIs from `dir`).
std::string markdown_to_html(const std::string& markdown, const std::filesystem::path& dir,
                             const std::string& title);

}  // namespace aware::reproduce
