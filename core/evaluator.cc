#include "core/evaluator.h"

#include <cerrno>
#include <cstdlib>
#include <mutex>

#include "core/errors.h"

namespace aware {
namespace {
std::mutex g_registry_mutex;

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
}  // namespace

EvaluatorRegistry& EvaluatorRegistry::instance() {
  static EvaluatorRegistry registry;
  return registry;
}

void EvaluatorRegistry::add(const std::string& name, const std::string& description,
                            EvaluatorFactory factory) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  entries_[name] = Entry{description, std::move(factory)};
}

bool EvaluatorRegistry::has(const std::string& name) const {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  return entries_.count(name) > 0;
}

std::unique_ptr<Evaluator> EvaluatorRegistry::create(const std::string& name,
                                                     const Options& options) const {
  EvaluatorFactory factory;
  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::vector<std::string> known;
      for (const auto& [n, e] : entries_) known.push_back(n);
      throw ConfigError("unknown evaluator '" + name + "' (known: " + join_names(known) + ")");
    }
    factory = it->second.factory;
  }
  return factory(options);
}

std::vector<std::string> EvaluatorRegistry::names() const {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  std::vector<std::string> out;
  for (const auto& [n, e] : entries_) out.push_back(n);
  return out;
}

std::string EvaluatorRegistry::description(const std::string& name) const {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  auto it = entries_.find(name);
  return it == entries_.end() ? std::string() : it->second.description;
}

std::string option_string(const Options& options, const std::string& key,
                          const std::string& fallback) {
  auto it = options.find(key);
  return it == options.end() ? fallback : it->second;
}

double option_double(const Options& options, const std::string& key, double fallback,
                     const std::string& owner) {
  auto it = options.find(key);
  if (it == options.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || errno != 0) {
    throw ConfigError(owner + ": option '" + key + "' must be a number, got '" + it->second + "'");
  }
  return value;
}

long long option_int(const Options& options, const std::string& key, long long fallback,
                     const std::string& owner) {
  auto it = options.find(key);
  if (it == options.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || errno != 0) {
    throw ConfigError(owner + ": option '" + key + "' must be an integer, got '" + it->second +
                      "'");
  }
  return value;
}

void check_known_options(const Options& options, const std::vector<std::string>& known,
                         const std::string& owner) {
  for (const auto& [key, value] : options) {
    bool found = false;
    for (const auto& k : known) found = found || k == key;
    if (!found) {
      throw ConfigError(owner + ": unknown option '" + key + "' (known: " + join_names(known) +
                        ")");
    }
  }
}

}  // namespace aware
