// The step observer: what an evaluator reports while it simulates or runs one
// training step (each op's span on its device, each transfer's span on its
// lanes). The Trace, the Chrome trace export and the GUI timeline are observers
// of it, so that one place (TraceRecorder) fills trace records for every
// evaluator.
//
// Evaluators call on_op / on_transfer only; Evaluator::evaluate_observed() calls
// on_step_begin before the step and on_step_end after it. Calls come from the
// thread that called evaluate; an observer is used by one step at a time.
#pragma once

#include <vector>


#include "core/placement.h"

namespace aware {

class OpGraph;
class Cluster;

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void on_step_begin(const OpGraph& graph, const Cluster& cluster,
                             const Placement& placement) {
    (void)graph;
    (void)cluster;
    (void)placement;
  }
  // One op ran on `span.device` from start_us to end_us (µs from the step's start).
  virtual void on_op(const OpSpan& span) = 0;
  // One output crossed between devices (or over a bus, dst_device -1).
  virtual void on_transfer(const TransferSpan& span) = 0;
  virtual void on_step_end(const StepResult& result) { (void)result; }
};

// Fills a Trace: ops in op-id order (one per op), transfers in report order.
// `trace` must outlive the recorder.
class TraceRecorder final : public StepObserver {
 public:
  explicit TraceRecorder(Trace& trace) : trace_(trace) {}
  void on_step_begin(const OpGraph& graph, const Cluster& cluster,
                     const Placement& placement) override;
  void on_op(const OpSpan& span) override;
  void on_transfer(const TransferSpan& span) override;

 private:
  Trace& trace_;
};

// Passes every call to each observer added, in order. Does not own them.
class ObserverFanout final : public StepObserver {
 public:
  void add(StepObserver* observer) { observers_.push_back(observer); }
  void on_step_begin(const OpGraph& graph, const Cluster& cluster,
                     const Placement& placement) override;
  void on_op(const OpSpan& span) override;
  void on_transfer(const TransferSpan& span) override;
  void on_step_end(const StepResult& result) override;

 private:
  std::vector<StepObserver*> observers_;
};

// Reports a recorded trace to `observer` as the evaluator did: every op span in
// op-id order, then every transfer (used where a trace crosses a process
// boundary, e.g. the SimGrid workers, and by the exporters).
void replay_trace(const Trace& trace, StepObserver& observer);

// The span of a transfer over the point-to-point links of `cluster` from
// `src_device` to `dst_device`: its route's channels and a "src->dst" lane.
TransferSpan link_transfer_span(const Cluster& cluster, int src_op, int src_output,
                                int src_device, int dst_device, double bytes, double start_us,
                                double end_us);
// The span of a transfer on `src_device`'s shared bus (Placeto's model): no
// destination, no channels, lane "/bus/<device>".
TransferSpan bus_transfer_span(const Cluster& cluster, int src_op, int src_output,
                               int src_device, double bytes, double start_us, double end_us);

}  // namespace aware
