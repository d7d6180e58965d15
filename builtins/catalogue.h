// What this build has, by kind, as `aware list` prints it and the Python module's
// aware.list() returns it: every entry's name, one-line description and options,
// generated from the registries and tables themselves.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/registry.h"

namespace aware {

// "evaluators", "placers", "agents", "strategies", "clusters", "models", "plugins".
const std::vector<std::string>& catalogue_kinds();
// The entries of `kind` ("methods" is "placers"). Throws ConfigError naming the
// known kinds for another. Call register_builtins() first.
std::vector<RegistryInfo> catalogue_entries(const std::string& kind);
// {"name", "description", "options": [{"name", "type", "default", "help"[, "min", "max"]}]}.
nlohmann::json catalogue_entry_json(const RegistryInfo& entry);
// A kind as JSON: a list of entries (plugins: a list of names).
nlohmann::json catalogue_json(const std::string& kind);

}  // namespace aware
