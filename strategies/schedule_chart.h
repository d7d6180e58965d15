// What a pipelined or 3-D step looks like, read back from the rewritten step and
// its simulated trace, for the GUI's pipeline and grid views (and anyone who
// wants the numbers): no Qt here.
//
//  - schedule_chart: one lane per device of the first replica, one bar per pass
//    (a micro-batch's forward or backward ops on that device's compute stream,
//    from its first op's start to its last op's end), so that the schedule's
//    order and its bubbles (the gaps) show;
//  - device_grid: where each device sits in the dp x pp x tp grid (its replica,
//    its stage, its tensor-parallel rank), the layers it holds and its share of
//    the weights.
//
// Both read the names the rewrites give (docs/strategies.md): "r{R}/" for a
// data-parallel replica, "m{M}/" for a micro-batch (also after "recompute/"),
// "t{T}/" for a tensor-parallel rank, and Op::layer for the layer.
#pragma once

#include <string>
#include <vector>

#include "core/op_graph.h"
#include "core/placement.h"

namespace aware {

struct PassBar {
  int micro = 0;
  bool forward = true;
  double start_us = 0, end_us = 0;
  int ops = 0;
};

struct ScheduleLane {
  int device = -1;
  std::vector<PassBar> bars;  // by start
  double busy_us = 0;         // the bars' total length
  double first_us = 0, last_us = 0;  // the first bar's start, the last bar's end
};

struct ScheduleChart {
  std::vector<ScheduleLane> lanes;  // devices in order
  int micro_batches = 0;
  double step_us = 0;
  // Of the lanes' span from the earliest first bar to the latest last bar, the
  // share no bar covers, averaged over the lanes: the pipeline's bubble (with
  // whatever else keeps a device from its passes).
  double bubble_fraction = 0;
  int lanes_left_out = 0;  // devices past max_lanes
};

// The micro-batch an op belongs to (-1: none, e.g. a variable or an update) and
// its data-parallel replica (0 without an "r" tag), from its name.
int micro_of_name(const std::string& name);
int replica_of_name(const std::string& name);
int rank_of_name(const std::string& name);  // the tensor-parallel rank; 0 without a "t" tag

// Empty lanes when the step has no micro-batch tags (not a pipeline or 3d rewrite).
// An op runs in the forward pass when it is a forward op or feeds one of its own
// micro-batch (the tensor-parallel rewrite's collective steps are labelled
// backward), as the pipeline rewrite's barriers see it.
ScheduleChart schedule_chart(const OpGraph& graph, const Placement& placement, const Trace& trace,
                             int max_lanes = 64);

struct GridCell {
  int device = -1;
  int replica = 0, stage = 0, rank = 0;
  int first_layer = -1, last_layer = -1;  // -1: no layer's ops (embeddings, head only)
  bool embedding = false, head = false;   // holds the embedding's or the output layer's ops
  double param_bytes = 0;                 // the weights it holds
  int ops = 0;
};

struct DeviceGrid {
  int replicas = 0, stages = 0, ranks = 0;
  std::vector<GridCell> cells;  // devices with ops, in device order
};

// Stages are numbered within each (replica, rank) by the devices' first layer.
DeviceGrid device_grid(const OpGraph& graph, const Placement& placement);

}  // namespace aware
