#include "core/exporters.h"

#include <cmath>
#include <sstream>

namespace aware {

using nlohmann::json;


namespace {
const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                          "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}
}  // namespace

std::string graph_to_dot(const OpGraph& graph, const Placement* placement) {
  std::ostringstream out;
  out << "digraph \"" << dot_escape(graph.name()) << "\" {\n  rankdir=TB;\n"
      << "  node [shape=box, style=filled, fontsize=10];\n";
  for (int op = 0; op < graph.num_ops(); ++op) {
    const Op& o = graph.op(op);
    const char* shape = o.phase == Phase::kForward    ? "box"
                        : o.phase == Phase::kBackward ? "ellipse"
                                                      : "diamond";
    std::string fill = "#dddddd";
    if (placement != nullptr) fill = kPalette[(*placement)[op] % 10];
    out << "  n" << op << " [label=\"" << dot_escape(o.name) << "\\n" << dot_escape(o.type)
        << "\", shape=" << shape << ", fillcolor=\"" << fill << "\"];\n";
  }
  for (const Edge& e : graph.edges()) {
    const bool cut = placement != nullptr && (*placement)[e.src] != (*placement)[e.dst];
    const double width = 1 + std::log10(1 + e.bytes / 1e6);
    out << "  n" << e.src << " -> n" << e.dst << " [penwidth=" << width
        << (cut ? ", color=red" : "") << "];\n";
  }
  out << "}\n";
  return out.str();
}

ChromeTraceWriter::ChromeTraceWriter(const OpGraph& graph, const Cluster& cluster)
    : graph_(graph), cluster_(cluster), device_events_(json::array()),
      transfer_events_(json::array()) {
  device_events_.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"args", {{"name", "devices"}}}});
  device_events_.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", 2}, {"args", {{"name", "links"}}}});
  for (int d = 0; d < cluster.num_devices(); ++d) {
    device_events_.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", d},
                              {"args", {{"name", cluster.device(d).name}}}});
  }
}

void ChromeTraceWriter::on_op(const OpSpan& s) {
  if (s.op < 0) return;
  const Op& op = graph_.op(s.op);
  device_events_.push_back({{"ph", "X"},
                            {"name", op.name},
                            {"cat", phase_name(op.phase)},
                            {"pid", 1},
                            {"tid", s.device},
                            {"ts", s.start_us},
                            {"dur", s.end_us - s.start_us},
                            {"args", {{"type", op.type}, {"flops", op.flops}}}});
}

int ChromeTraceWriter::lane_id(const std::string& lane) {
  auto [it, inserted] = lanes_.emplace(lane, static_cast<int>(lanes_.size()));
  if (inserted) {
    transfer_events_.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 2},
                                {"tid", it->second}, {"args", {{"name", lane}}}});
  }
  return it->second;
}

// A multi-hop transfer shows on every link it crosses; a bus transfer (no
// channels) on its own lane.
void ChromeTraceWriter::on_transfer(const TransferSpan& t) {
  json args = {{"bytes", t.bytes}, {"src_device", cluster_.device(t.src_device).name}};
  if (t.dst_device >= 0) args["dst_device"] = cluster_.device(t.dst_device).name;
  std::vector<std::string> span_lanes;
  for (int channel : t.channels) {
    const Link& link = cluster_.link(channel / 2);
    const int from = channel % 2 == 0 ? link.a : link.b;
    const int to = channel % 2 == 0 ? link.b : link.a;
    span_lanes.push_back(cluster_.node_name(from) + "->" + cluster_.node_name(to));
  }
  if (span_lanes.empty()) span_lanes.push_back(t.lane);
  for (const std::string& lane : span_lanes) {
    const int tid = lane_id(lane);
    transfer_events_.push_back({{"ph", "X"},
                                {"name", graph_.op(t.src_op).name + ":" + std::to_string(t.src_output)},
                                {"cat", "transfer"},
                                {"pid", 2},
                                {"tid", tid},
                                {"ts", t.start_us},
                                {"dur", t.end_us - t.start_us},
                                {"args", args}});
  }
}

json ChromeTraceWriter::document() const {
  json events = device_events_;
  for (const json& e : transfer_events_) events.push_back(e);
  return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

json trace_to_chrome(const OpGraph& graph, const Cluster& cluster, const Trace& trace) {
  ChromeTraceWriter writer(graph, cluster);
  replay_trace(trace, writer);
  return writer.document();
}

}  // namespace aware
