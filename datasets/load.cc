#include "datasets/load.h"
#include "datasets/snn.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/formats.h"
#include "core/random_dag.h"
#include "datasets/families.h"
#include "datasets/zoo.h"

namespace aware {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// "zoo:NAME" or "zoo:NAME:key=value,key=value" (`rest` is what follows "zoo:").
OpGraph load_zoo_spec(const std::string& spec, const std::string& rest) {
  const std::size_t colon = rest.find(':');
  const std::string name = rest.substr(0, colon);
  if (colon == std::string::npos) return build_zoo_model(name);
  const std::string valid = " (valid keys: " + join(model_option_keys()) + ")";
  auto fail = [&](const std::string& what) -> ConfigError {
    return ConfigError("graph spec '" + spec + "': " + what);
  };
  const std::vector<std::string> used = zoo_model_option_keys(name);  // throws for an unknown model
  const std::string items = rest.substr(colon + 1);
  if (items.empty()) throw fail("expected key=value after 'zoo:" + name + ":'" + valid);
  ModelOptions options;
  std::vector<std::string> given;
  std::size_t begin = 0;
  while (begin <= items.size()) {
    const std::size_t end = std::min(items.find(',', begin), items.size());
    const std::string item = items.substr(begin, end - begin);
    begin = end + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) throw fail("'" + item + "' is not key=value" + valid);
    const std::string key = item.substr(0, eq);
    const std::string text = item.substr(eq + 1);
    int* field = model_option_field(options, key);
    if (field == nullptr) throw fail("unknown key '" + key + "'" + valid);
    if (std::find(given.begin(), given.end(), key) != given.end())
      throw fail("key '" + key + "' is given twice");
    given.push_back(key);
    // Digits only: no sign, no spaces, no exponent; 0 would mean "the default" to
    // the builder, which a spec that names the key surely does not want.
    constexpr long kMaxValue = 1000000;
    long value = 0;
    bool ok = !text.empty();
    for (char c : text) {
      ok = ok && c >= '0' && c <= '9' && value <= kMaxValue;
      if (ok) value = value * 10 + (c - '0');
    }
    if (!ok || value < 1 || value > kMaxValue) {
      throw fail("key '" + key + "': value '" + text + "' is not a positive integer up to " +
                 std::to_string(kMaxValue) + valid);
    }
    if (std::find(used.begin(), used.end(), key) == used.end()) {
      throw fail("key '" + key + "': zoo model '" + name +
                 "' does not use it (it uses: " + join(used) + ")");
    }
    *field = static_cast<int>(value);
  }
  OpGraph graph = build_zoo_model(name, options);
  graph.set_source(spec);
  return graph;
}

}  // namespace

OpGraph load_graph(const std::string& spec) {
  const std::string zoo_prefix = "zoo:";
  const std::string family_prefix = "family:";
  if (spec.rfind(zoo_prefix, 0) == 0) {
    return load_zoo_spec(spec, spec.substr(zoo_prefix.size()));
  }
  if (spec.rfind(family_prefix, 0) == 0) {
    const std::string rest = spec.substr(family_prefix.size());
    const std::size_t colon = rest.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
      throw ConfigError("graph spec '" + spec + "': expected family:FAMILY:SEED");
    }
    const std::string family = rest.substr(0, colon);
    const std::string seed_text = rest.substr(colon + 1);
    std::uint64_t seed = 0;
    for (char c : seed_text) {
      if (c < '0' || c > '9' || seed > (UINT64_MAX - 9) / 10) {
        throw ConfigError("graph spec '" + spec + "': seed '" + seed_text +
                          "' is not a non-negative integer");
      }
      seed = seed * 10 + static_cast<std::uint64_t>(c - '0');
    }
    OpGraph graph = build_family_graph(family, seed);
    graph.set_source(spec);
    return graph;
  }
  if (spec.rfind("snn:", 0) == 0) {
    const SnnSpec snn = parse_snn_spec(spec);
    return snn_op_graph(snn, build_snn_traffic(snn));
  }
  const std::string random_prefix = "random:";
  if (spec.rfind(random_prefix, 0) == 0) {
    // random:N:SEED, a seeded layered DAG for benchmarks (core/random_dag.h).
    int ops = 0;
    unsigned long long seed = 0;
    char tail = 0;
    if (std::sscanf(spec.c_str() + random_prefix.size(), "%d:%llu%c", &ops, &seed, &tail) != 2 ||
        ops < 1 || ops > 1000000) {
      throw ConfigError("graph spec '" + spec + "': expected random:N:SEED with 1 <= N <= 1000000");
    }
    return random_layered_dag(ops, seed);
  }
  return read_graph_file(spec);
}

}  // namespace aware
