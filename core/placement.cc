#include "core/placement.h"

#include <map>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/op_graph.h"

namespace aware {

void check_placement(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                     const std::string& source) {
  if (placement.size() != graph.num_ops()) {
    throw DeviceError(source + ": placement has " + std::to_string(placement.size()) +
                      " ops but graph '" + graph.name() + "' has " +
                      std::to_string(graph.num_ops()));
  }
  std::map<std::string, int> group_device;
  for (int op = 0; op < graph.num_ops(); ++op) {
    const int d = placement[op];
    if (d < 0 || d >= cluster.num_devices()) {
      throw DeviceError(source + ": op '" + graph.op(op).name + "': field 'device' is " +
                        std::to_string(d) + " but cluster '" + cluster.name() + "' has " +
                        std::to_string(cluster.num_devices()) + " devices");
    }
    const std::string& group = graph.op(op).colocation_group;
    if (group.empty()) continue;
    auto [it, inserted] = group_device.emplace(group, d);
    if (!inserted && it->second != d) {
      throw DeviceError(source + ": op '" + graph.op(op).name + "': field 'device' splits colocation group '" +
                        group + "' across devices");
    }
  }
}

Placement single_device_placement(const OpGraph& graph, int device) {
  return Placement(std::vector<int>(graph.num_ops(), device));
}

Placement round_robin_placement(const OpGraph& graph, const Cluster& cluster) {
  Placement p(std::vector<int>(graph.num_ops(), 0));
  const std::vector<int> order = topological_order(graph);
  const int devices = cluster.num_devices();
  std::map<std::string, int> group_device;
  int next = 0;
  for (int op : order) {
    const std::string& group = graph.op(op).colocation_group;
    if (!group.empty()) {
      auto it = group_device.find(group);
      if (it != group_device.end()) {
        p[op] = it->second;
        continue;
      }
      group_device[group] = next % devices;
    }
    p[op] = next++ % devices;
  }
  return p;
}

}  // namespace aware
