// The one registry template behind every name the workbench looks up by string:
// evaluators ("analytic", "simgrid", "cpu"), placers ("heft", "anneal", "aware")
// and learned agents ("placeto", "hierarchical", "aware"). An entry carries a
// name, a one-line description and the options it takes (name, type, default,
// help); `aware list ...` and the CLI's --help text are generated from them, and
// check_options() refuses an unknown option with the valid ones.
//
// Registration happens in one place, builtins/register_builtins(), which calls
// each plugin's own register function; nothing registers as a side effect.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/errors.h"

namespace aware {

// String options for evaluators and placers ("mode" -> "placeto", ...).
using Options = std::map<std::string, std::string>;

// One option an entry takes. A name ending in ".*" ("cfg.*") stands for every key
// with that prefix.
// kOutputPath names a file the entry writes and kOutputFolder a folder it writes
// into (and may read back): prepare_output_options() checks both before any work.
struct OptionSpec {
  enum class Type { kString, kInt, kDouble, kBool, kPath, kOutputPath, kOutputFolder };
  std::string name;
  Type type = Type::kString;
  std::string default_value;  // as text; empty when the default depends on the input
  std::string help;
  // kInt and kDouble: the values allowed (inclusive), checked with the type by
  // check_options_against, so that a size such as hidden=100000000 is refused
  // before a network is built. A number is always finite (no nan, no inf).
  double min_value = -std::numeric_limits<double>::infinity();
  double max_value = std::numeric_limits<double>::infinity();
};

// Option type names for help text ("int", "number", ...).
const char* option_type_name(OptionSpec::Type type);

// Throws ConfigError naming `owner` when `options` holds a key no spec in `specs`
// covers (the message lists the valid ones), a value that does not parse as its
// spec's type (int, number, bool 0/1/true/false/on/off), a number that is not
// finite, or one outside the spec's [min_value, max_value] (the message gives the range).
void check_options_against(const Options& options, const std::vector<OptionSpec>& specs,
                           const std::string& owner);

// For every option in `options` whose spec is kOutputPath or kOutputFolder:
// creates the missing parent folders and checks a file can be written there (a
// folder: that the name is not a file), so that a run fails before its work
// rather than after it. Throws ConfigError naming `owner`, the option and the path.
void prepare_output_options(const Options& options, const std::vector<OptionSpec>& specs,
                            const std::string& owner);

// "name (type, default D): help" lines, one per option, each indented by `indent`.
std::string format_option_specs(const std::vector<OptionSpec>& specs, const std::string& indent);

// What every registry entry says about itself.
struct RegistryInfo {
  std::string name;
  std::string description;       // one line
  std::vector<OptionSpec> options;
  // What the entry claims about itself, for the conformance suites (tests/conformance):
  // evaluators: "deterministic" = "1"; "models" = "links" (the hand-computed
  // chain / diamond / fork-join schedules on point-to-point links);
  // "link_sharing" = "fcfs" | "fair"; "tolerance" (relative, for the hand
  // schedules and the reference); "reference" = the evaluator it must agree with.
  // placers: "deterministic" = "1" (same seed, same placement).
  Options traits;
};

// Name -> (description, options, factory). `kind` ("evaluator", "method",
// "agent") is used in messages. Thread-safe: add() and lookups lock.
template <class Product, class... Args>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Product>(Args...)>;

  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // Adds or replaces `name`. Registering the same name twice (as a second call of
  // register_builtins() would) keeps the last entry.
  void add(const std::string& name, const std::string& description, Factory factory) {
    add(name, description, {}, std::move(factory));
  }
  void add(const std::string& name, const std::string& description,
           std::vector<OptionSpec> options, Factory factory) {
    add(RegistryInfo{name, description, std::move(options), {}}, std::move(factory));
  }
  void add(RegistryInfo info, Factory factory) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string name = info.name;
    entries_[name] = Entry{std::move(info), std::move(factory)};
  }
  // Removes `name` if present (tests that register a throw-away entry clean up with it).
  void remove(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.erase(name);
  }
  bool has(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.count(name) > 0;
  }
  // Sorted by name.
  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [name, entry] : entries_) out.push_back(name);
    return out;
  }
  // Throws ConfigError listing the known names for an unknown one.
  RegistryInfo info(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return find_locked(name).info;
  }
  std::string description(const std::string& name) const { return info(name).description; }
  // Every entry, sorted by name.
  std::vector<RegistryInfo> entries() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<RegistryInfo> out;
    for (const auto& [name, entry] : entries_) out.push_back(entry.info);
    return out;
  }
  // Throws ConfigError for an unknown name, an unknown option (listing the valid
  // ones) or a value of the wrong type.
  void check_options(const std::string& name, const Options& options) const {
    check_options_against(options, info(name).options, kind_ + " '" + name + "'");
  }
  // Throws ConfigError listing the known names for an unknown one.
  std::unique_ptr<Product> create(const std::string& name, Args... args) const {
    Factory factory;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      factory = find_locked(name).factory;
    }
    return factory(std::forward<Args>(args)...);
  }
  const std::string& kind() const { return kind_; }

 private:
  struct Entry {
    RegistryInfo info;
    Factory factory;
  };
  const Entry& find_locked(const std::string& name) const {
    const auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::string known;
      for (const auto& [n, e] : entries_) known += (known.empty() ? "" : ", ") + n;
      throw ConfigError("unknown " + kind_ + " '" + name + "' (known: " +
                        (known.empty() ? std::string("none registered") : known) + ")");
    }
    return it->second;
  }

  std::string kind_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

}  // namespace aware
