// aware list [KIND]: what this build has, generated from the registries and
// tables themselves (names, descriptions, options): evaluators, placers, agents,
// strategies, clusters (the presets), models (the zoo and the families, with the
// keys each reads) and plugins; every kind when none is named.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "builtins/builtins.h"
#include "builtins/catalogue.h"
#include "cli/cli_common.h"
#include "core/registry.h"

namespace aware::cli {
namespace {

struct ListArgs {
  std::string what;
  bool json = false;
};

void print_kind(const std::string& what) {
  const std::vector<RegistryInfo> entries = catalogue_entries(what);
  if (entries.empty()) std::printf("(none in this build)\n");
  for (const RegistryInfo& e : entries) {
    std::printf("%s\n", e.name.c_str());
    if (!e.description.empty()) std::printf("    %s\n", e.description.c_str());
    if (!e.options.empty()) std::printf("    options:\n%s", format_option_specs(e.options, "      ").c_str());
  }
}

void run_list(const ListArgs& a) {
  if (!a.what.empty()) {
    if (a.json) {
      std::cout << catalogue_json(a.what).dump(1) << "\n";
    } else {
      print_kind(a.what);
    }
    return;
  }
  if (a.json) {
    nlohmann::json doc = nlohmann::json::object();
    for (const std::string& k : catalogue_kinds()) doc[k] = catalogue_json(k);
    std::cout << doc.dump(1) << "\n";
    return;
  }
  for (const std::string& k : catalogue_kinds()) {
    std::printf("%s== %s (aware list %s)\n", k == catalogue_kinds().front() ? "" : "\n", k.c_str(), k.c_str());
    print_kind(k);
  }
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto args = std::make_shared<ListArgs>();
  CLI::App* l = app.add_subcommand(
      "list", "List what this build has: evaluators, placers (methods), learned agents, strategies, "
              "clusters (presets), models (the zoo with its keys, the families) or plugins; every kind "
              "when none is named; with each entry's options (pass them as KEY=VALUE)");
  l->add_option("kind", args->what, "evaluators | placers | agents | strategies | clusters | models | plugins");
  l->add_flag("--json", args->json, "Print JSON");
  l->callback([args] { run_list(*args); });
}

// "Method: heft, m-etf, ... (see `aware list placers`)".
std::string registered_names_help(const std::string& label, const std::vector<std::string>& names,
                                  const std::string& list_kind) {
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  return label + ": " + known + " (options: `aware list " + list_kind + "`)";
}

}  // namespace aware::cli
