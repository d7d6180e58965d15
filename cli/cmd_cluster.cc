// aware cluster show | list
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "core/formats.h"

namespace aware::cli {
namespace {

struct ShowArgs {
  std::string cluster;
  bool json = false;
};

void run_show(const ShowArgs& a) {
  const Cluster c = load_cluster(a.cluster);
  if (a.json) {
    std::cout << cluster_to_json(c).dump(1) << "\n";
    return;
  }
  std::printf("cluster %s: %d devices, %zu switches, %d links\n", c.name().c_str(), c.num_devices(),
              c.switches().size(), c.num_links());
  std::printf("%-16s %-6s %12s %6s %10s %12s %8s\n", "device", "kind", "peak TFLOP/s", "eff",
              "memory", "mem GB/s", "launch");
  for (const Device& d : c.devices()) {
    std::printf("%-16s %-6s %12.2f %6.2f %10s %12.0f %6.1fus\n", d.name.c_str(), d.kind.c_str(),
                d.peak_flops / 1e12, d.efficiency,
                format_bytes(d.memory_bytes, BytesStyle::kTable).c_str(), d.memory_Bps / 1e9,
                d.launch_overhead_us);
  }
  std::printf("%-24s %-16s %-16s %10s %10s\n", "link", "a", "b", "GB/s", "latency");
  for (const Link& l : c.links()) {
    std::printf("%-24s %-16s %-16s %10.1f %8.1fus\n", l.name.c_str(), c.node_name(l.a).c_str(),
                c.node_name(l.b).c_str(), l.bandwidth_Bps / 1e9, l.latency_us);
  }
  if (c.num_devices() > 1) {
    std::printf("route %s -> %s: %zu hops, %.1f us, %.1f GB/s\n", c.device(0).name.c_str(),
                c.device(c.num_devices() - 1).name.c_str(), c.route(0, c.num_devices() - 1).size(),
                c.route_latency_us(0, c.num_devices() - 1),
                c.route_bandwidth_Bps(0, c.num_devices() - 1) / 1e9);
  }
}

}  // namespace

void add_cluster_commands(CLI::App& app) {
  CLI::App* cluster = app.add_subcommand("cluster", "Show cluster presets and files");
  cluster->require_subcommand(1);
  auto show = std::make_shared<ShowArgs>();
  CLI::App* s = cluster->add_subcommand("show", "Devices, links and routes of a cluster");
  s->add_option("cluster", show->cluster, "preset:NAME or a cluster JSON file")->required();
  s->add_flag("--json", show->json, "Print the cluster as JSON (the file format)");
  s->callback([show] { run_show(*show); });
  CLI::App* l = cluster->add_subcommand("list", "List the built-in presets");
  auto list_json = std::make_shared<bool>(false);
  l->add_flag("--json", *list_json, "Print a JSON array of preset specs");
  l->callback([list_json] {
    std::vector<std::string> specs;
    for (const auto& n : cluster_preset_names()) specs.push_back("preset:" + n);
    if (*list_json) {
      std::cout << nlohmann::json(specs).dump(1) << "\n";
      return;
    }
    for (const auto& spec : specs) std::printf("%s\n", spec.c_str());
  });
}

}  // namespace aware::cli
