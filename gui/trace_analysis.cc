#include "gui/trace_analysis.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "core/units.h"

namespace aware::gui {

TimelineLanes timeline_lanes(const Cluster& cluster, const Trace& trace) {
  TimelineLanes lanes;
  for (const auto& d : cluster.devices()) lanes.names.push_back(d.name);
  lanes.num_device_lanes = cluster.num_devices();
  std::set<int> channels;
  std::set<std::string> buses;
  for (const auto& t : trace.transfers) {
    if (t.channels.empty()) {
      std::string bus = t.lane;
      if (bus.empty() && t.src_device >= 0 && t.src_device < cluster.num_devices())
        bus = "bus " + cluster.device(t.src_device).name;
      buses.insert(bus);
    }
    for (int c : t.channels) channels.insert(c);
  }
  for (int c : channels) {
    std::string name = "channel " + std::to_string(c);
    const int link = c / 2;
    if (link >= 0 && link < cluster.num_links()) {
      const Link& l = cluster.link(link);
      const int from = c % 2 == 0 ? l.a : l.b;
      const int to = c % 2 == 0 ? l.b : l.a;
      name = cluster.node_name(from) + "→" + cluster.node_name(to);
    }
    lanes.lane_of_channel[c] = static_cast<int>(lanes.names.size());
    lanes.names.push_back(name);
  }
  for (const auto& b : buses) {
    lanes.lane_of_bus[b] = static_cast<int>(lanes.names.size());
    lanes.names.push_back(b);
  }
  return lanes;
}

TraceCriticalPath critical_path_from_trace(const OpGraph& graph, const Placement& placement,
                                           const Trace& trace) {
  TraceCriticalPath path;
  const int n = graph.num_ops();
  std::vector<int> span_of(n, -1);
  for (int i = 0; i < static_cast<int>(trace.ops.size()); ++i) {
    const int op = trace.ops[i].op;
    if (op >= 0 && op < n) span_of[op] = i;
  }
  // Ops in start order per device, to find who ran before whom.
  std::map<int, std::vector<int>> by_device;
  for (int i = 0; i < static_cast<int>(trace.ops.size()); ++i)
    by_device[trace.ops[i].device].push_back(i);
  std::vector<int> device_before(trace.ops.size(), -1);
  for (auto& [device, spans] : by_device) {
    std::stable_sort(spans.begin(), spans.end(),
                     [&](int a, int b) { return trace.ops[a].start_us < trace.ops[b].start_us; });
    for (std::size_t k = 1; k < spans.size(); ++k) device_before[spans[k]] = spans[k - 1];
  }
  std::multimap<int, int> transfers_of;  // src_op -> transfer index
  for (int t = 0; t < static_cast<int>(trace.transfers.size()); ++t)
    transfers_of.emplace(trace.transfers[t].src_op, t);

  int current = -1;
  for (int i = 0; i < static_cast<int>(trace.ops.size()); ++i)
    if (current < 0 || trace.ops[i].end_us > trace.ops[current].end_us) current = i;
  if (current < 0) return path;
  path.length_us = trace.ops[current].end_us;

  constexpr double kEps = 1e-6;
  std::vector<char> seen(trace.ops.size(), 0);
  while (current >= 0 && !seen[current]) {
    seen[current] = 1;
    const OpSpan& span = trace.ops[current];
    path.ops.push_back(span.op);
    double best_arrival = -1;
    int best_span = -1, best_transfer = -1;
    for (int e : graph.in_edges(span.op)) {
      const Edge& edge = graph.edge(e);
      const int src_span = span_of[edge.src];
      if (src_span < 0) continue;
      double arrival = trace.ops[src_span].end_us;
      int via = -1;
      const int src_device =
          edge.src < placement.size() ? placement[edge.src] : trace.ops[src_span].device;
      if (src_device != span.device) {
        auto [lo, hi] = transfers_of.equal_range(edge.src);
        for (auto it = lo; it != hi; ++it) {
          const TransferSpan& t = trace.transfers[it->second];
          if (t.src_output != edge.src_output) continue;
          if (t.dst_device != span.device && t.dst_device != -1) continue;
          if (via < 0 || t.end_us > arrival) {
            arrival = t.end_us;
            via = it->second;
          }
        }
      }
      if (arrival > best_arrival) {
        best_arrival = arrival;
        best_span = src_span;
        best_transfer = via;
      }
    }
    const int before = device_before[current];
    if (before >= 0 && trace.ops[before].end_us > best_arrival + kEps &&
        trace.ops[before].end_us <= span.start_us + kEps) {
      current = before;  // the device was busy: the op waited for its turn
    } else {
      if (best_transfer >= 0) path.transfers.push_back(best_transfer);
      current = best_span;
    }
  }
  std::reverse(path.ops.begin(), path.ops.end());
  std::reverse(path.transfers.begin(), path.transfers.end());
  return path;
}

std::string format_time_us(double us) {
  char buf[64];
  if (us < 0) return "–";
  if (us >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f s", us / 1e6);
  else if (us >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1f ms", us / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f µs", us);
  return buf;
}

std::string explain_step(const OpGraph& graph, const Cluster& cluster, const StepResult& result,
                         const LowerBound& bound, const TraceCriticalPath* path,
                         const Trace* trace) {
  std::ostringstream out;
  if (!result.feasible) {
    out << "infeasible: " << result.infeasible_reason;
    return out.str();
  }
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f",
                result.step_time_us / std::max(bound.bound_us(), 1e-9));
  out << "step " << format_time_us(result.step_time_us) << " = " << ratio << "× lower bound "
      << format_time_us(bound.bound_us())
      << (bound.critical_path_us >= bound.work_us ? " (critical path)" : " (total work)");
  out << " · busy";
  for (int d = 0; d < static_cast<int>(result.device_busy_us.size()) && d < cluster.num_devices();
       ++d) {
    const double util =
        result.step_time_us > 0 ? result.device_busy_us[d] / result.step_time_us : 0;
    out << " " << cluster.device(d).name << " " << static_cast<int>(util * 100 + 0.5) << "%";
  }
  // Collectives on a device's communication stream run beside its compute, and
  // both count as busy.
  for (int d = 0; d < static_cast<int>(result.device_busy_us.size()); ++d) {
    if (result.device_busy_us[d] > result.step_time_us * (1 + 1e-9)) {
      out << " (compute and communication streams together)";
      break;
    }
  }
  out << " · " << format_bytes(result.bytes_moved, BytesStyle::kCompact) << " moved in "
      << result.transfers << " transfers";
  if (path != nullptr && trace != nullptr && !path->ops.empty()) {
    double compute = 0, comm = 0;
    std::vector<double> duration(graph.num_ops(), 0);
    for (const auto& s : trace->ops)
      if (s.op >= 0 && s.op < graph.num_ops()) duration[s.op] = s.end_us - s.start_us;
    for (int op : path->ops) compute += duration[op];
    for (int t : path->transfers) comm += trace->transfers[t].end_us - trace->transfers[t].start_us;
    const double rest = std::max(0.0, path->length_us - compute - comm);
    out << " · critical path " << path->ops.size() << " ops: compute " << format_time_us(compute)
        << ", transfers " << format_time_us(comm) << ", waiting " << format_time_us(rest);
  }
  return out.str();
}

}  // namespace aware::gui
