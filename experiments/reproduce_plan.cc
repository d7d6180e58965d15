// aware reproduce: which cells each table needs at each budget.
#include <algorithm>

#include "core/lists.h"
#include "experiments/reproduce.h"
#include "core/errors.h"

namespace aware::reproduce {
namespace {

namespace fs = std::filesystem;

Budget budget_for(const std::string& name) {
  Budget b;
  b.name = name;
  // The README's compare table: `aware compare --methods all,fused-m-etf,fused-anneal`.
  const std::vector<std::string> placers = {"single", "round-robin", "random",        "expert",
                                            "metis",  "m-topo",      "heft",          "m-etf",
                                            "m-sct",  "random-search", "anneal",      "fused-m-etf",
                                            "fused-anneal"};
  const std::vector<std::string> zoo5 = {"inception_v3", "resnet50", "nasnet", "nmt4", "gnmt"};
  const std::vector<std::string> k40 = {"k40x2", "k40x4", "k40x8"};
  b.agent_methods = {"random-sampling", "random-search", "anneal", "placeto", "hierarchical", "aware"};
  b.transfer_cluster = "dgx-v100";
  if (name == "smoke") {
    // Every table, each on the smallest case that still shows its shape.
    b.evals = 20;
    b.seeds = {1, 2};
    b.compare_seeds = {1};
    b.compare_models = {"resnet50", "nmt2"};
    b.compare_clusters = {"k40x4"};
    b.placers = {"single", "m-topo", "m-etf", "heft", "anneal"};
    b.compare_evals = 50;
    b.fusion_models = {"resnet50"};
    b.fusion_cluster = "k40x4";
    b.fusion_evals = 50;
    b.simgrid_models = {"resnet50", "nmt2"};
    b.simgrid_clusters = {"k40x4"};
    b.agent_models = {"resnet50"};
    b.agent_cluster = "k40x2";
    b.table1_models = {"resnet50"};
    b.table1_clusters = {"k40x2"};
    b.preset_seconds = 3;
    b.families = {"cifar10"};
    b.family_count = 4;
    b.pretrain_per_graph = 10;
    b.ablation_models = {"resnet50"};
    b.ablation_clusters = {"k40x2"};
    b.strategy_models = {"resnet50"};
    b.strategy_clusters = {"k40x4"};
    b.strategy_specs = {"dp:ring", "hybrid:2xm-etf", "pipeline"};
    b.hw_graphs = {"zoo:rnnlm:batch=4,hidden=128,vocab=2000"};
    b.hw_methods = {"m-etf", "heft"};
    b.hw_tag = "quick";
    b.hw_calibrate_repeats = 3;
    b.hw_repeats = 3;
    b.hw_rounds = 1;
    b.hw_random = 2;
    b.mesh_cases = {{"snn:layered:4000", "mesh:6x6"}, {"snn:lattice:4000", "mesh:6x6"}};
    return b;
  }
  if (name == "small" || name == "paper") {
    const bool paper = name == "paper";
    b.evals = paper ? 2000 : 100;
    b.seeds = paper ? std::vector<int>{1, 2, 3} : std::vector<int>{1, 2};
    b.compare_seeds = paper ? std::vector<int>{1, 2, 3} : std::vector<int>{1};
    b.compare_models = zoo5;
    b.compare_clusters = k40;
    b.placers = placers;
    b.compare_evals = b.evals;
    b.fusion_models = zoo5;
    b.fusion_cluster = "k40x4";
    b.fusion_evals = 2000;
    b.simgrid_models = {"inception_v3", "resnet50", "nasnet", "nmt4", "gnmt", "rnnlm", "transformer"};
    b.simgrid_clusters = {"k40x4", "multi-node:2x4"};
    b.agent_models = {"inception_v3", "nmt4", "nasnet"};
    b.agent_cluster = "k40x4";
    b.table1_models = zoo5;
    b.table1_clusters = k40;
    // Faithful Placeto plays about one Inception-V3 episode in 13 s here.
    b.preset_seconds = paper ? 120 : 30;
    b.families = {"cifar10", "ptb"};
    b.family_count = 12;
    b.pretrain_per_graph = paper ? 2000 : 100;
    b.transfer_zoo_model = "nasnet";
    b.ablation_models = {"inception_v3", "nmt4"};
    b.ablation_clusters = {"k40x4"};
    // The README's strategy table (experiments/strategies_table.sh's cases).
    b.strategy_models = {"inception_v3", "resnet50", "nasnet", "nmt4", "gnmt", "rnnlm", "transformer"};
    b.strategy_clusters = {"k40x4", "dgx-v100", "multi-node:2x8"};
    b.strategy_specs = {"dp:ring", "dp:tree", "dp:ps", "hybrid:2xm-etf", "pipeline"};
    // README's measured table (scripts/hw-validate): three scaled models, 14
    // placements each, 3 rounds of 5 steps.
    b.hw_graphs = {"zoo:resnet50:batch=1,image_size=112", "zoo:transformer:batch=2,seq_len=64,hidden=256,layers=2",
                   "zoo:rnnlm:batch=8,hidden=256,vocab=8000"};
    b.hw_methods = {"m-etf", "heft", "m-topo", "m-sct", "metis", "expert"};
    b.hw_tag = "full";
    // Three sizes of the layered pathway up to a million neurons on 64 x 64
    // cores, and the three topologies at 100,000 neurons.
    b.mesh_cases = {{"snn:layered:10000", "mesh:8x8"},          {"snn:layered:100000", "mesh:24x24"},
                    {"snn:lattice:100000", "mesh:24x24"},       {"snn:random:100000", "mesh:24x24"},
                    {"snn:layered:1000000", "mesh:64x64"}};
    return b;
  }
  throw ConfigError("--budget: '" + name + "' unknown (known: smoke, small, paper)");
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string sanitize(std::string s) {
  for (char& c : s)
    if (c == ':' || c == '/' || c == ',' || c == '=' || c == ' ') c = '-';
  return s;
}

class Builder {
 public:
  Builder(Plan& plan) : plan_(plan) {}

  // Adds `c` to `table` (once to the plan, whichever table asks first).
  const Cell& add(const std::string& table, Cell c) {
    auto& keys = plan_.tables[table];
    if (std::find(keys.begin(), keys.end(), c.key) == keys.end()) keys.push_back(c.key);
    const auto it = plan_.index.find(c.key);
    if (it != plan_.index.end()) return plan_.cells[it->second];
    plan_.index[c.key] = plan_.cells.size();
    plan_.cells.push_back(std::move(c));
    return plan_.cells.back();
  }

  std::string file(const std::string& key, const std::string& ext) const {
    return (plan_.cell_arg_dir / (key + ext)).string();
  }

  // The fields every cell has, and its key: KIND__MODEL__CLUSTER__METHOD
  // [__VARIANT]__sSEED__eEVALS, made file-name safe.
  static Cell base(const std::string& kind, const std::string& graph, const std::string& model,
                   const std::string& cluster, const std::string& method, int seed, long long evals,
                   const std::string& variant = "") {
    Cell c;
    c.kind = kind;
    c.graph = graph;
    c.model = model;
    c.cluster = cluster;
    c.method = method;
    c.variant = variant;
    c.seed = seed;
    c.evals = evals;
    c.key = sanitize(kind + "__" + model + "__" + cluster + "__" + method + (variant.empty() ? "" : "__" + variant) +
                     "__s" + std::to_string(seed) + "__e" + std::to_string(evals));
    return c;
  }

  // A placer's run: `aware place`, with the search's best-so-far curve (a
  // placer that reports no progress leaves only its header).
  const Cell& place(const std::string& table, const std::string& graph, const std::string& model,
                    const std::string& cluster, const std::string& method, int seed, long long evals) {
    Cell c = base("place", graph, model, cluster, method, seed, evals);
    c.args = {"place", "--graph", graph, "--cluster", "preset:" + cluster, "--method", method,
              "--budget-evals", std::to_string(evals), "--seed", std::to_string(seed), "--json",
              "-o", file(c.key, ".placement.json"), "--curve", file(c.key, ".curve.csv")};
    return add(table, std::move(c));
  }

  // A learned agent's run: `aware search`, with its learning curve. evals 0:
  // zero-shot (the initial policy's greedy placement, one evaluation).
  const Cell& search(const std::string& table, const std::string& graph, const std::string& model,
                     const std::string& cluster, const std::string& agent, int seed, long long evals,
                     const std::string& variant = "", const std::string& policy_cell = "") {
    Cell c = base("search", graph, model, cluster, agent, seed, evals, variant);
    c.args = {"search", "--graph", graph, "--cluster", "preset:" + cluster, "--agent", agent,
              "--seed", std::to_string(seed), "--json", "-o", file(c.key, ".placement.json")};
    if (evals > 0) {
      for (const std::string& a : {std::string("--budget-evals"), std::to_string(evals), std::string("--curve"),
                                   file(c.key, ".curve.csv")})
        c.args.push_back(a);
    }
    if (variant == "fusion=off" || variant == "position=off") {
      c.args.push_back("--agent-option");
      c.args.push_back(variant);
    }
    if (variant == "zero-shot-balanced") {  // the load-aware greedy decode, not the paper's argmax
      c.args.push_back("--agent-option");
      c.args.push_back("decode=balanced");
    }
    if (!policy_cell.empty()) {
      c.args.push_back("--init");
      c.args.push_back(file(policy_cell, ".pt"));
      c.needs.push_back(policy_cell);
    }
    return add(table, std::move(c));
  }

  // A learned agent's paper preset given `seconds` of wall-clock (the variant
  // paper-tSECONDS): not reproducible bit for bit, as no wall-clock run is.
  const Cell& preset(const std::string& table, const std::string& model, const std::string& cluster,
                     const std::string& agent, int seed, const Budget& b) {
    const std::string variant = preset_variant(b), t = variant.substr(std::string("paper-t").size());
    Cell c = base("search", "zoo:" + model, model, cluster, agent, seed, 0, variant);
    c.args = {"search", "--graph", c.graph, "--cluster", "preset:" + cluster, "--agent", agent, "--preset", "paper",
              "--budget-seconds", t, "--seed", std::to_string(seed), "--json", "-o", file(c.key, ".placement.json"),
              "--curve", file(c.key, ".curve.csv")};
    return add(table, std::move(c));
  }

  // Aware pre-trained over a family's training members (the variant is the
  // family's size, nCOUNT).
  const Cell& pretrain(const std::string& table, const std::string& family, const std::string& cluster,
                       int seed, int count, long long evals) {
    Cell c = base("pretrain", "family:" + family, family, cluster, "aware", seed, evals, "n" + std::to_string(count));
    c.args = {"pretrain", "--agent", "aware", "--family", family, "--count", std::to_string(count),
              "--cluster", "preset:" + cluster, "--seed", std::to_string(seed), "--budget-evals",
              std::to_string(evals), "--save-policy", file(c.key, ".pt"), "--curve",
              file(c.key, ".curve.csv"), "--json"};
    return add(table, std::move(c));
  }

  // The one-device step, for reference.
  const Cell& single(const std::string& table, const std::string& graph, const std::string& model,
                     const std::string& cluster) {
    Cell c = base("simulate", graph, model, cluster, "single", 1, 0);
    c.args = {"simulate", "--graph", graph, "--cluster", "preset:" + cluster, "--placement", "single", "--json"};
    return add(table, std::move(c));
  }

  // A placer's placement scored again by the SimGrid evaluator.
  const Cell& simgrid(const std::string& table, const Cell& placed) {
    Cell c = base("simgrid", placed.graph, placed.model, placed.cluster, placed.method, placed.seed, placed.evals);
    c.args = {"simulate", "--graph", placed.graph, "--cluster", "preset:" + placed.cluster, "--placement",
              file(placed.key, ".placement.json"), "--evaluator", "simgrid", "--json"};
    c.needs = {placed.key};
    return add(table, std::move(c));
  }

  // A parallel strategy's step (`aware simulate --strategy`): the graph
  // rewritten for the cluster and placed by the strategy, per global batch.
  const Cell& strategy(const std::string& table, const std::string& model, const std::string& cluster,
                       const std::string& spec) {
    Cell c = base("strategy", "zoo:" + model, model, cluster, spec, 1, 0);
    c.args = {"simulate", "--graph", "zoo:" + model, "--cluster", "preset:" + cluster, "--strategy", spec,
              "--seed", "1", "--json"};
    return add(table, std::move(c));
  }

  // The hardware table's three cells: calibrate the cpu executor on two cores
  // (and profile the graphs), measure every placement and predict it with each
  // simulator, then predict the same measurements again with the calibrated
  // two-at-once slowdowns and copies on the consumer's core (nothing runs).
  // The first two measure, so they run alone. Returns the last.
  const Cell& hardware(const std::string& table, const Budget& b) {
    Cell cal = base("calibrate", "", "cpu", "cpu2", "calibrate", 1, 0, b.hw_tag);
    cal.args = {"calibrate", "--backend", "cpu", "--devices", "2", "--option",
                "repeats=" + std::to_string(b.hw_calibrate_repeats), "-o", file(cal.key, ".cluster.json"),
                "--costs-out", file(cal.key, ".costs.json"), "--json"};
    for (const std::string& g : b.hw_graphs) cal.args.insert(cal.args.end(), {"--profile-graph", g});
    cal.exclusive = true;
    const std::string cal_key = add(table, std::move(cal)).key;
    const auto validate = [&](Cell& c) {
      c.args = {"validate", "--backend", "cpu", "--cluster", file(cal_key, ".cluster.json"), "--costs",
                file(cal_key, ".costs.json"), "--random", std::to_string(b.hw_random), "--seed", "1",
                "--methods", join(b.hw_methods, ","), "--json"};
      for (const std::string& g : b.hw_graphs) c.args.insert(c.args.end(), {"--graph", g});
      c.needs.push_back(cal_key);
    };
    Cell measured = base("validate", "", "cpu", "cpu2", "measured", 1, 0, b.hw_tag);
    validate(measured);
    measured.args.insert(measured.args.end(), {"--option", "repeats=" + std::to_string(b.hw_repeats), "--rounds",
                                               std::to_string(b.hw_rounds)});
    measured.exclusive = true;
    const std::string measured_key = add(table, std::move(measured)).key;
    Cell consumer = base("validate", "", "cpu", "cpu2", "consumer", 1, 0, b.hw_tag);
    validate(consumer);
    consumer.args.insert(consumer.args.end(),
                         {"--measured", file(measured_key, ".json"), "--simulators", "analytic", "--slowdowns-from",
                          file(cal_key, ".json"), "--sim-option", "analytic:copies=consumer"});
    consumer.needs.push_back(measured_key);
    return add(table, std::move(consumer));
  }

  // `aware mesh map` for one network on one mesh: every mapping.
  const Cell& mesh(const std::string& table, const std::string& network, const std::string& mesh_spec) {
    Cell c = base("mesh", network, network, mesh_spec, "all", 1, 0);
    c.args = {"mesh", "map", "--network", network, "--mesh", mesh_spec, "--seed", "1", "--json"};
    return add(table, std::move(c));
  }

  // `aware fuse report` for one model.
  const Cell& fuse(const std::string& table, const std::string& model, const std::string& cluster, int seed,
                   long long evals) {
    Cell c = base("fuse", "zoo:" + model, model, cluster, "anneal", seed, evals);
    c.args = {"fuse", "report", "--models", model, "--cluster", cluster, "--budget-evals",
              std::to_string(evals), "--seed", std::to_string(seed), "--json"};
    return add(table, std::move(c));
  }

 private:
  Plan& plan_;
};

}  // namespace

std::string preset_variant(const Budget& b) {
  std::string t = std::to_string(b.preset_seconds);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return "paper-t" + t;
}

const std::vector<std::string>& nonlearned_placers() {
  static const std::vector<std::string> m = {"m-etf", "m-sct", "heft", "metis", "anneal", "random-search"};
  return m;
}

const std::vector<std::string>& strategy_placers() {
  static const std::vector<std::string> m = {"single", "m-topo", "m-etf", "m-sct", "heft"};
  return m;
}

const Cell& Plan::cell(const std::string& key) const {
  const auto it = index.find(key);
  if (it == index.end()) throw Error("reproduce: no cell " + key);
  return cells[it->second];
}

std::vector<const Cell*> Plan::cells_of(const std::string& table) const {
  std::vector<const Cell*> out;
  const auto it = tables.find(table);
  if (it == tables.end()) return out;
  for (const std::string& key : it->second) out.push_back(&cell(key));
  return out;
}

const std::vector<std::string>& table_names() {
  static const std::vector<std::string> names = {"compare",  "fusion",   "simgrid",  "agents",     "table1",
                                                 "presets",  "transfer", "ablation", "strategies", "hardware",
                                                 "mesh"};
  return names;
}

Plan make_plan(const std::string& budget, const std::string& only, const std::string& seeds,
               const fs::path& cell_dir, const Features& features, long long evals) {
  Plan plan;
  plan.budget = budget_for(budget);
  plan.cell_dir = cell_dir;
  Budget& b = plan.budget;
  if (evals < 0) throw ConfigError("--evals: must be >= 1 (or 0: the budget's)");
  if (evals > 0) b.evals = b.compare_evals = evals;
  if (!seeds.empty()) {
    b.seeds = parse_int_list(seeds, "--seeds", 1, 1 << 30, "a seed >= 1 (e.g. 1,2,3)");
    b.compare_seeds = b.seeds;
  }
  std::set<std::string> wanted;
  std::string known = "all";
  for (const std::string& t : table_names()) known += ", " + t;
  for (const std::string& t : split_list(only)) {
    if (t == "all") {
      wanted.insert(table_names().begin(), table_names().end());
      continue;
    }
    if (std::find(table_names().begin(), table_names().end(), t) == table_names().end())
      throw ConfigError("--only: table '" + t + "' unknown (known: " + known + ")");
    wanted.insert(t);
  }
  if (wanted.empty()) throw ConfigError("--only: give at least one table (known: " + known + ")");
  auto skip = [&](const std::string& table, bool have, const std::string& why) {
    if (!wanted.count(table) || have) return false;
    plan.left_out.push_back(table + ": " + why);
    return true;
  };
  const std::string no_rl = "this build has no learned agents (LibTorch was not found)";

  Builder add(plan);
  if (wanted.count("compare"))
    for (const std::string& cluster : b.compare_clusters)
      for (const std::string& model : b.compare_models)
        for (const std::string& method : b.placers)
          for (int seed : b.compare_seeds)
            add.place("compare", "zoo:" + model, model, cluster, method, seed, b.compare_evals);

  if (wanted.count("fusion") && !skip("fusion", features.fusion, "this build has no `aware fuse`"))
    for (const std::string& model : b.fusion_models) add.fuse("fusion", model, b.fusion_cluster, 1, b.fusion_evals);

  if (wanted.count("simgrid") && !skip("simgrid", features.simgrid, "this build has no SimGrid evaluator"))
    for (const std::string& cluster : b.simgrid_clusters)
      for (const std::string& model : b.simgrid_models)
        add.simgrid("simgrid", add.place("simgrid", "zoo:" + model, model, cluster, "m-etf", 1, b.evals));

  auto learned = [&](const std::string& table, const std::string& graph, const std::string& model,
                     const std::string& cluster, const std::string& method, int seed) {
    if (method == "aware" || method == "placeto" || method == "hierarchical")
      add.search(table, graph, model, cluster, method, seed, b.evals);
    else
      add.place(table, graph, model, cluster, method, seed, b.evals);
  };
  if (wanted.count("agents") && !skip("agents", features.rl, no_rl))
    for (const std::string& model : b.agent_models)
      for (const std::string& method : b.agent_methods)
        for (int seed : b.seeds) learned("agents", "zoo:" + model, model, b.agent_cluster, method, seed);

  if (wanted.count("table1") && !skip("table1", features.rl, no_rl))
    for (const std::string& cluster : b.table1_clusters)
      for (const std::string& model : b.table1_models) {
        for (const char* method : {"aware", "placeto", "hierarchical"})
          for (int seed : b.seeds) learned("table1", "zoo:" + model, model, cluster, method, seed);
        for (const std::string& method : nonlearned_placers())
          for (int seed : b.seeds) learned("table1", "zoo:" + model, model, cluster, method, seed);
      }

  if (wanted.count("presets") && !skip("presets", features.rl, no_rl))
    for (const std::string& cluster : b.table1_clusters)
      for (const std::string& model : b.table1_models)
        for (const char* agent : {"aware", "placeto", "hierarchical"})
          for (int seed : b.seeds) add.preset("presets", model, cluster, agent, seed, b);

  if (wanted.count("transfer") && !skip("transfer", features.rl, no_rl)) {
    const std::string& cluster = b.transfer_cluster;
    const int train = b.family_count - b.family_count / 4;
    for (const std::string& family : b.families)
      for (int seed : b.seeds) {
        const Cell& policy = add.pretrain("transfer", family, cluster, seed, b.family_count,
                                          b.pretrain_per_graph * train);
        const std::string policy_key = policy.key;
        for (int member = 4; member <= b.family_count; member += 4) {
          const std::string graph = "family:" + family + ":" + std::to_string(member);
          const std::string model = family + "-" + std::to_string(member);
          add.single("transfer", graph, model, cluster);
          add.search("transfer", graph, model, cluster, "aware", seed, 0, "zero-shot", policy_key);
          add.search("transfer", graph, model, cluster, "aware", seed, 0, "zero-shot-balanced", policy_key);
          add.search("transfer", graph, model, cluster, "aware", seed, b.evals, "pretrained", policy_key);
          add.search("transfer", graph, model, cluster, "aware", seed, b.evals);
          add.search("transfer", graph, model, cluster, "placeto", seed, b.evals);
          for (const std::string& method : nonlearned_placers())
            add.place("transfer", graph, model, cluster, method, seed, b.evals);
        }
        if (family == "cifar10" && !b.transfer_zoo_model.empty()) {
          const std::string& zoo = b.transfer_zoo_model;
          add.search("transfer", "zoo:" + zoo, zoo, cluster, "aware", seed, b.evals);
          add.search("transfer", "zoo:" + zoo, zoo, cluster, "aware", seed, b.evals, "pretrained", policy_key);
        }
      }
  }

  if (wanted.count("ablation") && !skip("ablation", features.rl, no_rl))
    for (const std::string& cluster : b.ablation_clusters)
      for (const std::string& model : b.ablation_models)
        for (const char* variant : {"", "fusion=off", "position=off"})
          for (int seed : b.seeds)
            add.search("ablation", "zoo:" + model, model, cluster, "aware", seed, b.evals, variant);
  if (wanted.count("strategies"))
    for (const std::string& cluster : b.strategy_clusters)
      for (const std::string& model : b.strategy_models) {
        for (const std::string& method : strategy_placers())
          add.place("strategies", "zoo:" + model, model, cluster, method, 1, b.evals);
        for (const std::string& spec : b.strategy_specs) add.strategy("strategies", model, cluster, spec);
      }
  if (wanted.count("hardware") &&
      !skip("hardware", features.hw, "this build has no cpu executor (hw/ needs Linux thread pinning)"))
    add.hardware("hardware", b);
  if (wanted.count("mesh"))
    for (const auto& [network, mesh] : b.mesh_cases) add.mesh("mesh", network, mesh);
  return plan;
}

}  // namespace aware::reproduce
