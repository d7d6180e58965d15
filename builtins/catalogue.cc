#include "builtins/catalogue.h"

#include <limits>

#include "builtins/builtins.h"
#include "core/cluster.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/placer.h"
#include "datasets/families.h"
#include "datasets/zoo.h"
#include "strategies/strategy.h"
#ifdef AWARE_BUILTINS_RL
#include "agents/rl/trainer.h"
#endif

namespace aware {

const std::vector<std::string>& catalogue_kinds() {
  static const std::vector<std::string> all = {"evaluators", "placers", "agents", "strategies",
                                               "clusters",   "models",  "plugins"};
  return all;
}

namespace {

std::string join(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::vector<RegistryInfo> strategy_entries() {
  std::vector<RegistryInfo> out;
  for (const std::string& name : StrategyRegistry::instance().names()) {
    const StrategyKind kind = StrategyRegistry::instance().get(name);
    RegistryInfo e;
    e.name = name;
    e.description = kind.description + (kind.example.empty() ? "" : " (e.g. " + kind.example + ")");
    for (const std::string& o : kind.options) e.options.push_back({o, OptionSpec::Type::kString, "", ""});
    out.push_back(std::move(e));
  }
  return out;
}

// A preset's description: its size and first device, built on the spot; a
// pattern ("multi-node:RxC") says so.
std::vector<RegistryInfo> cluster_entries() {
  std::vector<RegistryInfo> out;
  for (const std::string& name : cluster_preset_names()) {
    RegistryInfo e;
    e.name = "preset:" + name;
    if (name.find(':') != std::string::npos) {
      e.description = "a pattern: fill in the numbers";
    } else {
      try {
        const Cluster c = make_cluster_preset(name);
        e.description = std::to_string(c.num_devices()) + " devices" +
                        (c.num_devices() > 0 ? ", " + c.device(0).kind : std::string());
      } catch (const Error& err) {
        e.description = std::string("not available here: ") + first_line(err.what());
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<RegistryInfo> model_entries() {
  std::vector<RegistryInfo> out;
  std::vector<std::string> names = zoo_model_names();
  for (const std::string& size : zoo_language_model_sizes()) names.push_back(size);
  for (const std::string& name : names) {
    RegistryInfo e;
    e.name = "zoo:" + name;
    e.description = "keys: " + join(zoo_model_option_keys(name)) + " (zoo:" + name + ":key=value,...)";
    out.push_back(std::move(e));
  }
  for (const std::string& family : family_names())
    out.push_back({"family:" + family + ":SEED", "a seeded graph of the " + family + " family", {}, {}});
  out.push_back({"random:N:SEED", "a seeded random layered DAG of N ops", {}, {}});
  return out;
}

}  // namespace

std::vector<RegistryInfo> catalogue_entries(const std::string& what) {
  if (what == "evaluators") return EvaluatorRegistry::instance().entries();
  if (what == "placers" || what == "methods") return PlacerRegistry::instance().entries();
#ifdef AWARE_BUILTINS_RL
  if (what == "agents") return rl::rl_agent_entries();
#else
  if (what == "agents") return {};
#endif
  if (what == "strategies") return strategy_entries();
  if (what == "clusters") return cluster_entries();
  if (what == "models") return model_entries();
  if (what == "plugins") {
    std::vector<RegistryInfo> out;
    for (const std::string& p : builtin_plugins()) out.push_back({p, "", {}, {}});
    return out;
  }
  throw ConfigError("list: unknown kind '" + what + "' (known: " + join(catalogue_kinds()) + ", or none for all)");
}

nlohmann::json catalogue_entry_json(const RegistryInfo& e) {
  nlohmann::json options = nlohmann::json::array();
  for (const OptionSpec& o : e.options) {
    nlohmann::json option = {{"name", o.name},
                             {"type", option_type_name(o.type)},
                             {"default", o.default_value},
                             {"help", o.help}};
    // The range a number must lie in, where it has one.
    if (o.min_value > -std::numeric_limits<double>::infinity()) option["min"] = o.min_value;
    if (o.max_value < std::numeric_limits<double>::infinity()) option["max"] = o.max_value;
    options.push_back(option);
  }
  return {{"name", e.name}, {"description", e.description}, {"options", options}};
}

nlohmann::json catalogue_json(const std::string& what) {
  if (what == "plugins") return builtin_plugins();  // a list of names, as before
  nlohmann::json doc = nlohmann::json::array();
  for (const RegistryInfo& e : catalogue_entries(what)) doc.push_back(catalogue_entry_json(e));
  return doc;
}

}  // namespace aware
