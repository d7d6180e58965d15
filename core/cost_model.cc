#include "core/cost_model.h"

#include <map>
#include <tuple>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/op_graph.h"

namespace aware {

double CostTable::lookup(const std::string& op_name, const std::string& device_kind) const {
  auto it = us.find({op_name, device_kind});
  if (it != us.end()) return it->second;
  it = us.find({op_name, "*"});
  return it == us.end() ? -1 : it->second;
}

double CostTable::lookup(const std::string& graph_name, const std::string& op_name,
                         const std::string& device_kind) const {
  if (!graph_name.empty()) {
    const double scoped = lookup(scoped_op_name(graph_name, op_name), device_kind);
    if (scoped >= 0) return scoped;
  }
  return lookup(op_name, device_kind);
}

const CostFit* CostTable::fit(const std::string& op_type, const std::string& device_kind) const {
  if (fits.empty()) return nullptr;
  for (const auto& key : {std::make_pair(op_type, device_kind), std::make_pair(std::string("*"), device_kind),
                          std::make_pair(op_type, std::string("*")), std::make_pair(std::string("*"), std::string("*"))}) {
    auto it = fits.find(key);
    if (it != fits.end()) return &it->second;
  }
  return nullptr;
}

double CostTable::pair_slowdown(const std::string& op_type, const std::string& device_kind) const {
  if (pair_slowdowns.empty()) return 0;
  for (const auto& key : {std::make_pair(op_type, device_kind), std::make_pair(std::string("*"), device_kind)}) {
    auto it = pair_slowdowns.find(key);
    if (it != pair_slowdowns.end()) return it->second;
  }
  return 0;
}

double CostFit::time_us(const Op& op) const {
  return overhead_us + us_per_flop * op.flops + us_per_byte * op.bytes_accessed;
}

std::string scoped_op_name(const std::string& graph_name, const std::string& op_name) {
  return graph_name + "::" + op_name;
}

double roofline_time_us(const Op& op, const Device& device) {
  const double compute_s = op.flops / (device.peak_flops * device.efficiency);
  const double memory_s = op.bytes_accessed / device.memory_Bps;
  return std::max(compute_s, memory_s) * 1e6 + device.launch_overhead_us;
}

double op_time_us(const Op& op, const Device& device, const CostTable* table,
                  const std::string& graph_name) {
  if (table != nullptr && !table->empty()) {
    const double measured = table->lookup(graph_name, op.name, device.kind);
    if (measured >= 0) return measured;
  }
  if (op.has_measured_cost()) return op.compute_us;
  if (table != nullptr) {
    if (const CostFit* fit = table->fit(op.type, device.kind)) return fit->time_us(op);
  }
  return roofline_time_us(op, device);
}

OpCostMatrix::OpCostMatrix(const OpGraph& graph, const Cluster& cluster, const CostTable* table)
    : num_devices_(cluster.num_devices()) {
  // One column per class of devices that op_time_us cannot tell apart.
  std::vector<int> first_of_class;
  {
    using Key = std::tuple<std::string, double, double, double, double>;
    std::map<Key, int> classes;
    class_of_.resize(static_cast<size_t>(num_devices_));
    for (int d = 0; d < num_devices_; ++d) {
      const Device& dev = cluster.device(d);
      const Key key{dev.kind, dev.peak_flops, dev.efficiency, dev.memory_Bps, dev.launch_overhead_us};
      const auto [it, added] = classes.emplace(key, static_cast<int>(first_of_class.size()));
      if (added) first_of_class.push_back(d);
      class_of_[static_cast<size_t>(d)] = it->second;
    }
    num_classes_ = static_cast<int>(first_of_class.size());
  }
  const int n = graph.num_ops();
  time_us_.resize(static_cast<size_t>(n) * num_classes_);
  min_time_us_.assign(n, std::numeric_limits<double>::infinity());
  for (int op = 0; op < n; ++op) {
    for (int k = 0; k < num_classes_; ++k) {
      const int d = first_of_class[static_cast<size_t>(k)];
      const double t = op_time_us(graph.op(op), cluster.device(d), table, graph.name());
      if (!std::isfinite(t)) {
        // e.g. peak_flops 1e-300: a step time of inf helps nobody; name the inputs.
        const Op& o = graph.op(op);
        const Device& dev = cluster.device(d);
        std::ostringstream out;
        out << (graph.source().empty() ? graph.name() : graph.source()) << ": op '" << o.name
            << "' on device '" << dev.name << "' of cluster '" << cluster.name()
            << "': its time is not finite (fields 'flops' " << o.flops << ", 'bytes_accessed' "
            << o.bytes_accessed << "; device 'peak_flops' " << dev.peak_flops << ", 'efficiency' "
            << dev.efficiency << ", 'memory_Bps' " << dev.memory_Bps << ")";
        throw ConfigError(out.str());
      }
      time_us_[static_cast<size_t>(op) * num_classes_ + k] = t;
    }
    for (int k = 0; k < num_classes_; ++k)
      min_time_us_[op] = std::min(min_time_us_[op], time_us_[static_cast<size_t>(op) * num_classes_ + k]);
    if (num_devices_ == 0) min_time_us_[op] = 0;
  }
}

double OpCostMatrix::mean_time_us(int op) const {
  Means& m = *means_;
  std::call_once(m.once, [&] {
    const int n = num_ops();
    m.values.assign(n, 0);
    // Over every device, in device order (the same sums as one column per device).
    for (int o = 0; o < n; ++o)
      for (int d = 0; d < num_devices_; ++d) m.values[o] += time_us(o, d) / num_devices_;
  });
  return m.values[op];
}

}  // namespace aware
