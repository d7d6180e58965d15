#include "core/step_observer.h"

#include <string>
#include <utility>

#include "core/cluster.h"
#include "core/op_graph.h"

namespace aware {

void TraceRecorder::on_step_begin(const OpGraph& graph, const Cluster&, const Placement&) {
  trace_.clear();
  trace_.ops.resize(graph.num_ops());
}

void TraceRecorder::on_op(const OpSpan& span) {
  if (span.op >= static_cast<int>(trace_.ops.size())) trace_.ops.resize(span.op + 1);
  trace_.ops[span.op] = span;
}

void TraceRecorder::on_transfer(const TransferSpan& span) { trace_.transfers.push_back(span); }

void ObserverFanout::on_step_begin(const OpGraph& graph, const Cluster& cluster,
                                   const Placement& placement) {
  for (StepObserver* o : observers_) o->on_step_begin(graph, cluster, placement);
}
void ObserverFanout::on_op(const OpSpan& span) {
  for (StepObserver* o : observers_) o->on_op(span);
}
void ObserverFanout::on_transfer(const TransferSpan& span) {
  for (StepObserver* o : observers_) o->on_transfer(span);
}
void ObserverFanout::on_step_end(const StepResult& result) {
  for (StepObserver* o : observers_) o->on_step_end(result);
}

void replay_trace(const Trace& trace, StepObserver& observer) {
  for (const OpSpan& s : trace.ops) observer.on_op(s);
  for (const TransferSpan& t : trace.transfers) observer.on_transfer(t);
}

namespace {
TransferSpan span_of(int src_op, int src_output, int src_device, int dst_device, double bytes,
                     double start_us, double end_us, std::string lane) {
  TransferSpan span;
  span.src_op = src_op;
  span.src_output = src_output;
  span.src_device = src_device;
  span.dst_device = dst_device;
  span.bytes = bytes;
  span.start_us = start_us;
  span.end_us = end_us;
  span.lane = std::move(lane);
  return span;
}
}  // namespace

TransferSpan link_transfer_span(const Cluster& cluster, int src_op, int src_output,
                                int src_device, int dst_device, double bytes, double start_us,
                                double end_us) {
  TransferSpan span =
      span_of(src_op, src_output, src_device, dst_device, bytes, start_us, end_us,
              cluster.device(src_device).name + "->" + cluster.device(dst_device).name);
  for (const Hop& hop : cluster.route(src_device, dst_device)) span.channels.push_back(hop.channel());
  return span;
}

TransferSpan bus_transfer_span(const Cluster& cluster, int src_op, int src_output,
                               int src_device, double bytes, double start_us, double end_us) {
  return span_of(src_op, src_output, src_device, -1, bytes, start_us, end_us,
                 "/bus/" + cluster.device(src_device).name);
}

}  // namespace aware
