#include "core/cost_table.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/op_graph.h"

namespace aware {

using nlohmann::json;

namespace {

constexpr const char* kFormatName = "aware-cost-table";

// The top level's string fields: optional, but a string when present.
std::string optional_string(const json& doc, const char* field, const std::string& source) {
  auto it = doc.find(field);
  if (it == doc.end()) return {};
  if (!it->is_string()) throw ParseError(source + ": field '" + field + "' must be a string");
  return it->get<std::string>();
}

// A JSON value as text for an error message, cut short so a huge value stays one line.
std::string shown(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// A top-level `field` of `doc` mapping device kind to {op type: value}, which
// needs format version `since`: calls `each(kind, type, value, where)` for
// every entry, `where` naming the file, the field, the kind and the type.
// Throws ParseError for a field in an older version, a shape that is not that,
// or an empty kind or type.
void for_each_kind_and_type(
    const json& doc, const std::string& field, int since, long long file_version, const std::string& what,
    const std::string& source,
    const std::function<void(const std::string&, const std::string&, const json&, const std::string&)>& each) {
  auto it = doc.find(field);
  if (it == doc.end()) return;
  if (file_version < since)
    throw ParseError(source + ": field '" + field + "' needs version " + std::to_string(since) +
                     " (the file says version " + std::to_string(file_version) + ")");
  if (!it->is_object())
    throw ParseError(source + ": field '" + field + "' must be an object mapping device kind to {op type: " +
                     what + "}");
  for (auto kind = it->begin(); kind != it->end(); ++kind) {
    const std::string where = source + ": " + field + ": device kind '" + kind.key() + "'";
    if (kind.key().empty()) throw ParseError(source + ": field '" + field + "' has an empty device kind");
    if (!kind->is_object()) throw ParseError(where + ": must be an object mapping op type to " + what);
    for (auto type = kind->begin(); type != kind->end(); ++type) {
      if (type.key().empty()) throw ParseError(where + ": an op type is empty");
      each(kind.key(), type.key(), *type, where + ": op type '" + type.key() + "'");
    }
  }
}

}  // namespace

json cost_table_to_json(const CostTable& table, const CostTableInfo& info) {
  json costs = json::object();
  for (const auto& [key, us] : table.us) costs[key.second][key.first] = us;
  // Version 1 unless the table has fits, so that tables without them stay
  // readable by builds that know only version 1.
  // Each version's field enters only when used, so older builds read what they can.
  const int version = !table.pair_slowdowns.empty() ? 3 : !table.fits.empty() ? 2 : 1;
  json doc{{"format", kFormatName}, {"version", version}};
  if (!info.graph.empty()) doc["graph"] = info.graph;
  if (!info.backend.empty()) doc["backend"] = info.backend;
  doc["costs"] = std::move(costs);
  if (!table.fits.empty()) {
    json fits = json::object();
    for (const auto& [key, fit] : table.fits) {
      fits[key.second][key.first] = {{"overhead_us", fit.overhead_us},
                                     {"us_per_flop", fit.us_per_flop},
                                     {"us_per_byte", fit.us_per_byte},
                                     {"samples", fit.samples},
                                     {"from", fit.from}};
    }
    doc["fits"] = std::move(fits);
  }
  if (!table.pair_slowdowns.empty()) {
    json slowdowns = json::object();
    for (const auto& [key, factor] : table.pair_slowdowns) slowdowns[key.second][key.first] = factor;
    doc["pair_slowdowns"] = std::move(slowdowns);
  }
  return doc;
}

CostTable cost_table_from_json(const json& doc, const std::string& source, CostTableInfo* info) {
  if (!doc.is_object()) throw ParseError(source + ": expected a JSON object at the top level");
  static const char* const kKnown[] = {"format", "version", "graph", "backend", "costs", "fits", "pair_slowdowns"};
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    bool known = false;
    for (const char* k : kKnown) known = known || it.key() == k;
    if (!known) {
      throw ParseError(source + ": unknown field '" + it.key() +
                       "' (known: format, version, graph, backend, costs, fits, pair_slowdowns)");
    }
  }
  auto format = doc.find("format");
  if (format == doc.end()) throw ParseError(source + ": field 'format' is missing");
  if (!format->is_string() || format->get<std::string>() != kFormatName) {
    throw ParseError(source + ": field 'format' is " + shown(*format) + ", expected '" +
                     kFormatName + "'");
  }
  auto version = doc.find("version");
  if (version == doc.end()) throw ParseError(source + ": field 'version' is missing");
  if (!version->is_number_integer() || version->get<long long>() < 1 ||
      version->get<long long>() > kCostTableFormatVersion) {
    throw ParseError(source + ": field 'version' is " + shown(*version) +
                     ", this build reads versions 1 to " + std::to_string(kCostTableFormatVersion));
  }
  CostTableInfo read_info{optional_string(doc, "graph", source),
                          optional_string(doc, "backend", source)};
  auto costs = doc.find("costs");
  if (costs == doc.end()) throw ParseError(source + ": field 'costs' is missing");
  if (!costs->is_object()) {
    throw ParseError(source +
                     ": field 'costs' must be an object mapping device kind to "
                     "{op name: µs}");
  }
  CostTable table;
  for (auto kind = costs->begin(); kind != costs->end(); ++kind) {
    const std::string where = source + ": device kind '" + kind.key() + "'";
    if (kind.key().empty()) throw ParseError(source + ": field 'costs' has an empty device kind");
    if (!kind->is_object()) throw ParseError(where + ": must be an object mapping op name to µs");
    for (auto op = kind->begin(); op != kind->end(); ++op) {
      if (op.key().empty()) throw ParseError(where + ": an op name is empty");
      const std::string at = where + ": op '" + op.key() + "': cost ";
      if (!op->is_number()) throw ParseError(at + "must be a number of µs, got " + shown(*op));
      const double us = op->get<double>();
      if (!std::isfinite(us)) throw ParseError(at + "must be finite");
      if (us < 0) throw ParseError(at + "must not be negative, got " + shown(*op));
      table.us[{op.key(), kind.key()}] = us;
    }
  }
  const long long file_version = version->get<long long>();
  for_each_kind_and_type(doc, "fits", 2, file_version, "a fit", source,
                         [&](const std::string& kind, const std::string& type, const json& value,
                             const std::string& at) {
                           if (!value.is_object()) throw ParseError(at + ": must be an object");
                           CostFit fit;
                           for (auto field = value.begin(); field != value.end(); ++field) {
                             const std::string& name = field.key();
                             if (name == "from") {
                               if (!field->is_string()) throw ParseError(at + ": field 'from' must be a string");
                               fit.from = field->get<std::string>();
                               continue;
                             }
                             double* target = name == "overhead_us"   ? &fit.overhead_us
                                              : name == "us_per_flop" ? &fit.us_per_flop
                                              : name == "us_per_byte" ? &fit.us_per_byte
                                                                      : nullptr;
                             if (target == nullptr && name != "samples")
                               throw ParseError(at + ": unknown field '" + name +
                                                "' (known: overhead_us, us_per_flop, us_per_byte, samples, from)");
                             if (!field->is_number() || !std::isfinite(field->get<double>()) ||
                                 field->get<double>() < 0)
                               throw ParseError(at + ": field '" + name + "' must be a finite number >= 0, got " +
                                                shown(*field));
                             if (target != nullptr) *target = field->get<double>();
                             else fit.samples = static_cast<int>(field->get<double>());
                           }
                           table.fits[{type, kind}] = fit;
                         });
  for_each_kind_and_type(doc, "pair_slowdowns", 3, file_version, "a factor", source,
                         [&](const std::string& kind, const std::string& type, const json& value,
                             const std::string& at) {
                           if (!value.is_number() || !std::isfinite(value.get<double>()) || !(value.get<double>() > 0))
                             throw ParseError(at + ": factor must be a finite number > 0, got " + shown(value));
                           table.pair_slowdowns[{type, kind}] = value.get<double>();
                         });
  if (info != nullptr) *info = std::move(read_info);
  return table;
}

CostTable read_cost_table_file(const std::string& path, CostTableInfo* info) {
  return cost_table_from_json(parse_json_text(read_text_file(path), path), path, info);
}

void write_cost_table_file(const CostTable& table, const std::string& path,
                           const CostTableInfo& info) {
  write_text_file_atomic(path, cost_table_to_json(table, info).dump(1) + "\n");
}

std::string cost_table_fingerprint(const CostTable& table) {
  // FNV-1a over the entries in the map's (sorted) order; names end with a NUL so
  // ("ab", "c") and ("a", "bc") differ, and values enter as their bit patterns.
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  auto mix = [&hash](const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      hash ^= bytes[i];
      hash *= 0x100000001b3ULL;
    }
  };
  auto mix_double = [&mix](double value) {
    std::uint64_t bits = 0;
    static_assert(sizeof bits == sizeof value, "double is 64 bits");
    std::memcpy(&bits, &value, sizeof bits);
    // Byte order fixed to little-endian so the text is the same on every machine.
    for (int b = 0; b < 8; ++b) {
      const unsigned char byte = static_cast<unsigned char>(bits >> (8 * b));
      mix(&byte, 1);
    }
  };
  for (const auto& [key, us] : table.us) {
    mix(key.first.c_str(), key.first.size() + 1);
    mix(key.second.c_str(), key.second.size() + 1);
    mix_double(us);
  }
  // Fits enter only when there are any, so a table without fits keeps the
  // fingerprint it had before fits existed.
  for (const auto& [key, fit] : table.fits) {
    mix(key.first.c_str(), key.first.size() + 1);
    mix(key.second.c_str(), key.second.size() + 1);
    for (double value : {fit.overhead_us, fit.us_per_flop, fit.us_per_byte}) mix_double(value);
  }
  for (const auto& [key, factor] : table.pair_slowdowns) {  // likewise: only when measured
    mix(key.first.c_str(), key.first.size() + 1);
    mix(key.second.c_str(), key.second.size() + 1);
    mix_double(factor);
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

CostTableCoverage cost_table_coverage(const CostTable& table, const OpGraph& graph,
                                      const Cluster& cluster) {
  CostTableCoverage coverage;
  coverage.pairs_total = graph.num_ops() * cluster.num_devices();
  for (int op = 0; op < graph.num_ops(); ++op) {
    const Op& o = graph.op(op);
    bool missed = false, by_fit = false;
    for (int d = 0; d < cluster.num_devices(); ++d) {
      if (table.lookup(graph.name(), o.name, cluster.device(d).kind) >= 0) {
        ++coverage.pairs_from_table;
      } else {
        missed = true;
        by_fit = by_fit || table.fit(o.type, cluster.device(d).kind) != nullptr;
      }
    }
    coverage.flops_total += o.flops;
    if (missed && coverage.ops_missed++ == 0) coverage.first_missed_op = o.name;
    if (missed && !o.has_measured_cost()) {
      ++coverage.ops_unprofiled;
      coverage.flops_unprofiled += o.flops;
      if (by_fit) ++coverage.ops_by_fit;
    }
  }
  std::set<std::string> kinds;
  for (int d = 0; d < cluster.num_devices(); ++d) kinds.insert(cluster.device(d).kind);
  const std::string scope = scoped_op_name(graph.name(), "");
  for (const auto& [key, us] : table.us) {
    const bool kind_used = key.second == "*" || kinds.count(key.second) > 0;
    // A scoped entry names its op after "GRAPH::"; one scoped to another graph is
    // unused here (an op name with "::" of its own still matches plainly).
    const bool scoped_here = key.first.compare(0, scope.size(), scope) == 0;
    const std::string op_name = scoped_here ? key.first.substr(scope.size()) : key.first;
    if (!kind_used || graph.find(op_name) < 0) {
      ++coverage.entries_unused;
      continue;
    }
    // An entry shadowed on every device (a "*" entry by kind-specific ones, a
    // plain entry by scoped ones) is unused too.
    bool reached = false;
    for (const std::string& kind : kinds) {
      if (key.second != "*" && key.second != kind) continue;
      const bool shadowed_by_scope =
          !scoped_here && (table.us.count({scope + op_name, kind}) > 0 ||
                           table.us.count({scope + op_name, "*"}) > 0);
      const bool shadowed_by_kind = key.second == "*" && table.us.count({key.first, kind}) > 0;
      reached = reached || (!shadowed_by_scope && !shadowed_by_kind);
    }
    if (!reached) ++coverage.entries_unused;
  }
  return coverage;
}

}  // namespace aware
