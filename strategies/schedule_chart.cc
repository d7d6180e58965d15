#include "strategies/schedule_chart.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "core/graph_algorithms.h"

namespace aware {

namespace {

// The value of the leading tag `letter` + digits among the name's leading tags
// ("recompute", "rN", "mN", "tN"), or -1.
int leading_tag(const std::string& name, char letter) {
  std::size_t at = 0;
  while (at < name.size()) {
    const std::size_t slash = name.find('/', at);
    if (slash == std::string::npos) return -1;
    const std::string part = name.substr(at, slash - at);
    at = slash + 1;
    if (part == "recompute") continue;
    const bool tag = part.size() >= 2 && (part[0] == 'r' || part[0] == 'm' || part[0] == 't') &&
                     std::all_of(part.begin() + 1, part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (!tag) return -1;
    if (part[0] == letter) return std::stoi(part.substr(1));
  }
  return -1;
}

int most_common(const std::map<int, int>& counts, int otherwise) {
  int best = otherwise, most = 0;
  for (const auto& [value, n] : counts)
    if (n > most) best = value, most = n;
  return best;
}

}  // namespace

int micro_of_name(const std::string& name) { return leading_tag(name, 'm'); }
int replica_of_name(const std::string& name) { return std::max(0, leading_tag(name, 'r')); }
int rank_of_name(const std::string& name) { return std::max(0, leading_tag(name, 't')); }

ScheduleChart schedule_chart(const OpGraph& graph, const Placement& placement, const Trace& trace, int max_lanes) {
  ScheduleChart chart;
  const int n = graph.num_ops();
  std::vector<int> micro(n, -1);
  bool any = false;
  for (int id = 0; id < n; ++id) {
    micro[id] = micro_of_name(graph.op(id).name);
    any = any || micro[id] >= 0;
  }
  if (!any || static_cast<int>(trace.ops.size()) < n) return chart;
  // The pass an op runs in (pipeline.cc's rule).
  std::vector<char> forward(n, 0);
  const std::vector<int> order = topological_order(graph);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int id = *it;
    forward[id] = graph.op(id).phase == Phase::kForward;
    for (int e : graph.out_edges(id)) {
      const int v = graph.edge(e).dst;
      if (forward[v] && micro[v] == micro[id]) forward[id] = 1;
    }
  }
  // The first replica's devices.
  std::map<int, std::map<std::pair<int, int>, PassBar>> bars;  // device -> (micro, backward?) -> bar
  for (int id = 0; id < n; ++id) {
    if (micro[id] < 0 || graph.op(id).stream != 0 || replica_of_name(graph.op(id).name) != 0) continue;
    const OpSpan& span = trace.ops[id];
    const int device = placement[id];
    PassBar& bar = bars[device][{micro[id], forward[id] ? 0 : 1}];
    if (bar.ops == 0) {
      bar.micro = micro[id], bar.forward = forward[id];
      bar.start_us = span.start_us, bar.end_us = span.end_us;
    }
    bar.start_us = std::min(bar.start_us, span.start_us);
    bar.end_us = std::max(bar.end_us, span.end_us);
    ++bar.ops;
    chart.micro_batches = std::max(chart.micro_batches, micro[id] + 1);
  }
  for (const OpSpan& span : trace.ops) chart.step_us = std::max(chart.step_us, span.end_us);
  for (const TransferSpan& t : trace.transfers) chart.step_us = std::max(chart.step_us, t.end_us);
  double idle = 0;
  for (const auto& [device, passes] : bars) {
    if (static_cast<int>(chart.lanes.size()) >= max_lanes) {
      ++chart.lanes_left_out;
      continue;
    }
    ScheduleLane lane;
    lane.device = device;
    for (const auto& [key, bar] : passes) lane.bars.push_back(bar);
    std::sort(lane.bars.begin(), lane.bars.end(),
              [](const PassBar& a, const PassBar& b) { return std::tie(a.start_us, a.end_us) < std::tie(b.start_us, b.end_us); });
    lane.first_us = lane.bars.front().start_us;
    // Passes of one stage run one at a time; where a schedule overlaps two (no
    // barrier), a bar counts only past the previous one's end.
    double covered_to = lane.first_us;
    for (const PassBar& bar : lane.bars) {
      lane.busy_us += std::max(0.0, bar.end_us - std::max(bar.start_us, covered_to));
      covered_to = std::max(covered_to, bar.end_us);
      lane.last_us = std::max(lane.last_us, bar.end_us);
    }
    chart.lanes.push_back(std::move(lane));
  }
  if (!chart.lanes.empty()) {
    double first = chart.lanes.front().first_us, last = 0;
    for (const ScheduleLane& lane : chart.lanes) first = std::min(first, lane.first_us), last = std::max(last, lane.last_us);
    for (const ScheduleLane& lane : chart.lanes) idle += last > first ? 1 - lane.busy_us / (last - first) : 0;
    chart.bubble_fraction = idle / static_cast<double>(chart.lanes.size());
  }
  return chart;
}

DeviceGrid device_grid(const OpGraph& graph, const Placement& placement) {
  DeviceGrid grid;
  std::map<int, GridCell> cells;
  std::map<int, std::map<int, int>> replica_votes, rank_votes;
  for (int id = 0; id < graph.num_ops(); ++id) {
    const Op& op = graph.op(id);
    const int device = placement[id];
    GridCell& cell = cells[device];
    cell.device = device;
    ++cell.ops;
    cell.param_bytes += op.phase == Phase::kForward ? op.param_bytes : 0;
    // (Only tagged ops vote: a collective's steps carry no tags.)
    if (leading_tag(op.name, 'r') >= 0) ++replica_votes[device][leading_tag(op.name, 'r')];
    if (leading_tag(op.name, 't') >= 0) ++rank_votes[device][leading_tag(op.name, 't')];
    if (op.layer >= 0) {
      cell.first_layer = cell.first_layer < 0 ? op.layer : std::min(cell.first_layer, op.layer);
      cell.last_layer = std::max(cell.last_layer, op.layer);
    }
    if (op.name.find("embedding/") != std::string::npos && op.phase == Phase::kForward) cell.embedding = true;
    if (op.name.find("head/") != std::string::npos && op.phase == Phase::kForward) cell.head = true;
  }
  // Stage: the device's place among those of its replica and rank, by first layer
  // (a device with the embedding but no layer first, one with the head only last).
  std::map<std::pair<int, int>, std::vector<int>> columns;
  for (auto& [device, cell] : cells) {
    cell.replica = most_common(replica_votes[device], 0);
    cell.rank = most_common(rank_votes[device], 0);
    columns[{cell.replica, cell.rank}].push_back(device);
  }
  const auto key = [&](int device) {
    const GridCell& c = cells.at(device);
    const double layer = c.first_layer >= 0 ? c.first_layer : c.embedding ? -1 : 1e9;
    return std::make_pair(layer, device);
  };
  for (auto& [column, devices] : columns) {
    std::sort(devices.begin(), devices.end(), [&](int a, int b) { return key(a) < key(b); });
    for (std::size_t s = 0; s < devices.size(); ++s) cells.at(devices[s]).stage = static_cast<int>(s);
    grid.stages = std::max(grid.stages, static_cast<int>(devices.size()));
  }
  for (const auto& [device, cell] : cells) {
    grid.replicas = std::max(grid.replicas, cell.replica + 1);
    grid.ranks = std::max(grid.ranks, cell.rank + 1);
    grid.cells.push_back(cell);
  }
  return grid;
}

}  // namespace aware
