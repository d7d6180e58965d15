// aware graph build | family | info | export
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <sstream>
#include <filesystem>
#include <iostream>
#include <map>
#include <unistd.h>

#include "cli/cli_common.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/exporters.h"
#include "core/formats.h"
#include "datasets/families.h"
#include "datasets/load.h"
#include "datasets/zoo.h"
#include "datasets/model_import.h"
#include "datasets/pytorch_eg.h"
#ifdef AWARE_HAVE_CHAKRA
#include "datasets/chakra.h"
#endif
#ifdef AWARE_HAVE_ONNX
#include "datasets/onnx_import.h"
#endif
#ifdef AWARE_HAVE_TORCHSCRIPT
#include "datasets/torchscript_import.h"
#endif

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

struct ImportArgs {
  std::string model;
  double batch = 0;
  std::vector<std::string> input_shapes;
  std::string optimizer = "momentum";
  std::string out;
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
  prepare_required_output_path(a.out, "-o");
  // As zoo:NAME:key=value refuses a key the model does not read, so do its flags:
  // --seq-len on resnet50 would otherwise be ignored without a word.
  const std::vector<std::string> used = zoo_model_option_keys(a.model);
  ModelOptions options = a.options;
  for (const std::string& key : model_option_keys()) {
    if (*model_option_field(options, key) == 0) continue;
    if (std::find(used.begin(), used.end(), key) != used.end()) continue;
    auto flag = [](std::string name) {
      std::replace(name.begin(), name.end(), '_', '-');
      return "--" + name;
    };
    std::string flags;
    for (const std::string& u : used) flags += (flags.empty() ? "" : ", ") + flag(u);
    throw ConfigError(flag(key) + ": zoo model '" + a.model + "' does not use it (it uses: " +
                      flags + ")");
  }
  OpGraph graph = build_zoo_model(a.model, a.options);
  write_graph_file(graph, a.out);
  std::printf("wrote %s: %d ops, %d edges\n", a.out.c_str(), graph.num_ops(), graph.num_edges());
}

// Writes the family into `staging` (inside the output folder, so that the final
// renames stay on one file system); returns the names of the files written there.
std::vector<std::string> stage_family(const FamilyArgs& a, const std::filesystem::path& staging) {
  nlohmann::json split = {{"family", a.family}, {"train", nlohmann::json::array()},
                          {"test", nlohmann::json::array()}};
  std::vector<std::string> files;
  try {
    for (int i = 0; i < a.count; ++i) {
      const std::uint64_t seed = static_cast<std::uint64_t>(a.seed) + i;
      OpGraph graph = build_family_graph(a.family, seed);
      const std::string file = graph.name() + ".json";
      write_graph_file(graph, (staging / file).string());
      files.push_back(file);
      split[seed % 4 == 0 ? "test" : "train"].push_back(file);
      std::fprintf(stderr, "\r%s %d/%d", a.family.c_str(), i + 1, a.count);
    }
  } catch (...) {
    if (!files.empty()) std::fprintf(stderr, "\n");  // the error on a line of its own
    throw;
  }
  std::fprintf(stderr, "\n");
  write_json_file((staging / "split.json").string(), split);
  files.push_back("split.json");
  return files;
}

void run_family(const FamilyArgs& a) {
  namespace fs = std::filesystem;
  if (a.count < 1) throw ConfigError("--count must be at least 1");
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  if (a.out_dir.empty()) throw ConfigError("-o is empty");
  const bool created = create_output_folder(a.out_dir, "-o", a.out_dir);
  // Nothing half-written: the graphs and split.json go to a staging folder and are
  // moved into place only once all of them are written; a failure (a seed that does
  // not build, a full disk) removes the staging folder and a folder this run made.
  const fs::path out(a.out_dir);
  const fs::path staging = out / (".aware-family.tmp." + std::to_string(::getpid()));
  std::error_code ec;
  try {
    fs::create_directory(staging, ec);
    if (ec) throw ConfigError("-o " + a.out_dir + ": cannot write there (" + ec.message() + ")");
    const std::vector<std::string> files = stage_family(a, staging);
    for (const std::string& file : files) {
      if (fs::is_directory(out / file, ec))
        throw ConfigError("-o " + a.out_dir + ": '" + file + "' is a folder, not a file");
    }
    for (const std::string& file : files) {
      fs::rename(staging / file, out / file, ec);
      if (ec) throw ConfigError("-o " + a.out_dir + ": cannot move '" + file + "' into place (" + ec.message() + ")");
    }
    fs::remove(staging, ec);
  } catch (...) {
    fs::remove_all(staging, ec);
    if (created) fs::remove_all(out, ec);
    throw;
  }
  std::printf("wrote %d %s graphs and split.json to %s\n", a.count, a.family.c_str(),
              a.out_dir.c_str());
}

