// Exports for people and other tools: Graphviz DOT of a (placed) graph, and the
// Chrome trace-event JSON of a step (opens in Perfetto and chrome://tracing), the
// latter as a StepObserver so it can watch an evaluator directly.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "core/placement.h"
#include "core/step_observer.h"

namespace aware {

// Graphviz DOT; when `placement` is non-null, nodes are coloured by device.
std::string graph_to_dot(const OpGraph& graph, const Placement* placement = nullptr);

// Builds Chrome trace-event JSON from a step's reports: one process for devices
// (a thread per device), one for links (a thread per directed link channel, or the
// span's own lane for a bus). `graph` and `cluster` must outlive the writer.
class ChromeTraceWriter final : public StepObserver {
 public:
  ChromeTraceWriter(const OpGraph& graph, const Cluster& cluster);
  void on_op(const OpSpan& span) override;
  void on_transfer(const TransferSpan& span) override;
  // The document so far: {"traceEvents": [...], "displayTimeUnit": "ms"}.
  nlohmann::json document() const;

 private:
  int lane_id(const std::string& lane);

  const OpGraph& graph_;
  const Cluster& cluster_;
  nlohmann::json device_events_;    // metadata and op spans
  nlohmann::json transfer_events_;  // lane metadata and transfer spans
  std::map<std::string, int> lanes_;
};

// The Chrome trace of a recorded step (a ChromeTraceWriter fed by replay_trace).
nlohmann::json trace_to_chrome(const OpGraph& graph, const Cluster& cluster, const Trace& trace);

}  // namespace aware
