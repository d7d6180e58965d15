// aware list evaluators | placers | agents | plugins: what this build has
// registered, generated from the registries (names, descriptions, options).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "builtins/builtins.h"
#include "cli/cli_common.h"
#include "core/evaluator.h"
#include "core/placer.h"
#ifdef AWARE_HAVE_RL
#include "agents/rl/trainer.h"
#endif

namespace aware::cli {
namespace {

struct ListArgs {
  std::string what;
  bool json = false;
};

std::vector<RegistryInfo> entries_of(const std::string& what) {
  if (what == "evaluators") return EvaluatorRegistry::instance().entries();
  if (what == "placers" || what == "methods") return PlacerRegistry::instance().entries();
#ifdef AWARE_HAVE_RL
  if (what == "agents") return rl::rl_agent_entries();
#else
  if (what == "agents") return {};
#endif
  throw ConfigError("list: unknown kind '" + what + "' (known: evaluators, placers, agents, plugins)");
}

nlohmann::json entry_json(const RegistryInfo& e) {
  nlohmann::json options = nlohmann::json::array();
  for (const OptionSpec& o : e.options) {
    options.push_back({{"name", o.name},
                       {"type", option_type_name(o.type)},
                       {"default", o.default_value},
                       {"help", o.help}});
  }
  return {{"name", e.name}, {"description", e.description}, {"options", options}};
}

void run_list(const ListArgs& a) {
  if (a.what == "plugins") {
    const std::vector<std::string> plugins = builtin_plugins();
    if (a.json) {
      std::cout << nlohmann::json(plugins).dump(1) << "\n";
    } else {
      for (const std::string& p : plugins) std::printf("%s\n", p.c_str());
    }
    return;
  }
  const std::vector<RegistryInfo> entries = entries_of(a.what);
  if (a.json) {
    nlohmann::json doc = nlohmann::json::array();
    for (const RegistryInfo& e : entries) doc.push_back(entry_json(e));
    std::cout << doc.dump(1) << "\n";
    return;
  }
  if (entries.empty()) std::printf("(none in this build)\n");
  for (const RegistryInfo& e : entries) {
    std::printf("%s\n    %s\n", e.name.c_str(), e.description.c_str());
    if (!e.options.empty()) std::printf("    options:\n%s", format_option_specs(e.options, "      ").c_str());
  }
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto args = std::make_shared<ListArgs>();
  CLI::App* l = app.add_subcommand(
      "list", "List what this build has registered: evaluators, placers (methods), learned agents, "
              "or plugins; with each entry's options (pass them as KEY=VALUE)");
  l->add_option("kind", args->what, "evaluators | placers | agents | plugins")->required();
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