void run_info(const InfoArgs& a) {
  const OpGraph graph = load_graph(a.graph);
  const Cluster cluster = load_cluster(a.cluster);
  const OpCostMatrix costs(graph, cluster);
  const LowerBound bound = lower_bound(graph, cluster, costs);
  const CriticalPath path = compute_critical_path(graph, costs);
  std::map<std::string, int> phases, forward_types;
  double output_bytes = 0, weight_bytes = 0, forward_flops = 0;
  for (const Op& op : graph.ops()) {
    ++phases[phase_name(op.phase)];
    output_bytes += op.total_output_bytes();
    if (op.phase == Phase::kForward) {
      // The weights are what forward ops hold (the builders' VariableV2s; any op of
      // a random or hand-written graph); update ops hold the optimizer's slots.
      weight_bytes += op.param_bytes;
      forward_flops += op.flops;
      if (op.type != "VariableV2" && op.type != "Placeholder") ++forward_types[op.type];
    }
  }
  const double params = weight_bytes / 4;  // fp32 weights
  const bool has_batch = graph.batch() > 0;
  if (a.json) {
    nlohmann::json out = {{"graph", graph.name()},
                          {"ops", graph.num_ops()},
                          {"edges", graph.num_edges()},
                          {"ops_by_phase", phases},
                          {"flops", graph.total_flops()},
                          {"param_bytes", graph.total_param_bytes()},
                          {"trainable_params", params},
                          {"forward_flops", forward_flops},
                          {"forward_op_types", forward_types},
                          {"output_bytes", output_bytes},
                          {"cluster", cluster.name()},
                          {"critical_path_us", bound.critical_path_us},
                          {"critical_path_ops", path.ops.size()},
                          {"work_bound_us", bound.work_us},
                          {"lower_bound_us", bound.bound_us()}};
    // Without a batch there are no per-sample figures (not "per sample of batch 0").
    if (has_batch) {
      out["batch"] = graph.batch();
      out["forward_flops_per_sample"] = forward_flops / graph.batch();
    }
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::printf("graph          %s\n", graph.name().c_str());
  std::printf("ops            %d (forward %d, backward %d, update %d)\n", graph.num_ops(),
              phases["forward"], phases["backward"], phases["update"]);
  std::printf("edges          %d\n", graph.num_edges());
  std::printf("FLOPs          %s GFLOP\n", format_fixed(graph.total_flops() / 1e9, 3).c_str());
  std::printf("parameters     %s trainable (%s of weights, %s with the optimizer's state)\n",
              format_fixed(params, 0).c_str(), format_bytes(weight_bytes, BytesStyle::kTable).c_str(),
              format_bytes(graph.total_param_bytes(), BytesStyle::kTable).c_str());
  if (has_batch) {
    std::printf("forward       %s GFLOP per sample (batch %s)\n",
                format_fixed(forward_flops / graph.batch() / 1e9, 3).c_str(),
                format_fixed(graph.batch(), 0).c_str());
  } else {
    std::printf("forward       %s GFLOP (no batch recorded)\n",
                format_fixed(forward_flops / 1e9, 3).c_str());
  }
  std::vector<std::pair<int, std::string>> types;
  for (const auto& [type, count] : forward_types) types.push_back({-count, type});
  std::sort(types.begin(), types.end());
  std::string histogram;
  for (const auto& [count, type] : types) histogram += (histogram.empty() ? "" : ", ") + type + " " + std::to_string(-count);
  std::printf("forward ops    %s\n", histogram.c_str());
  std::printf("activations    %s (sum of all outputs)\n",
              format_bytes(output_bytes, BytesStyle::kTable).c_str());
  std::printf("on cluster     %s (%d devices)\n", cluster.name().c_str(), cluster.num_devices());
  std::printf("critical path  %s over %zu ops\n", format_ms(bound.critical_path_us).c_str(),
              path.ops.size());
  std::printf("work bound     %s\n", format_ms(bound.work_us).c_str());
  std::printf("lower bound    %s\n", format_ms(bound.bound_us()).c_str());
}

// TorchScript by extension (.pt, .pth, .ts, .torchscript), ONNX otherwise.
bool is_torchscript_path(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".pt" || ext == ".pth" || ext == ".ts" || ext == ".torchscript";
}

OpGraph import_model(const std::string& path, const ModelImportOptions& options, ModelImportReport& report) {
  if (is_torchscript_path(path)) {
#ifdef AWARE_HAVE_TORCHSCRIPT
    return import_torchscript(path, options, &report);
#else
    throw ConfigError(path + ": this build has no TorchScript reader (LibTorch was not found: install libtorch-dev and rebuild)");
#endif
  }
#ifdef AWARE_HAVE_ONNX
  return import_onnx(path, options, &report);
#else
  throw ConfigError(path + ": this build has no ONNX reader (install libonnx-dev and rebuild)");
#endif
}

// A folder or .et file (Chakra traces), or a .json file (PyTorch's execution graph).
bool is_trace_path(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return true;
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".et" || ext == ".json";
}

// Imports a trace: Chakra (one rank or a folder of ranks) or PyTorch's execution graph.
void run_trace_import(const ImportArgs& a) {
  if (a.batch > 0 || !a.input_shapes.empty())
    throw ConfigError(a.model + ": --batch and --input-shape are for models; a trace records its own sizes");
  nlohmann::json report;
  OpGraph graph;
  std::string what, detail;
  const std::string ext = std::filesystem::path(a.model).extension().string();
  if (ext == ".json") {
    ExecutionGraphImport eg = read_pytorch_execution_graph(a.model);
    graph = std::move(eg.graph);
    report = {{"format", "pytorch-execution-graph"}, {"schema", eg.schema}, {"source_nodes", eg.nodes},
              {"scopes", eg.wrappers}, {"flops_from_shapes", eg.estimated}};
    what = "PyTorch execution graph (schema " + eg.schema + "), " + std::to_string(eg.nodes) + " nodes, " +
           std::to_string(eg.wrappers) + " scopes descended into";
    detail = "no durations in this schema: priced by the cost model; FLOPs from shapes for " +
             std::to_string(eg.estimated) + " ops";
  } else {
#ifdef AWARE_HAVE_CHAKRA
    ChakraImport chakra = read_chakra_traces(a.model);
    graph = std::move(chakra.graph);
    report = {{"format", "chakra"},         {"version", chakra.version}, {"ranks", chakra.ranks},
              {"source_nodes", chakra.nodes}, {"comm_pairs", chakra.comm_pairs}, {"files", chakra.files}};
    what = std::to_string(chakra.ranks) + " Chakra rank" + (chakra.ranks == 1 ? "" : "s") + " (version " +
           chakra.version + "), " + std::to_string(chakra.nodes) + " nodes, " + std::to_string(chakra.comm_pairs) +
           " send/receive pairs joined";
    detail = "durations as measured costs";
#else
    throw ConfigError(a.model + ": this build has no Chakra reader (install protobuf-compiler and libprotobuf-dev, then rebuild)");
#endif
  }
  write_graph_file(graph, a.out);
  if (a.json) {
    report["graph"] = graph.name();
    report["ops"] = graph.num_ops();
    report["edges"] = graph.num_edges();
    report["written"] = a.out;
    std::cout << report.dump(1) << "\n";
    return;
  }
  std::printf("imported       %s: %s\n", a.model.c_str(), what.c_str());
  std::printf("graph          %d ops, %d edges (%s)\n", graph.num_ops(), graph.num_edges(), detail.c_str());
  std::printf("wrote          %s (aware graph info %s)\n", a.out.c_str(), a.out.c_str());
}

void run_import(const ImportArgs& a) {
  check_distinct_files({{"-o", a.out}}, {{"model", a.model}});
  prepare_required_output_path(a.out, "-o");
  if (is_trace_path(a.model)) {
    run_trace_import(a);
    return;
  }
  const ModelImportOptions options = model_import_options(a.batch, a.optimizer, a.input_shapes);
  ModelImportReport report;
  const OpGraph graph = import_model(a.model, options, report);
  if (!report.uncosted.empty()) {
    std::string list;
    for (const auto& [type, count] : report.uncosted) list += (list.empty() ? "" : ", ") + type + " x" + std::to_string(count);
    std::fprintf(stderr, "warning: %s: %zu op type%s without a cost rule, costed by the bytes they move: %s\n",
                 a.model.c_str(), report.uncosted.size(), report.uncosted.size() == 1 ? "" : "s", list.c_str());
  }
  write_graph_file(graph, a.out);
  if (a.json) {
    std::cout << nlohmann::json{{"graph", graph.name()},
                                {"ops", graph.num_ops()},
                                {"format", is_torchscript_path(a.model) ? "torchscript" : "onnx"},
                                {"source_nodes", report.nodes},
                                {"static_nodes", report.static_nodes},
                                {"trainable_params", report.params},
                                {"data_inputs", report.data_inputs},
                                {"uncosted", report.uncosted},
                                {"written", a.out}}
                     .dump(1)
              << "\n";
    return;
  }
  std::string inputs;
  for (const auto& d : report.data_inputs) inputs += (inputs.empty() ? "" : ", ") + d;
  std::printf("imported       %s: %d %s nodes (%d shape, constant or bookkeeping), inputs %s\n", a.model.c_str(),
              report.nodes, is_torchscript_path(a.model) ? "TorchScript" : "ONNX", report.static_nodes, inputs.c_str());
  std::printf("training step  %d ops, %.0f trainable parameters\n", graph.num_ops(), report.params);
  std::printf("wrote          %s (aware graph info %s)\n", a.out.c_str(), a.out.c_str());
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
      ->check(whole_range(1, 1000000));
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
  i->add_option("graph", info->graph, graph_spec_help())->required();
  i->add_option("--cluster", info->cluster, "Cluster for the lower bound")->capture_default_str();
  i->add_flag("--json", info->json, "Print one JSON object");
  i->callback([info] { run_info(*info); });

  auto imp = std::make_shared<ImportArgs>();
  CLI::App* m = graph->add_subcommand(
      "import", "Import an ONNX or TorchScript model, Chakra execution traces or a PyTorch execution graph as a "
                "training-step graph");
  m->add_option("model", imp->model,
                "MODEL.onnx, a TorchScript MODEL.pt (.pth, .ts), a Chakra RANK.et or a folder of them, or PyTorch's "
                "execution-graph FILE.json")
      ->required();
  m->add_option("--batch", imp->batch, "Batch size: the data inputs' first dimension")->check(whole_range(1, 10000000));
  m->add_option("--input-shape", imp->input_shapes, "NAME=AxBx... for a data input (repeatable)");
  m->add_option("--optimizer", imp->optimizer, "sgd, momentum, rmsprop or adam")->capture_default_str();
  m->add_option("-o,--output", imp->out, "Output graph JSON")->required();
  m->add_flag("--json", imp->json, "Print one JSON object");
  m->callback([imp] { run_import(*imp); });

  auto exp = std::make_shared<ExportArgs>();
  CLI::App* e = graph->add_subcommand("export", "Export a graph (Graphviz DOT or JSON)");
  e->add_option("graph", exp->graph, graph_spec_help())->required();
  e->add_option("--format", exp->format, "dot or json")->capture_default_str();
  e->add_option("-o,--output", exp->out, "Output file (default: stdout)");
  e->add_option("--placement", exp->placement, "Colour nodes by this placement");
  e->add_option("--cluster", exp->cluster, "Cluster of the placement")->capture_default_str();
  e->callback([exp] { run_export(*exp); });
}

}  // namespace aware::cli
