// The Placeto-compatible mode of the analytic simulator (docs/simulators.md).
#include <algorithm>
#include <limits>
#include <numeric>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/op_graph.h"
#include "core/step_observer.h"
#include "sim/analytic/analytic_simulator.h"
#include "sim/analytic/prepared.h"

namespace aware {

using namespace analytic_detail;

namespace {

using Prepared = AnalyticSimulator::Prepared;

// Up to this many devices the by-end sweep walks every device's run order at
// each instant; beyond, the sorted sweep is used.
constexpr int kMergeDevices = 16;

// Memory: an op's outputs are held on its device from its start until its last
// child ends (or its own end when it has none); at one instant frees come before
// allocations. The peaks are the highest totals.
//
// The general sweep: changes in (time, signed bytes) order. Ops started in time
// order, so the allocations need sorting only within a tie.
void sweep_memory_sorted(Prepared& p, const Placement& placement, StepResult& result) {
  const int n = p.num_ops;
  using Sweep = Prepared::SweepEntry;
  auto sweep_before = [](const Sweep& x, const Sweep& y) {
    return x.time != y.time ? x.time < y.time : x.bytes < y.bytes;
  };
  for (size_t i = 0; i < p.mem_allocs.size();) {
    size_t j = i + 1;
    while (j < p.mem_allocs.size() && p.mem_allocs[j].time == p.mem_allocs[i].time) ++j;
    if (j - i > 1) std::sort(p.mem_allocs.begin() + i, p.mem_allocs.begin() + j, sweep_before);
    i = j;
  }
  p.mem_frees.clear();
  for (int op = 0; op < n; ++op) {
    const double bytes = p.out_total_bytes[op];
    if (bytes <= 0) continue;
    double until = p.end_us[op];
    for (int c = p.child_begin[op]; c < p.child_begin[op + 1]; ++c)
      until = std::max(until, p.end_us[p.children[c].op]);
    p.mem_frees.push_back({until, -bytes, placement[op]});
  }
  std::sort(p.mem_frees.begin(), p.mem_frees.end(), sweep_before);
  std::fill(p.mem_now.begin(), p.mem_now.end(), 0.0);
  auto apply = [&](const Sweep& e) {
    p.mem_now[e.device] += e.bytes;
    result.peak_memory_bytes[e.device] = std::max(result.peak_memory_bytes[e.device], p.mem_now[e.device]);
  };
  size_t a = 0, f = 0;
  while (a < p.mem_allocs.size() || f < p.mem_frees.size()) {
    if (f == p.mem_frees.size() || (a < p.mem_allocs.size() && sweep_before(p.mem_allocs[a], p.mem_frees[f]))) {
      apply(p.mem_allocs[a++]);
    } else {
      apply(p.mem_frees[f++]);
    }
  }
}

// With whole byte counts (summing below 2^53) every partial total is exact, so
// the order of changes within an instant cannot change a peak, and no sort is
// needed. Each buffer is freed at the end of its latest consumer, so it is
// listed under that op. A device runs its ops one after another, so their ends
// are in order: before the allocations of each instant, every device releases
// the buffers listed under its ops that ended by then, in the order they ran.
void sweep_memory_by_end(Prepared& p, const Placement& placement, StepResult& result) {
  const int n = p.num_ops;
  const int D = p.num_devices;
  std::fill(p.freed_first.begin(), p.freed_first.end(), -1);
  for (int op = 0; op < n; ++op) {
    if (p.out_total_bytes[op] <= 0) continue;
    int until = op;
    for (int c = p.child_begin[op]; c < p.child_begin[op + 1]; ++c)
      if (p.end_us[p.children[c].op] > p.end_us[until]) until = p.children[c].op;
    p.freed_next[op] = p.freed_first[until];
    p.freed_first[until] = op;
  }
  const double never = std::numeric_limits<double>::infinity();
  const int* next[kMergeDevices];
  const int* stop[kMergeDevices];
  double next_end[kMergeDevices];
  for (int d = 0; d < D; ++d) {
    next[d] = p.ran[d].data();
    stop[d] = next[d] + p.ran[d].size();
    next_end[d] = next[d] < stop[d] ? p.end_us[*next[d]] : never;
  }
  std::fill(p.mem_now.begin(), p.mem_now.end(), 0.0);
  double earliest = D > 0 ? *std::min_element(next_end, next_end + D) : never;  // the next end on any device
  for (const Prepared::SweepEntry& alloc : p.mem_allocs) {
    if (earliest <= alloc.time) {
      earliest = never;
      for (int d = 0; d < D; ++d) {
        while (next_end[d] <= alloc.time) {
          for (int b = p.freed_first[*next[d]]; b >= 0; b = p.freed_next[b])
            p.mem_now[placement[b]] -= p.out_total_bytes[b];
          ++next[d];
          next_end[d] = next[d] < stop[d] ? p.end_us[*next[d]] : never;
        }
        earliest = std::min(earliest, next_end[d]);
      }
    }
    double& held = p.mem_now[alloc.device];
    held += alloc.bytes;
    result.peak_memory_bytes[alloc.device] = std::max(result.peak_memory_bytes[alloc.device], held);
  }
}

}  // namespace

StepResult AnalyticSimulator::run_placeto(const OpGraph& /*graph*/, const Cluster& cluster,
                                          const Placement& placement, StepObserver* observer) {
  Prepared& p = *prepared_;
  using ReadyEntry = Prepared::ReadyEntry;
  using Event = Prepared::Event;
  enum { kRemoveDependency = 0, kRunBus = 1, kRunDevice = 2 };
  const int n = p.num_ops;
  const int D = p.num_devices;
  const PlacetoConstants& k = constants_;
  StepResult result;
  result.device_busy_us.assign(D, 0);
  result.peak_memory_bytes.assign(D, 0);

  for (auto& q : p.ready) q.clear();
  for (auto& q : p.bus) q.clear();
  for (auto& q : p.sources) q.clear();
  std::fill(p.bus_head.begin(), p.bus_head.end(), 0);
  std::fill(p.source_head.begin(), p.source_head.end(), 0);
  for (auto& r : p.ran) r.clear();
  p.events.clear();
  p.transfers.clear();
  p.mem_allocs.clear();
  std::fill(p.device_free_us.begin(), p.device_free_us.end(), k.init_offset_us);
  std::fill(p.bus_free_us.begin(), p.bus_free_us.end(), k.init_offset_us);
  std::fill(p.start_us.begin(), p.start_us.end(), -1.0);
  // Placeto's simulator queues one event per dependency, device and bus and
  // pops them by (time, kind, first name rank, second name rank); a device (bus)
  // event runs the device's (bus's) first ready op (transfer) if it is free.
  // Here nothing is queued that would do nothing:
  //  - A device or bus can only work at max(the time it is free, its first
  //    entry's time), and Placeto's simulator always has an event then: one
  //    is pushed whenever a device or bus becomes free, and whenever an entry
  //    arrives while it is free. So each device and bus keeps that one time
  //    (`slot`, +inf with nothing queued) and an event for it; an event whose
  //    time is no longer its slot's is stale and skipped.
  //  - Only a child's last dependency to pop does anything. A pushed event
  //    smaller than the one being processed (same time, lower kind: after a
  //    zero-length op or transfer) pops right after it, so a dependency pushed
  //    before and smaller than the current event has already popped; otherwise
  //    the larger pops later. Each child keeps the one that pops last of those
  //    pushed so far, and its last push sends the child to its ready queue with
  //    the place that dependency would have popped in as its key:
  //  - Dependencies due at time T that were pushed before T pop first among T's
  //    events, in key order. One pushed at T itself (by a device or bus event)
  //    pops right after that event, before the next device or bus event: its
  //    key is that event's sequence number, then the child's name rank (the
  //    parent is the event's own op). Sources take their op order as key, below
  //    every dependency's.
  //  - The step ends at the last event Placeto's simulator pops: the latest
  //    time a device or bus became free.
  //  - A bus's entries arrive in order: its device's ops end in the order they
  //    ran, so the bus queue is a list. So are a device's sources (all due at the
  //    start, in op order, before any dependency due then); the other ready ops
  //    are in a heap.
  auto slot_of_device = [&](int d) { return D + p.device_name_rank[d]; };  // buses first: kind order
  // A few events per device: on small clusters a sorted vector (prepared.h).
  // Equal (time, key) entries are equal values, so every queue pops the same.
  const bool sorted_events = D <= kSortedEventDevices;
  const double never = std::numeric_limits<double>::infinity();
  auto reschedule = [&](int slot, int d, double free_us, double first_due) {
    const double t = first_due == never ? never : std::max(free_us, first_due);
    if (t == p.slot_time[slot]) return;
    p.slot_time[slot] = t;
    if (t != never) {
      const int kind = slot < D ? kRunBus : kRunDevice;
      const Event e{t, Prepared::pack(kind, p.device_name_rank[d], 0)};
      if (sorted_events) {
        sorted_push(p.events, e);
      } else {
        heap_push(p.events, e);
      }
    }
  };
  auto reschedule_device = [&](int d) {
    const double first_due = p.source_head[d] < static_cast<int>(p.sources[d].size()) ? k.init_offset_us
                             : p.ready[d].empty()                                   ? never
                                                                                    : p.ready[d].front().time;
    reschedule(slot_of_device(d), d, p.device_free_us[d], first_due);
  };
  auto reschedule_bus = [&](int d) {
    const double first_due = p.bus_head[d] < static_cast<int>(p.bus[d].size()) ? p.bus[d][p.bus_head[d]].time : never;
    reschedule(p.device_name_rank[d], d, p.bus_free_us[d], first_due);
  };
  Event current{0, 0};         // the event being processed
  std::uint64_t sequence = 0;  // its number among the events popped
  auto push_dependency = [&](int parent, int child, double t) {
    Prepared::PlacetoWait& w = p.waits[child];
    const Event e{t, Prepared::pack(kRemoveDependency, p.waits[parent].name_rank, w.name_rank)};
    Event& latest = w.last;
    if (event_before(latest, e) || event_before(latest, current)) latest = e;
    if (--w.deps_left != 0) return;
    const bool at_once = latest.time == current.time && event_before(latest, current);
    const std::uint64_t key =
        at_once ? (std::uint64_t{1} << 63) | (sequence << 30) | static_cast<std::uint64_t>(w.name_rank)
                : latest.key;
    const int d = placement[child];
    heap_push(p.ready[d], ReadyEntry{latest.time, key, child});
    reschedule_device(d);
  };
  std::fill(p.slot_time.begin(), p.slot_time.end(), std::numeric_limits<double>::infinity());
  for (int op = 0; op < n; ++op) {
    Prepared::PlacetoWait& w = p.waits[op];
    w.deps_left = p.distinct_parents[op];
    w.last = Event{-std::numeric_limits<double>::infinity(), 0};
    if (w.deps_left == 0) p.sources[placement[op]].push_back(op);
  }
  for (int d = 0; d < D; ++d) reschedule_device(d);

  int finished = 0;
  while (!p.events.empty()) {
    const Event ev = sorted_events ? sorted_pop(p.events) : heap_pop(p.events);
    const int kind = Prepared::kind_of(ev.key);
    const int rank = Prepared::first_of(ev.key);
    const int slot = kind == kRunBus ? rank : D + rank;
    if (ev.time != p.slot_time[slot]) continue;  // stale
    p.slot_time[slot] = std::numeric_limits<double>::infinity();
    current = ev;
    ++sequence;
    const double now = ev.time;
    const int d = p.device_of_name_rank[rank];
    if (kind == kRunDevice) {
      const int op = p.source_head[d] < static_cast<int>(p.sources[d].size()) ? p.sources[d][p.source_head[d]++]
                                                                                : heap_pop(p.ready[d]).op;
      const double cost = p.costs.time_us(op, d);
      const double end = now + cost;
      p.start_us[op] = now;
      p.end_us[op] = end;
      p.ran[d].push_back(op);
      if (p.out_total_bytes[op] > 0) p.mem_allocs.push_back({now, p.out_total_bytes[op], d});
      result.device_busy_us[d] += cost;
      ++finished;
      p.device_free_us[d] = cost > 0 ? end + k.device_overhead_us : end;
      // Same-device children are released at the end; each output index needed
      // elsewhere becomes one transfer on this device's bus.
      const int first_new = static_cast<int>(p.transfers.size());
      for (int c = p.child_begin[op]; c < p.child_begin[op + 1]; ++c) {
        const int child = p.children[c].op;
        if (placement[child] == d) {
          push_dependency(op, child, end);
          continue;
        }
        // The child joins its output's transfer's receivers (in child order, so
        // they are released in the order a scan of the children would give).
        const int output = p.children[c].output;
        p.bus_next[c] = -1;
        int tid = -1;
        for (int t = first_new; t < static_cast<int>(p.transfers.size()); ++t) {
          if (p.transfers[t].output == output) {
            tid = t;
            break;
          }
        }
        if (tid >= 0) {
          p.bus_next[p.bus_tail[tid]] = c;
          p.bus_tail[tid] = c;
          continue;
        }
        tid = static_cast<int>(p.transfers.size());
        p.transfers.push_back(Prepared::Transfer{op, output, d, -1, p.children[c].bytes, end, 0, 0, 0, -1, c});
        p.bus_tail[tid] = c;
        p.bus[d].push_back(ReadyEntry{end, 0, tid});
      }
      if (static_cast<int>(p.transfers.size()) > first_new) reschedule_bus(d);
      reschedule_device(d);
    } else {  // kRunBus
      const int tid = p.bus[d][p.bus_head[d]++].op;
      Prepared::Transfer& t = p.transfers[tid];
      const double end = now + t.bytes / k.transfer_bytes_per_us;
      t.start_us = now;
      t.end_us = end;
      result.bytes_moved += t.bytes;
      ++result.transfers;
      p.bus_free_us[d] = end + k.bus_overhead_us;
      for (int c = t.first_out; c >= 0; c = p.bus_next[c]) push_dependency(t.src_op, p.children[c].op, end);
      reschedule_bus(d);
    }
  }
  double last_event_us = k.init_offset_us;
  for (int d = 0; d < D; ++d) last_event_us = std::max({last_event_us, p.device_free_us[d], p.bus_free_us[d]});
  AWARE_CHECK(finished == n, "every op must run once (a cycle would leave some unscheduled)");
  result.step_time_us = last_event_us;

  // Memory (the sweeps above).
  if (p.integral_output_bytes && D <= kMergeDevices) {
    sweep_memory_by_end(p, placement, result);
  } else {
    sweep_memory_sorted(p, placement, result);
  }
  for (int d = 0; d < D; ++d) {
    if (result.peak_memory_bytes[d] > cluster.device(d).memory_bytes) {
      result.feasible = false;
      result.infeasible_reason = "device '" + cluster.device(d).name + "' out of memory: peak " +
                                 format_bytes(result.peak_memory_bytes[d]) + ", has " +
                                 format_bytes(cluster.device(d).memory_bytes);
      break;
    }
  }

  if (observer != nullptr) {
    for (int op = 0; op < n; ++op) observer->on_op(OpSpan{op, placement[op], p.start_us[op], p.end_us[op]});
    for (const Prepared::Transfer& t : p.transfers) {
      observer->on_transfer(
          bus_transfer_span(cluster, t.src_op, t.output, t.src_dev, t.bytes, t.start_us, t.end_us));
    }
  }
  return result;
}

}  // namespace aware
