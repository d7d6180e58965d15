// aware mesh: spiking networks mapped onto a neuromorphic mesh (the
// graph-to-core family): the simple mappings, METIS, Hilbert and Hilbert +
// force-directed, by hop-weighted traffic, the busiest link and, on meshes
// small enough for the cluster form, the simulated time of one biological step.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "agents/baselines/mesh_mapping.h"
#include "cli/cli_common.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/formats.h"
#include "core/units.h"
#include "datasets/snn.h"

namespace aware::cli {
namespace {

struct MeshArgs {
  std::vector<std::string> networks, meshes;
  std::string methods = "sequential,random,metis,hilbert,force-directed";
  std::uint64_t seed = 1;
  bool simulate = true;
  std::string out;
  std::string format;
  bool json = false;
};

const std::vector<std::string>& mesh_methods() {
  static const std::vector<std::string> m = {"sequential", "random", "metis", "hilbert", "force-directed"};
  return m;
}

nlohmann::json run_case(const std::string& network, const std::string& mesh_text, const MeshArgs& a,
                        const std::vector<std::string>& methods) {
  const SnnSpec snn = parse_snn_spec(network);
  const MeshSpec mesh = parse_mesh_spec(mesh_text);
  const auto t0 = std::chrono::steady_clock::now();
  const MeshTraffic traffic = build_snn_traffic(snn);
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double neurons = 0, total = 0;
  for (double n : traffic.group_neurons) neurons += n;
  for (const auto& f : traffic.flows) total += f.Bps;
  nlohmann::json c = {{"network", network},           {"mesh", mesh.name()},     {"neurons", neurons},
                      {"groups", traffic.groups()},   {"flows", traffic.flows.size()},
                      {"traffic_Bps", total},         {"build_s", build_s},      {"results", nlohmann::json::array()}};
  // The step simulation needs the cluster form (every route kept): small meshes only.
  std::unique_ptr<OpGraph> graph;
  std::unique_ptr<Cluster> cluster;
  std::unique_ptr<Evaluator> evaluator;
  if (a.simulate && mesh.cores() <= kMeshClusterMaxCores) {
    graph = std::make_unique<OpGraph>(snn_op_graph(snn, traffic));
    cluster = std::make_unique<Cluster>(make_mesh_cluster(mesh));
    evaluator = EvaluatorRegistry::instance().create("analytic");
  } else if (a.simulate) {
    c["step_note"] =
        "not simulated: " + mesh.name() + " has " + std::to_string(mesh.cores()) +
        " cores, above the cluster form's " + std::to_string(kMeshClusterMaxCores) +
        " (128x128) that the simulated step needs; the mapping columns take meshes up to 1024x1024";
  } else {
    c["step_note"] = "not simulated (--no-simulate)";
  }
  if (c.contains("step_note"))
    std::fprintf(stderr, "mesh: step of %s on %s %s\n", network.c_str(), mesh.name().c_str(),
                 c["step_note"].get<std::string>().c_str());
  std::fprintf(stderr, "mesh: %s on %s: %d groups, %zu flows\n", network.c_str(), mesh.name().c_str(),
               traffic.groups(), traffic.flows.size());
  double best = -1;
  for (const std::string& method : methods) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<int> core_of;
    nlohmann::json r = {{"method", method}};
    if (method == "sequential") core_of = baselines::map_sequential(mesh, traffic);
    else if (method == "random") core_of = baselines::map_random(mesh, traffic, a.seed);
    else if (method == "metis") core_of = baselines::map_metis(mesh, traffic, a.seed);
    else if (method == "hilbert") core_of = baselines::map_hilbert(mesh, traffic);
    else {
      core_of = baselines::map_hilbert(mesh, traffic);
      const baselines::ForceDirectedStats st = baselines::refine_force_directed(mesh, traffic, core_of);
      r["passes"] = st.passes;
      r["moves"] = st.moves;
      r["swaps"] = st.swaps;
      r["cost_after_pass"] = st.cost_after_pass;
    }
    const double place_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const MeshCost cost = mesh_cost(mesh, traffic, core_of);  // checks capacity too
    r["place_s"] = place_s;
    r["traffic_hops"] = cost.traffic_hops;
    r["max_link_Bps"] = cost.max_link_Bps;
    r["max_link_utilisation"] = cost.max_link_utilisation;
    r["mean_link_Bps"] = cost.mean_link_Bps;
    r["cores_used"] = cost.cores_used;
    r["max_core_neurons"] = cost.max_core_neurons;
    if (evaluator) {
      std::vector<int> device(static_cast<size_t>(graph->num_ops()));
      for (int op = 0; op < graph->num_ops(); ++op)
        device[static_cast<size_t>(op)] = core_of[static_cast<size_t>(op % traffic.groups())];
      const StepResult step = evaluator->evaluate(*graph, *cluster, Placement(device));
      r["step_us"] = step.step_time_us;
    }
    if (best < 0 || cost.traffic_hops < best) {
      best = cost.traffic_hops;
      c["winner"] = method;
    }
    std::fprintf(stderr, "mesh:   %-15s traffic x hops %12.4g B/s, busiest link %8s MB/s, %.2f s\n",
                 method.c_str(), cost.traffic_hops,
                 format_fixed(cost.max_link_Bps / 1e6, 1).c_str(), place_s);
    c["results"].push_back(r);
  }
  return c;
}

std::string markdown(const nlohmann::json& doc) {
  std::string text =
      "| network | mesh | groups | method | traffic x hops (MB/s x hops) | busiest link (MB/s) | its utilisation | "
      "mean link (MB/s) | cores used | step (µs) | place (s) |\n|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";
  char buffer[512];
  for (const auto& c : doc["cases"])
    for (const auto& r : c["results"]) {
      const bool win = c.value("winner", "") == r["method"].get<std::string>();
      std::snprintf(buffer, sizeof buffer, "| %s | %s | %d | %s | %s%.4g%s | %.4g | %.2f%% | %.3g | %d | %s | %.2f |\n",
                    c["network"].get<std::string>().c_str(), c["mesh"].get<std::string>().c_str(),
                    c["groups"].get<int>(), r["method"].get<std::string>().c_str(), win ? "**" : "",
                    r["traffic_hops"].get<double>() / 1e6, win ? "**" : "", r["max_link_Bps"].get<double>() / 1e6,
                    100 * r["max_link_utilisation"].get<double>(), r["mean_link_Bps"].get<double>() / 1e6,
                    r["cores_used"].get<int>(),
                    r.contains("step_us") ? (std::to_string(static_cast<long long>(std::llround(r["step_us"].get<double>())))).c_str() : "-",
                    r["place_s"].get<double>());
      text += buffer;
    }
  // A "-" in the step column says why.
  for (const auto& c : doc["cases"])
    if (c.contains("step_note"))
      text += "\nstep (µs) of " + c["network"].get<std::string>() + " on " +
              c["mesh"].get<std::string>() + ": " + c["step_note"].get<std::string>() + "\n";
  return text;
}

// One row per case and method, raw units; a spec may hold commas, so text is quoted.
std::string csv(const nlohmann::json& doc) {
  const auto quoted = [](const std::string& field) {
    std::string out = "\"";
    for (char ch : field) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
  };
  const auto number = [](const nlohmann::json& v) {
    return v.is_number() ? v.dump() : std::string();
  };  // round-trips
  std::string text =
      "network,mesh,groups,method,traffic_hops_Bps,max_link_Bps,max_link_utilisation,mean_link_Bps,"
      "cores_used,"
      "step_us,place_s,step_note\n";
  for (const auto& c : doc["cases"])
    for (const auto& r : c["results"]) {
      text += quoted(c["network"].get<std::string>()) + "," + quoted(c["mesh"].get<std::string>()) +
              "," + std::to_string(c["groups"].get<int>()) + "," +
              quoted(r["method"].get<std::string>()) + "," + number(r["traffic_hops"]) + "," +
              number(r["max_link_Bps"]) + "," + number(r["max_link_utilisation"]) + "," +
              number(r["mean_link_Bps"]) + "," + std::to_string(r["cores_used"].get<int>()) + "," +
              (r.contains("step_us") ? number(r["step_us"]) : "") + "," + number(r["place_s"]) +
              "," + quoted(c.value("step_note", "")) + "\n";
    }
  return text;
}

void run_mesh(const MeshArgs& a) {
  const std::string format = table_format(a.format, a.json, a.out);
  prepare_output_path(a.out, "-o");
  if (a.networks.empty()) throw ConfigError("--network: give at least one snn:TOPOLOGY:NEURONS");
  if (a.meshes.size() != a.networks.size() && a.meshes.size() != 1)
    throw ConfigError("--mesh: give one mesh for every --network (" + std::to_string(a.networks.size()) +
                      "), or one for all; got " + std::to_string(a.meshes.size()));
  std::vector<std::string> methods = split_list(a.methods);
  refuse_repeated(methods, "--methods");
  for (const std::string& m : methods)
    if (std::find(mesh_methods().begin(), mesh_methods().end(), m) == mesh_methods().end())
      throw ConfigError("--methods: '" + m + "' unknown (sequential, random, metis, hilbert, force-directed)");
  // Parse every case before any work: a bad one is refused at once, and so is
  // a network larger than its mesh holds (its traffic would take minutes and
  // gigabytes to build before the mapping found that out).
  for (size_t i = 0; i < a.networks.size(); ++i) {
    const SnnSpec snn = parse_snn_spec(a.networks[i]);
    const MeshSpec mesh = parse_mesh_spec(a.meshes[a.meshes.size() == 1 ? 0 : i]);
    baselines::check_mesh_capacity(mesh, static_cast<double>(snn.neurons));
  }
  nlohmann::json doc = {{"seed", a.seed}, {"cases", nlohmann::json::array()}};
  for (size_t i = 0; i < a.networks.size(); ++i)
    doc["cases"].push_back(run_case(a.networks[i], a.meshes[a.meshes.size() == 1 ? 0 : i], a, methods));
  const std::string text = format == "json"  ? doc.dump(1) + "\n"
                           : format == "csv" ? csv(doc)
                                             : markdown(doc);
  if (!a.out.empty()) {
    write_text_file_atomic(a.out, text);
    std::printf("written         %s\n", a.out.c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
}

}  // namespace

void add_mesh_commands(CLI::App& app) {
  CLI::App* mesh = app.add_subcommand("mesh", "Spiking networks on a neuromorphic mesh (graph-to-core mapping)");
  mesh->require_subcommand(1);
  auto args = std::make_shared<MeshArgs>();
  CLI::App* m = mesh->add_subcommand("map", "Map networks onto meshes with every mapping and compare their costs");
  m->add_option("--network", args->networks,
                "snn:TOPOLOGY:NEURONS[:key=value,...] (repeatable), TOPOLOGY layered, lattice or random "
                "(datasets/snn.h; e.g. snn:layered:1000000)")
      ->required();
  m->add_option("--mesh", args->meshes,
                "mesh:WxH[,capacity=N,link_Bps=X,latency_us=Y] (one per --network, or one for all)")
      ->required();
  m->add_option("--methods", args->methods, "Comma list of sequential, random, metis, hilbert, force-directed")
      ->capture_default_str();
  m->add_option("--seed", args->seed, "Seed of random and METIS")->capture_default_str();
  m->add_flag("!--no-simulate", args->simulate,
              "Skip the simulated biological step (the contention simulator, meshes up to 16,384 cores)");
  m->add_option("-o,--out", args->out, "Write the table (.md, .csv, .json) here");
  m->add_option("--format", args->format,
                "table (Markdown), md, csv or json (default: from -o's extension, else table)");
  m->add_flag("--json", args->json, "Print one JSON object");
  m->callback([args] { run_mesh(*args); });
}

}  // namespace aware::cli
