#include "core/placer.h"

#include <mutex>

#include "core/errors.h"

namespace aware {
namespace {
std::mutex g_placer_mutex;
}

PlacerRegistry& PlacerRegistry::instance() {
  static PlacerRegistry registry;
  return registry;
}

void PlacerRegistry::add(const std::string& name, const std::string& description,
                         PlacerFactory factory) {
  std::lock_guard<std::mutex> lock(g_placer_mutex);
  entries_[name] = Entry{description, std::move(factory)};
}

bool PlacerRegistry::has(const std::string& name) const {
  std::lock_guard<std::mutex> lock(g_placer_mutex);
  return entries_.count(name) > 0;
}

std::unique_ptr<Placer> PlacerRegistry::create(const std::string& name) const {
  PlacerFactory factory;
  {
    std::lock_guard<std::mutex> lock(g_placer_mutex);
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::string known;
      for (const auto& [n, e] : entries_) known += (known.empty() ? "" : ", ") + n;
      throw ConfigError("unknown method '" + name + "' (known: " + known + ")");
    }
    factory = it->second.factory;
  }
  return factory();
}

std::vector<std::string> PlacerRegistry::names() const {
  std::lock_guard<std::mutex> lock(g_placer_mutex);
  std::vector<std::string> out;
  for (const auto& [n, e] : entries_) out.push_back(n);
  return out;
}

std::string PlacerRegistry::description(const std::string& name) const {
  std::lock_guard<std::mutex> lock(g_placer_mutex);
  auto it = entries_.find(name);
  return it == entries_.end() ? std::string() : it->second.description;
}

}  // namespace aware
