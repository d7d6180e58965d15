// aware graph build | family | info | export
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/cli_common.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/exporters.h"
#include "core/formats.h"
#include "datasets/families.h"
#include "datasets/load.h"
#include "datasets/zoo.h"

namespace aware::cli {
namespace {

struct BuildArgs {
  std::string model;
  ModelOptions options;
  std::string out;
};

struct FamilyArgs {
  std::string family;
  int count = 32;
  long long seed = 1;
  std::string out_dir;
};

struct InfoArgs {
  std::string graph;
  std::string cluster = "preset:k40x4";
  bool json = false;
};

struct ExportArgs {
  std::string graph;
  std::string format = "dot";
  std::string out;
  std::string placement;
  std::string cluster = "preset:k40x4";
};

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void run_build(const BuildArgs& a) {
  prepare_output_path(a.out, "-o");
  OpGraph graph = build_zoo_model(a.model, a.options);
  write_graph_file(graph, a.out);
  std::printf("wrote %s: %d ops, %d edges\n", a.out.c_str(), graph.num_ops(), graph.num_edges());
}

void run_family(const FamilyArgs& a) {
  if (a.count < 1) throw ConfigError("--count must be at least 1");
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  std::filesystem::create_directories(a.out_dir);
  nlohmann::json split = {{"family", a.family}, {"train", nlohmann::json::array()},
                          {"test", nlohmann::json::array()}};
  for (int i = 0; i < a.count; ++i) {
    const std::uint64_t seed = static_cast<std::uint64_t>(a.seed) + i;
    OpGraph graph = build_family_graph(a.family, seed);
    const std::string file = graph.name() + ".json";
    write_graph_file(graph, (std::filesystem::path(a.out_dir) / file).string());
    split[seed % 4 == 0 ? "test" : "train"].push_back(file);
    std::fprintf(stderr, "\r%s %d/%d", a.family.c_str(), i + 1, a.count);
  }
  std::fprintf(stderr, "\n");
  write_json_file((std::filesystem::path(a.out_dir) / "split.json").string(), split);
  std::printf("wrote %d %s graphs and split.json to %s\n", a.count, a.family.c_str(),
              a.out_dir.c_str());
}

void run_info(const InfoArgs& a) {
  const OpGraph graph = load_graph(a.graph);
  const Cluster cluster = load_cluster(a.cluster);
  const OpCostMatrix costs(graph, cluster);
  const LowerBound bound = lower_bound(graph, cluster, costs);
  const CriticalPath path = compute_critical_path(graph, costs);
  std::map<std::string, int> phases;
  double output_bytes = 0;
  for (const Op& op : graph.ops()) {
    ++phases[phase_name(op.phase)];
    output_bytes += op.total_output_bytes();
  }
  if (a.json) {
    nlohmann::json out = {{"graph", graph.name()},
                          {"ops", graph.num_ops()},
                          {"edges", graph.num_edges()},
                          {"ops_by_phase", phases},
                          {"flops", graph.total_flops()},
                          {"param_bytes", graph.total_param_bytes()},
                          {"output_bytes", output_bytes},
                          {"cluster", cluster.name()},
                          {"critical_path_us", bound.critical_path_us},
                          {"critical_path_ops", path.ops.size()},
                          {"work_bound_us", bound.work_us},
                          {"lower_bound_us", bound.bound_us()}};
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::printf("graph          %s\n", graph.name().c_str());
  std::printf("ops            %d (forward %d, backward %d, update %d)\n", graph.num_ops(),
              phases["forward"], phases["backward"], phases["update"]);
  std::printf("edges          %d\n", graph.num_edges());
  std::printf("FLOPs          %.3f GFLOP\n", graph.total_flops() / 1e9);
  std::printf("parameters     %s\n",
              format_bytes(graph.total_param_bytes(), BytesStyle::kTable).c_str());
  std::printf("activations    %s (sum of all outputs)\n",
              format_bytes(output_bytes, BytesStyle::kTable).c_str());
  std::printf("on cluster     %s (%d devices)\n", cluster.name().c_str(), cluster.num_devices());
  std::printf("critical path  %s over %zu ops\n", format_ms(bound.critical_path_us).c_str(),
              path.ops.size());
  std::printf("work bound     %s\n", format_ms(bound.work_us).c_str());
  std::printf("lower bound    %s\n", format_ms(bound.bound_us()).c_str());
}

void run_export(const ExportArgs& a) {
  if (a.format != "dot" && a.format != "json") {
    throw ConfigError("--format must be dot or json, got '" + a.format + "'");
  }
  const OpGraph graph = load_graph(a.graph);
  std::string text;
  if (a.format == "dot") {
    if (!a.placement.empty()) {
      const Cluster cluster = load_cluster(a.cluster);
      const Placement placement = resolve_placement(a.placement, graph, cluster);
      text = graph_to_dot(graph, &placement);
    } else {
      text = graph_to_dot(graph);
    }
  } else {
    text = graph_to_json(graph).dump(1) + "\n";
  }
  if (a.out.empty()) {
    std::cout << text;
  } else {
    write_text_file_atomic(a.out, text);
    std::printf("wrote %s\n", a.out.c_str());
  }
}

}  // namespace

void add_graph_commands(CLI::App& app) {
  CLI::App* graph = app.add_subcommand("graph", "Build, generate, inspect and export op graphs");
  graph->require_subcommand(1);

  auto build = std::make_shared<BuildArgs>();
  CLI::App* b = graph->add_subcommand("build", "Build a zoo model's training-step graph");
  b->add_option("--model", build->model, "Model: " + join(zoo_model_names()))->required();
  b->add_option("--batch", build->options.batch, "Batch size (default: the model's)")
      ->check(CLI::Range(1, 1000000));
  b->add_option("--seq-len", build->options.seq_len, "Sequence length (recurrent/attention models)");
  b->add_option("--hidden", build->options.hidden, "Hidden size (recurrent/attention models)");
  b->add_option("--layers", build->options.layers, "Layers per stack");
  b->add_option("--vocab", build->options.vocab, "Vocabulary size");
  b->add_option("--image-size", build->options.image_size, "Input height = width (CNNs)");
  b->add_option("-o,--output", build->out, "Output graph JSON")->required();
  b->callback([build] { run_build(*build); });

  auto family = std::make_shared<FamilyArgs>();
  CLI::App* f = graph->add_subcommand("family", "Generate a seeded graph family with a train/test split");
  f->add_option("--family", family->family, "Family: " + join(family_names()))->required();
  f->add_option("--count", family->count, "Number of graphs")->capture_default_str();
  f->add_option("--seed", family->seed, "First seed")->capture_default_str();
  f->add_option("-o,--output", family->out_dir, "Output directory")->required();
  f->callback([family] { run_family(*family); });

  auto info = std::make_shared<InfoArgs>();
  CLI::App* i = graph->add_subcommand("info", "Size, FLOPs, memory, critical path and lower bound");
  i->add_option("graph", info->graph, kGraphSpecHelp)->required();
  i->add_option("--cluster", info->cluster, "Cluster for the lower bound")->capture_default_str();
  i->add_flag("--json", info->json, "Print one JSON object");
  i->callback([info] { run_info(*info); });

  auto exp = std::make_shared<ExportArgs>();
  CLI::App* e = graph->add_subcommand("export", "Export a graph (Graphviz DOT or JSON)");
  e->add_option("graph", exp->graph, kGraphSpecHelp)->required();
  e->add_option("--format", exp->format, "dot or json")->capture_default_str();
  e->add_option("-o,--output", exp->out, "Output file (default: stdout)");
  e->add_option("--placement", exp->placement, "Colour nodes by this placement");
  e->add_option("--cluster", exp->cluster, "Cluster of the placement")->capture_default_str();
  e->callback([exp] { run_export(*exp); });
}

}  // namespace aware::cli
