// INTERNAL to sim/analytic: the contention mode's step (one class over a
// prepared graph and a scratch set), its checkpoints, and the resumption a move
// uses to re-simulate only from the first round that can see the moved ops.
#pragma once

#include "core/placement.h"
#include "sim/analytic/prepared.h"

namespace aware {

class OpGraph;
class Cluster;
class StepObserver;

namespace analytic_detail {

// Sizes `s` for the prepared graph, once; later steps allocate nothing.
void size_contention_scratch(const AnalyticSimulator::Prepared& p, int num_edges,
                             ContentionScratch& s);

// One contention-mode step over a prepared graph, in named rounds: reset the
// scratch, place parameters, then alternate dispatch_ready_ops() with
// process_events_at_next_time() until nothing is left, and report the spans.
//
// Memory: parameters are summed per device first (in op order); every other
// buffer is counted in the scratch's mem_now, and the peak is the parameters
// plus the highest mem_now. (Rounding is monotone, so that equals the highest
// parameters-plus-mem_now: a resumed step can price a prefix with new
// parameter sums without re-running it.)
class ContentionRun {
 public:
  using Prepared = AnalyticSimulator::Prepared;

  ContentionRun(const Prepared& p, ContentionScratch& s, const OpGraph& graph,
                const Cluster& cluster, const std::vector<int>& placement,
                const Interference& interference, CheckpointLog* log = nullptr)
      : p_(p), s_(s), graph_(graph), cluster_(cluster), placement_(placement),
        interference_(interference), log_(log), D_(p.num_devices) {}

  // The whole step from time 0.
  StepResult run();

  // The step for this run's placement, continued from checkpoint `from` of
  // `base` (a finished run of a placement that differs from this one only in
  // ops none of whose placements were read before that checkpoint's round).
  // Returns false, having done nothing that matters, when the new parameter
  // sums could overflow a device inside the skipped prefix: that needs a full run
  // to name the op where memory first ran out.
  bool resume(const ContentionScratch& base, const ContentionCheckpoint& from, StepResult& out);

  // Reports every op span (op-id order), then every transfer (booking order);
  // after run() only (a resumed step leaves the prefix's spans unwritten).
  void report(StepObserver& observer) const;

  int rounds() const { return round_; }

 private:
  void reset_scratch();
  void sum_parameters();
  void seed_ready();
  StepResult loop();
  void save_checkpoint();
  void allocate(int device, double bytes, int op);
  void release(int op) {
    if (--s_.deps_left[op] == 0) s_.staged.push_back(op);
  }
  void dispatch_ready_ops();
  void process_events_at_next_time();
  int lane_of(int op) const { return placement_[op] + (p_.stream[op] != 0 ? D_ : 0); }
  int copy_lane(int id) const { return s_.transfers[id - p_.num_ops].dst_dev; }
  long long task_rank(int id) const {
    if (id < p_.num_ops) return 2LL * p_.topo_rank[id];
    return 2LL * p_.topo_rank[s_.transfers[id - p_.num_ops].src_op] + 1;
  }
  // The route (s, d)'s index into the prepared route arrays and the scratch's
  // route queues: s*D+d, or on sparse clusters the pair's number (new pairs are
  // numbered and their routes read from the cluster).
  size_t route_index(int src, int dst) {
    return p_.sparse_routes ? sparse_route(src, dst) : static_cast<size_t>(src) * D_ + dst;
  }
  size_t sparse_route(int src, int dst);
  // The lane may start a task at the next dispatch (it was given work or freed),
  // so that dispatch looks at it; the others cannot.
  void mark_lane(int lane) {
    if (s_.lane_mask_mode) {
      s_.pending_mask |= std::uint64_t{1} << lane;
      return;
    }
    if (s_.lane_pending[static_cast<size_t>(lane)]) return;
    s_.lane_pending[static_cast<size_t>(lane)] = 1;
    s_.pending_lanes.push_back(lane);
  }
  void queue_push(const Event& e);
  const Event& queue_top() const;
  Event queue_pop();
  void start_next_task(int lane);
  // The earliest start of a task the simulator starts now: now, or, where one
  // host issues every task (Interference::host_*), when the host has issued it
  // (it issues the tasks in the order they start, `cost` µs each).
  double issued_at(double cost) {
    if (!(cost > 0)) return now_;
    s_.host_clock += cost;
    return s_.host_clock > now_ ? s_.host_clock : now_;
  }
  void sort_staged();
  void start_copy_task(int tid, int lane);
  void finish_op(int op);
  void release_consumed_inputs(int op, int d);
  int send_outputs(int op, int d);
  void book_transfers_from(int first_new);
  void finish_transfer(int tid);

  const Prepared& p_;
  ContentionScratch& s_;
  const OpGraph& graph_;
  const Cluster& cluster_;
  const std::vector<int>& placement_;
  const Interference& interference_;
  CheckpointLog* log_;
  const int D_;
  StepResult result_;
  double now_ = 0;
  int finished_ = 0;
  int round_ = 0;
  int skip_checkpoint_round_ = -1;
};

}  // namespace analytic_detail
}  // namespace aware
