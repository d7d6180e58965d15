// The contention mode of the analytic simulator (see analytic_simulator.h for the
// model), its checkpoints, and resuming a step from one.
#include "sim/analytic/contention.h"

#include <algorithm>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/op_graph.h"
#include "core/step_observer.h"

namespace aware::analytic_detail {

// On clusters of up to kSortedEventDevices devices (prepared.h) the step's
// pending events (one per busy lane and per route with bookings: a handful)
// are kept sorted, latest first: cheaper than a heap at that size. Larger
// clusters, and the form with routes kept as crossed (which the tests force on
// small clusters to compare both), keep the 4-ary heap. (time, key) pairs are
// unique, so both pop the same sequence.
AWARE_HOT_INLINE void ContentionRun::queue_push(const Event& e) {
  if (s_.sorted_events) {
    sorted_push(s_.events, e);
  } else {
    heap_push(s_.events, e);
  }
}

AWARE_HOT_INLINE const Event& ContentionRun::queue_top() const {
  return s_.sorted_events ? s_.events.back() : s_.events.front();
}

AWARE_HOT_INLINE Event ContentionRun::queue_pop() {
  return s_.sorted_events ? sorted_pop(s_.events) : heap_pop(s_.events);
}

void size_contention_scratch(const AnalyticSimulator::Prepared& p, int num_edges,
                             ContentionScratch& s) {
  const int n = p.num_ops;
  const int D = p.num_devices;
  const size_t edges = static_cast<size_t>(num_edges);
  // Two lanes per device: its compute stream (lane d) and its communication
  // stream (lane D + d), each running one op at a time.
  s.fifo.assign(2 * static_cast<size_t>(D), {});
  // Room for every task on each lane where lanes are few; on many (a mesh of
  // thousands of cores) a fair share each, grown on use and kept.
  const size_t tasks = static_cast<size_t>(n) + edges;
  const size_t per_lane = D <= 64 ? tasks : tasks / static_cast<size_t>(D) * 4 + 16;
  for (auto& q : s.fifo) q.reserve(per_lane);
  s.fifo_head.assign(2 * static_cast<size_t>(D), 0);
  s.staged.reserve(n + edges);
  s.events.reserve(4 * (n + edges) + 4 * D + 16);
  s.transfers.reserve(edges + 1);
  s.deps_left.resize(n);
  s.op_refs.resize(n);
  s.edge_transfer.resize(edges);
  s.out_next.resize(edges);
  s.start_us.resize(n);
  s.end_us.resize(n);
  s.device_busy.resize(2 * static_cast<size_t>(D));
  s.lane_pending.assign(2 * static_cast<size_t>(D), 0);
  s.pending_lanes.clear();
  s.pending_lanes.reserve(2 * static_cast<size_t>(D));
  s.lane_mask_mode = 2 * D <= 64;
  s.sorted_events = D <= kSortedEventDevices && !p.sparse_routes;
  s.pending_mask = 0;
  s.channel_free_us.resize(p.num_channels);
  const size_t routes = p.sparse_routes ? 0 : static_cast<size_t>(D) * D;  // sparse: grown as routes appear
  s.route_queue.assign(routes, {});
  for (auto& q : s.route_queue) q.reserve(edges / std::max(1, D) + 1);
  s.route_head.assign(routes, 0);
  s.param_bytes.resize(D);
  s.mem_now.resize(D);
  s.peak_dynamic.resize(D);
  s.finish_round.resize(n);
}

StepResult ContentionRun::run() {
  reset_scratch();
  sum_parameters();
  seed_ready();
  return loop();
}

StepResult ContentionRun::loop() {
  for (;;) {
    if (log_ != nullptr && log_->stride > 0 && round_ % log_->stride == 0 &&
        round_ != skip_checkpoint_round_)
      save_checkpoint();
    dispatch_ready_ops();
    if (s_.events.empty()) break;
    process_events_at_next_time();
    ++round_;
  }
  AWARE_CHECK(finished_ == p_.num_ops, "every op must run once (a cycle would leave some unscheduled)");
  result_.step_time_us = now_;
  for (int d = 0; d < D_; ++d) result_.peak_memory_bytes[d] = s_.param_bytes[d] + s_.peak_dynamic[d];
  return std::move(result_);
}

void ContentionRun::report(StepObserver& observer) const {
  for (int op = 0; op < p_.num_ops; ++op)
    observer.on_op(OpSpan{op, placement_[op], s_.start_us[op], s_.end_us[op]});
  for (const Transfer& t : s_.transfers) {
    observer.on_transfer(link_transfer_span(cluster_, t.src_op, t.output, t.src_dev, t.dst_dev,
                                            t.bytes, t.start_us, t.end_us));
  }
}

size_t ContentionRun::sparse_route(int src, int dst) {
  const std::uint64_t key = static_cast<std::uint64_t>(src) * static_cast<std::uint64_t>(D_) +
                            static_cast<std::uint64_t>(dst);
  auto [it, added] = p_.route_id.emplace(key, static_cast<int>(p_.route_latency_us.size()));
  if (added) {
    for (const Hop& hop : cluster_.route(src, dst)) p_.route_channels.push_back(hop.channel());
    p_.route_begin.push_back(static_cast<int>(p_.route_channels.size()));
    p_.route_latency_us.push_back(cluster_.route_latency_us(src, dst));
    p_.route_bandwidth_Bps.push_back(cluster_.route_bandwidth_Bps(src, dst));
  }
  const size_t r = static_cast<size_t>(it->second);
  if (r >= s_.route_queue.size()) {
    s_.route_queue.resize(p_.route_latency_us.size());
    s_.route_head.resize(p_.route_latency_us.size(), 0);
  }
  return r;
}

void ContentionRun::reset_scratch() {
  result_.device_busy_us.assign(D_, 0);
  result_.peak_memory_bytes.assign(D_, 0);
  for (auto& q : s_.fifo) q.clear();
  std::fill(s_.fifo_head.begin(), s_.fifo_head.end(), 0);
  s_.staged.clear();
  s_.events.clear();
  s_.transfers.clear();
  std::fill(s_.device_busy.begin(), s_.device_busy.end(), 0);
  for (int lane : s_.pending_lanes) s_.lane_pending[static_cast<size_t>(lane)] = 0;
  s_.pending_lanes.clear();
  s_.pending_mask = 0;
  std::fill(s_.channel_free_us.begin(), s_.channel_free_us.end(), 0.0);
  for (auto& q : s_.route_queue) q.clear();
  std::fill(s_.route_head.begin(), s_.route_head.end(), 0);
  std::fill(s_.mem_now.begin(), s_.mem_now.end(), 0.0);
  std::fill(s_.peak_dynamic.begin(), s_.peak_dynamic.end(), 0.0);
  s_.host_clock = 0;
  if (log_ != nullptr) log_->used = 0;
}

// Parameters stay resident for the whole step, summed in op order; the first op
// whose parameters do not fit names the shortage.
void ContentionRun::sum_parameters() {
  std::fill(s_.param_bytes.begin(), s_.param_bytes.end(), 0.0);
  for (int op = 0; op < p_.num_ops; ++op) {
    if (!(p_.param_bytes[op] > 0)) continue;
    const int d = placement_[op];
    s_.param_bytes[d] += p_.param_bytes[op];
    if (result_.feasible && s_.param_bytes[d] > cluster_.device(d).memory_bytes) {
      result_.feasible = false;
      result_.infeasible_reason = "device '" + cluster_.device(d).name + "' out of memory at op '" +
                                  graph_.op(op).name + "': " + format_memory_shortfall(s_.param_bytes[d], cluster_.device(d).memory_bytes);
    }
  }
}

void ContentionRun::seed_ready() {
  for (int op = 0; op < p_.num_ops; ++op) {
    s_.deps_left[op] = p_.in_begin[op + 1] - p_.in_begin[op];
    if (s_.deps_left[op] == 0) s_.staged.push_back(op);
  }
}

void ContentionRun::save_checkpoint() {
  if (log_->used == static_cast<int>(log_->entries.size())) log_->entries.emplace_back();
  ContentionCheckpoint& c = log_->entries[log_->used++];
  c.round = round_;
  c.now = now_;
  c.finished = finished_;
  c.transfers = static_cast<int>(s_.transfers.size());
  c.fifo_size.resize(s_.fifo.size());
  for (size_t l = 0; l < s_.fifo.size(); ++l) c.fifo_size[l] = static_cast<int>(s_.fifo[l].size());
  c.fifo_head = s_.fifo_head;
  c.route_size.resize(s_.route_queue.size());
  for (size_t r = 0; r < s_.route_queue.size(); ++r)
    c.route_size[r] = static_cast<int>(s_.route_queue[r].size());
  c.route_head = s_.route_head;
  c.events = s_.events;
  c.staged = s_.staged;
  c.device_busy = s_.device_busy;
  c.channel_free_us = s_.channel_free_us;
  c.mem_now = s_.mem_now;
  c.peak_dynamic = s_.peak_dynamic;
  c.device_busy_us = result_.device_busy_us;
  c.bytes_moved = result_.bytes_moved;
  c.transfers_done = result_.transfers;
  c.host_clock = s_.host_clock;
  c.deps_left = s_.deps_left;
  c.op_refs = s_.op_refs;
  c.transfer_refs.resize(s_.transfers.size());
  for (size_t t = 0; t < s_.transfers.size(); ++t) c.transfer_refs[t] = s_.transfers[t].refs;
}

bool ContentionRun::resume(const ContentionScratch& base, const ContentionCheckpoint& from,
                           StepResult& out) {
  // Parameters under this placement; the prefix's buffers with them must fit
  // everywhere, or the first shortage may lie in the prefix.
  std::fill(s_.param_bytes.begin(), s_.param_bytes.end(), 0.0);
  for (int op = 0; op < p_.num_ops; ++op)
    if (p_.param_bytes[op] > 0) s_.param_bytes[placement_[op]] += p_.param_bytes[op];
  for (int d = 0; d < D_; ++d)
    if (s_.param_bytes[d] + from.peak_dynamic[d] > cluster_.device(d).memory_bytes) return false;

  round_ = from.round;
  now_ = from.now;
  finished_ = from.finished;
  result_.device_busy_us = from.device_busy_us;
  result_.peak_memory_bytes.assign(D_, 0);
  result_.bytes_moved = from.bytes_moved;
  result_.transfers = from.transfers_done;
  s_.host_clock = from.host_clock;
  for (size_t l = 0; l < s_.fifo.size(); ++l)
    s_.fifo[l].assign(base.fifo[l].begin(), base.fifo[l].begin() + from.fifo_size[l]);
  s_.fifo_head = from.fifo_head;
  for (size_t r = 0; r < s_.route_queue.size(); ++r)
    s_.route_queue[r].assign(base.route_queue[r].begin(), base.route_queue[r].begin() + from.route_size[r]);
  s_.route_head = from.route_head;
  s_.events = from.events;
  s_.staged = from.staged;
  s_.transfers.assign(base.transfers.begin(), base.transfers.begin() + from.transfers);
  for (int t = 0; t < from.transfers; ++t) s_.transfers[t].refs = from.transfer_refs[t];
  s_.device_busy = from.device_busy;
  s_.channel_free_us = from.channel_free_us;
  s_.mem_now = from.mem_now;
  s_.peak_dynamic = from.peak_dynamic;
  s_.deps_left = from.deps_left;
  s_.op_refs = from.op_refs;
  // Written once per step: the prefix's entries are the base's.
  s_.edge_transfer = base.edge_transfer;
  s_.out_next = base.out_next;
  s_.finish_round = base.finish_round;
  if (log_ != nullptr) log_->used = 0;
  skip_checkpoint_round_ = from.round;  // `from` itself is that round's checkpoint
  // The lanes the base had listed are not kept: every lane is looked at once.
  s_.pending_lanes.clear();
  s_.pending_mask = 0;
  for (int lane = 0; lane < 2 * D_; ++lane) {
    s_.lane_pending[static_cast<size_t>(lane)] = 0;
    mark_lane(lane);
  }
  out = loop();
  return true;
}

AWARE_HOT_INLINE void ContentionRun::allocate(int device, double bytes, int op) {
  double& now = s_.mem_now[device];
  now += bytes;
  if (now > s_.peak_dynamic[device]) s_.peak_dynamic[device] = now;
  if (result_.feasible) {
    const double total = s_.param_bytes[device] + now;
    if (total > cluster_.device(device).memory_bytes) {
      result_.feasible = false;
      result_.infeasible_reason = "device '" + cluster_.device(device).name +
                                  "' out of memory at op '" + graph_.op(op).name + "': " +
                                  format_memory_shortfall(total, cluster_.device(device).memory_bytes);
    }
  }
}

// The lane starts its next queued task if it is idle and has one.
AWARE_HOT_INLINE void ContentionRun::start_next_task(int lane) {
  if (s_.device_busy[lane] || s_.fifo_head[lane] == static_cast<int>(s_.fifo[lane].size())) return;
  const int d = lane % D_;
  if (interference_.rank_queue) {  // the lowest rank queued comes to the head
    auto& queue = s_.fifo[lane];
    const int head = s_.fifo_head[lane];
    int best = head;
    for (int i = head + 1; i < static_cast<int>(queue.size()); ++i)
      if (task_rank(queue[i]) < task_rank(queue[best])) best = i;
    std::swap(queue[head], queue[best]);
  }
  const int id = s_.fifo[lane][s_.fifo_head[lane]++];
  if (id >= p_.num_ops) {
    start_copy_task(id - p_.num_ops, lane);
    return;
  }
  const int op = id;
  double cost = p_.costs.time_us(op, d);
  if (p_.slows && D_ > 1) {
    int others_busy = 0;
    for (int o = 0; o < D_; ++o) others_busy += o != d && s_.device_busy[o];
    const double slowdown = p_.slowdown[static_cast<size_t>(op) * p_.costs.num_classes() + p_.costs.device_class(d)];
    cost *= 1 + (slowdown - 1) * others_busy / (D_ - 1);
  }
  s_.device_busy[lane] = 1;
  const double start = issued_at(interference_.host_op_us);
  s_.start_us[op] = start;
  s_.end_us[op] = start + cost;
  result_.device_busy_us[d] += cost;
  allocate(d, p_.out_total_bytes[op] + p_.temp_bytes[op], op);
  queue_push(Event{start + cost, Prepared::pack(0, 0, static_cast<std::uint64_t>(op))});
}

// The tasks made ready in this round in (topological rank, id) order: a few at
// a time, so an insertion sort (the keys are distinct, so any sort gives this order).
AWARE_HOT_INLINE void ContentionRun::sort_staged() {
  auto& v = s_.staged;
  const size_t n = v.size();
  if (n < 2) return;
  auto before = [&](int x, int y) {
    const long long rx = task_rank(x), ry = task_rank(y);
    return rx != ry ? rx < ry : x < y;  // two copies of one producer: booking order
  };
  if (n > 16) {
    std::sort(v.begin(), v.end(), before);
    return;
  }
  for (size_t i = 1; i < n; ++i) {
    const int x = v[i];
    size_t j = i;
    for (; j > 0 && before(x, v[j - 1]); --j) v[j] = v[j - 1];
    v[j] = x;
  }
}

// Ops made ready in this round join their device's queue in topological order.
// Ready times never decrease, so each queue stays ordered by (ready time,
// topological rank) without a heap. Then every idle device starts its next op.
//
// With copies on the consumer, a staged id of num_ops + t is transfer t's copy
// task, ranked just after its producer.
AWARE_HOT_INLINE void ContentionRun::dispatch_ready_ops() {
  sort_staged();
  for (int id : s_.staged) {
    const int lane = id < p_.num_ops ? lane_of(id) : copy_lane(id);
    s_.fifo[lane].push_back(id);
    mark_lane(lane);
  }
  s_.staged.clear();
  // Each idle lane with work starts its next task, in lane order. After a
  // dispatch no idle lane has work left, so only the lanes given work or freed
  // since the last one can start: those are looked at, in ascending order (what
  // a scan of every lane would do, without the scan: a 4,096-core mesh has
  // 8,192 lanes). Up to 64 lanes they are the bits of one word.
  if (s_.lane_mask_mode) {
    for (std::uint64_t mask = s_.pending_mask; mask != 0; mask &= mask - 1)
      start_next_task(__builtin_ctzll(mask));
    s_.pending_mask = 0;
    return;
  }
  std::sort(s_.pending_lanes.begin(), s_.pending_lanes.end());
  for (const int lane : s_.pending_lanes) {
    s_.lane_pending[static_cast<size_t>(lane)] = 0;
    start_next_task(lane);
  }
  s_.pending_lanes.clear();
}

// Every event at the earliest time is processed before dispatching again, so
// ops made ready at the same instant compete by topological rank.
AWARE_HOT_INLINE void ContentionRun::process_events_at_next_time() {
  now_ = queue_top().time;
  while (!s_.events.empty() && queue_top().time == now_) {
    const Event ev = queue_pop();
    const int id = Prepared::second_of(ev.key);
    if (Prepared::kind_of(ev.key) == 0) {
      finish_op(id);
    } else {
      finish_transfer(id);
    }
  }
}

// The copy starts now on its destination's compute stream (slowed like a
// memory-bound op while other devices are busy).
void ContentionRun::start_copy_task(int tid, int lane) {
  Transfer& t = s_.transfers[tid];
  const size_t r = static_cast<size_t>(t.route);
  double cost = p_.route_latency_us[r] + t.bytes / p_.route_bandwidth_Bps[r] * 1e6;
  if (interference_.slows() && D_ > 1) {
    int others_busy = 0;
    for (int o = 0; o < D_; ++o) others_busy += o != t.dst_dev && s_.device_busy[o];
    const double slowdown = t.bytes >= interference_.memory_from_bytes ? interference_.memory : interference_.compute;
    cost *= 1 + (slowdown - 1) * others_busy / (D_ - 1);
  }
  s_.device_busy[lane] = 1;
  t.start_us = issued_at(interference_.host_copy_us);
  t.end_us = t.start_us + cost;
  result_.device_busy_us[t.dst_dev] += cost;
  queue_push(Event{t.end_us, Prepared::pack(1, 0, static_cast<std::uint64_t>(tid))});
}

AWARE_HOT_INLINE void ContentionRun::finish_op(int op) {
  const int d = placement_[op];
  s_.device_busy[lane_of(op)] = 0;
  mark_lane(lane_of(op));
  s_.finish_round[op] = round_;
  ++finished_;
  s_.mem_now[d] -= p_.temp_bytes[op];
  release_consumed_inputs(op, d);
  const int first_new = static_cast<int>(s_.transfers.size());
  const int refs = send_outputs(op, d);
  book_transfers_from(first_new);
  s_.op_refs[op] = refs;
  if (refs == 0) s_.mem_now[d] -= p_.out_total_bytes[op];
}

// `op`'s inputs are consumed: release the buffers it was holding.
AWARE_HOT_INLINE void ContentionRun::release_consumed_inputs(int op, int d) {
  for (int i = p_.in_begin[op]; i < p_.in_begin[op + 1]; ++i) {
    const int src = p_.in_src[i];
    if (placement_[src] == d) {
      if (--s_.op_refs[src] == 0) s_.mem_now[d] -= p_.out_total_bytes[src];
    } else {
      Transfer& t = s_.transfers[s_.edge_transfer[i]];
      if (--t.refs == 0) s_.mem_now[d] -= t.bytes;
    }
  }
}

// Same-device consumers are released now; each (output, device) pair elsewhere
// gets one transfer. Returns how many holders keep `op`'s outputs alive.
AWARE_HOT_INLINE int ContentionRun::send_outputs(int op, int d) {
  int refs = 0;
  const int first_new = static_cast<int>(s_.transfers.size());
  for (int i = p_.out_begin[op]; i < p_.out_begin[op + 1]; ++i) {
    const int dst = p_.out_dst[i];
    const int dst_dev = placement_[dst];
    if (dst_dev == d) {
      ++refs;
      release(dst);
      continue;
    }
    const int output = p_.out_output[i];
    int tid = -1;
    for (int t = first_new; t < static_cast<int>(s_.transfers.size()); ++t) {
      if (s_.transfers[t].output == output && s_.transfers[t].dst_dev == dst_dev) {
        tid = t;
        break;
      }
    }
    if (tid < 0) {
      tid = static_cast<int>(s_.transfers.size());
      s_.transfers.push_back(Transfer{op, output, d, dst_dev, p_.out_bytes[i], now_, 0, 0, 0,
                                      static_cast<int>(route_index(d, dst_dev))});
      ++refs;
    }
    Transfer& t = s_.transfers[tid];
    t.bytes = std::max(t.bytes, p_.out_bytes[i]);
    ++t.refs;
    s_.edge_transfer[p_.out_in_row[i]] = tid;
    // The transfer's consumers, linked (newest first): its arrival releases just
    // these, without a scan of the producer's out-edges. Staged ops are sorted
    // before they are queued, so the order they are released in does not matter.
    s_.out_next[i] = t.first_out;
    t.first_out = i;
  }
  return refs;
}

// Books the new transfers on their routes, first come first served: each starts
// once every channel of its route is free of earlier bookings.
// With copies on the consumer, each becomes a task on its destination instead.
AWARE_HOT_INLINE void ContentionRun::book_transfers_from(int first_new) {
  for (int tid = first_new; tid < static_cast<int>(s_.transfers.size()); ++tid) {
    Transfer& t = s_.transfers[tid];
    if (interference_.copies_on_consumer) {
      allocate(t.dst_dev, t.bytes, t.src_op);
      s_.staged.push_back(p_.num_ops + tid);
      continue;
    }
    const size_t r = static_cast<size_t>(t.route);
    double start = issued_at(interference_.host_copy_us);
    for (int c = p_.route_begin[r]; c < p_.route_begin[r + 1]; ++c)
      start = std::max(start, s_.channel_free_us[p_.route_channels[c]]);
    t.start_us = start;
    t.end_us = start + p_.route_latency_us[r] + t.bytes / p_.route_bandwidth_Bps[r] * 1e6;
    for (int c = p_.route_begin[r]; c < p_.route_begin[r + 1]; ++c)
      s_.channel_free_us[p_.route_channels[c]] = t.end_us;
    // The receiving buffer is reserved from the request on (conservative).
    allocate(t.dst_dev, t.bytes, t.src_op);
    // Bookings on one route end in order, so only each route's oldest transfer
    // sits in the event heap; that keeps the heap tiny.
    auto& queue = s_.route_queue[r];
    if (s_.route_head[r] == static_cast<int>(queue.size()))
      queue_push(Event{t.end_us, Prepared::pack(1, 0, static_cast<std::uint64_t>(tid))});
    queue.push_back(tid);
  }
}

// A transfer arrived: the route's next booking enters the event heap, the
// sender's buffer may be freed, and its consumers on the destination are released.
AWARE_HOT_INLINE void ContentionRun::finish_transfer(int tid) {
  const Transfer& t = s_.transfers[tid];
  if (interference_.copies_on_consumer) {
    s_.device_busy[t.dst_dev] = 0;  // the consumer's compute stream is free again
    mark_lane(t.dst_dev);
  } else {
    const size_t r = static_cast<size_t>(t.route);
    const int next = ++s_.route_head[r];
    if (next < static_cast<int>(s_.route_queue[r].size())) {
      const int queued = s_.route_queue[r][next];
      queue_push(Event{s_.transfers[queued].end_us, Prepared::pack(1, 0, static_cast<std::uint64_t>(queued))});
    }
  }
  result_.bytes_moved += t.bytes;
  ++result_.transfers;
  if (--s_.op_refs[t.src_op] == 0) s_.mem_now[t.src_dev] -= p_.out_total_bytes[t.src_op];
  for (int i = t.first_out; i >= 0; i = s_.out_next[i]) release(p_.out_dst[i]);
}

}  // namespace aware::analytic_detail
