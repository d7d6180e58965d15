// What the timeline and the status line need from a Trace: lanes (one per
// device, one per directed link channel used, one per bus), the critical path
// of the simulated step, and a plain-words explanation of the step time.
// Plain C++ (no Qt); pure functions of their inputs, thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/graph_algorithms.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware::gui {

struct TimelineLanes {
  std::vector<std::string> names;  // devices first, then link channels, then buses
  int num_device_lanes = 0;
  std::map<int, int> lane_of_channel;      // Hop::channel -> lane
  std::map<std::string, int> lane_of_bus;  // TransferSpan::lane (no channels) -> lane
};

// Device lanes for every device of `cluster`; a lane "a→b" for each directed
// channel some transfer of `trace` uses (named from the link's end nodes); a lane
// per named bus for transfers without channels (placeto mode).
TimelineLanes timeline_lanes(const Cluster& cluster, const Trace& trace);

struct TraceCriticalPath {
  std::vector<int> ops;        // op ids, first to last
  std::vector<int> transfers;  // indices into Trace::transfers on the path
  double length_us = 0;        // end of the last op
};

// Walks back from the last-finishing op: at each op, to whatever it waited for
// last — the input that arrived last (through its transfer when it crossed
// devices) or, when the device was still busy after every input had arrived,
// the op that ran before it on the same device.
TraceCriticalPath critical_path_from_trace(const OpGraph& graph, const Placement& placement,
                                           const Trace& trace);

// One line that says why the step takes as long as it does: step time and its
// ratio to the lower bound, utilisation per device, bytes moved, and whether
// the critical path is mostly compute or communication.
std::string explain_step(const OpGraph& graph, const Cluster& cluster, const StepResult& result,
                         const LowerBound& bound, const TraceCriticalPath* path,
                         const Trace* trace);

// "12.3 ms", "850 µs", "1.20 s".
std::string format_time_us(double us);

}  // namespace aware::gui
