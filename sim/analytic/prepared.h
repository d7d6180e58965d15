// INTERNAL to sim/analytic: the per-(graph, cluster) preparation and scratch
// buffers both modes share, and small helpers. Not part of the public API.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/cost_model.h"
#include "core/placement.h"
#include "core/units.h"
#include "sim/analytic/analytic_simulator.h"

namespace aware {

namespace analytic_detail {

// Placeto mode's ready and bus queues (placeto_mode.cc): ordered by (time, key).
struct ReadyEntry {
  double time;
  std::uint64_t key;
  int op;
};
// 16 bytes: the time and one key that orders ties. Placeto mode packs
// (kind, first payload rank, second payload rank) into the key so ties follow
// the original's tuple order; contention mode packs (kind, id).
struct Event {
  double time;
  std::uint64_t key;
};
struct Transfer {
  int src_op, output, src_dev, dst_dev;
  double bytes, ready_us, start_us, end_us;
  int refs;
  int route = -1;  // contention mode: the route's index (ContentionRun::route_index), set once
  int first_out = -1;  // its first consumer: contention mode, an out-row index (ContentionScratch::out_next); Placeto mode, a child entry (Prepared::bus_next)
};

// The contention mode's per-step state (contention.cc). One set per run that must
// survive the next: full evaluations, and a move's base and candidate.
struct ContentionScratch {
  std::vector<std::vector<int>> fifo;  // per lane ready queue; appended to, never reordered
  std::vector<int> fifo_head;
  std::vector<int> staged;             // ops (and copy tasks) made ready in this round
  std::vector<Event> events;  // sorted latest first (sorted_events) or a 4-ary heap
  bool sorted_events = false;
  std::vector<Transfer> transfers;
  std::vector<int> deps_left;
  std::vector<int> op_refs;
  std::vector<int> edge_transfer;  // per in-row index: the transfer that carries the edge (cross-device edges)
  std::vector<int> out_next;  // per out-row index: the next consumer edge of the same transfer, or -1
  std::vector<double> start_us;
  std::vector<double> end_us;
  std::vector<char> device_busy;        // per lane (compute lanes first)
  std::vector<int> pending_lanes;       // lanes given work or freed since the last dispatch
  std::vector<char> lane_pending;       // per lane: listed in pending_lanes
  bool lane_mask_mode = false;          // up to 64 lanes: pending lanes are the bits of pending_mask instead
  std::uint64_t pending_mask = 0;
  std::vector<double> channel_free_us;  // when each directed channel is next free
  std::vector<std::vector<int>> route_queue;  // booked transfers per route, in order
  std::vector<int> route_head;                // first unfinished entry per route
  std::vector<double> param_bytes;   // per device: parameters, resident all step
  std::vector<double> mem_now;       // per device: everything else, now
  std::vector<double> peak_dynamic;  // per device: the highest mem_now so far
  std::vector<int> finish_round;     // per op: the round its end was processed in
  double host_clock = 0;             // Interference::host_*: when the host has issued the tasks started so far
};

// The state of a contention step at the start of one round, minus what a later
// round never rewrites (the appended queues, booked transfers and the edges'
// transfer ids: those are read from the finished run's scratch).
struct ContentionCheckpoint {
  int round = 0;
  double now = 0;
  int finished = 0;
  int transfers = 0;
  std::vector<int> fifo_size, fifo_head, route_size, route_head;
  std::vector<Event> events;
  std::vector<int> staged;
  std::vector<char> device_busy;
  std::vector<double> channel_free_us, mem_now, peak_dynamic, device_busy_us;
  double bytes_moved = 0;
  int transfers_done = 0;
  double host_clock = 0;
  std::vector<int> deps_left, op_refs, transfer_refs;
};

// Checkpoints of one run, every `stride` rounds; entries are reused across runs.
struct CheckpointLog {
  int stride = 0;  // 0: record nothing
  int used = 0;
  std::vector<ContentionCheckpoint> entries;
};

}  // namespace analytic_detail

// Everything that depends only on (graph, cluster), plus the scratch buffers the
// simulation reuses, sized once so evaluate() does not allocate.
struct AnalyticSimulator::Prepared {
  std::uint64_t graph_revision = 0;
  std::uint64_t cluster_revision = 0;
  int num_ops = 0;
  int num_devices = 0;
  int num_channels = 0;
  OpCostMatrix costs;
  // op * classes + the device's class (costs): how much the op slows while every
  // other device is busy: the cost table's measured pair slowdown for its type,
  // else Interference's memory factor where the roofline's memory term dominates
  // (and the op touches at least memory_from_bytes), else its compute factor.
  std::vector<double> slowdown;
  bool slows = false;  // some factor differs from 1
  std::vector<int> topo_rank;
  std::vector<double> out_total_bytes;
  std::vector<double> param_bytes;
  std::vector<double> temp_bytes;
  std::vector<int> stream;         // 0 compute, 1 communication (Op::stream)
  // Routes, flattened: channels of route r are
  // route_channels[route_begin[r] .. route_begin[r+1]), r = s*D+d. On clusters of
  // more than kDenseRouteDevices devices (a 64x64 mesh has 16.7 million pairs)
  // only the routes steps cross are kept: r is then the number route_id gave the
  // pair when a step first crossed it, and the arrays grow (mutable: filled
  // during evaluate(), which one simulator runs on one thread at a time).
  static constexpr int kDenseRouteDevices = 256;
  bool sparse_routes = false;
  mutable std::unordered_map<std::uint64_t, int> route_id;  // s*D+d -> r (sparse only)
  mutable std::vector<int> route_begin;
  mutable std::vector<int> route_channels;
  mutable std::vector<double> route_latency_us;
  mutable std::vector<double> route_bandwidth_Bps;
  // Placeto mode: distinct (child, output index) pairs per parent, the output index
  // being that of the last listed input edge from the parent, with its bytes.
  struct PlacetoChild {
    int op;
    int output;
    double bytes;
  };
  std::vector<int> child_begin;
  std::vector<PlacetoChild> children;
  // Per child entry, the next entry the same transfer delivers to (-1: none), and
  // per transfer its last entry so far: a transfer's receivers are a list from
  // Transfer::first_out, in child order, made when its producer ends.
  std::vector<int> bus_next, bus_tail;
  std::vector<int> distinct_parents;
  std::vector<int> device_name_rank;  // device's rank in byte order of names
  std::vector<int> device_of_name_rank;
  // Edges in compressed rows, so the inner loops read contiguous memory.
  std::vector<int> in_begin, in_src, in_edge;
  std::vector<int> out_begin, out_dst, out_output, out_edge;
  std::vector<double> out_bytes;
  std::vector<int> out_in_row;  // per out-row: the same edge's in-row index

  // ---- scratch
  using ReadyEntry = analytic_detail::ReadyEntry;
  using Event = analytic_detail::Event;
  using Transfer = analytic_detail::Transfer;
  static std::uint64_t pack(std::uint64_t kind, std::uint64_t a, std::uint64_t b) {
    return (kind << 60) | (a << 30) | b;
  }
  static int kind_of(std::uint64_t key) { return static_cast<int>(key >> 60); }
  static int first_of(std::uint64_t key) { return static_cast<int>((key >> 30) & ((1u << 30) - 1)); }
  static int second_of(std::uint64_t key) { return static_cast<int>(key & ((1u << 30) - 1)); }
  // Placeto mode.
  std::vector<std::vector<ReadyEntry>> ready;  // per device heap of ready ops, sources apart
  std::vector<std::vector<int>> sources;       // per device, in op order; source_head: the next
  std::vector<int> source_head;
  std::vector<std::vector<ReadyEntry>> bus;    // per device bus list (op = transfer id); bus_head: the next
  std::vector<int> bus_head;
  std::vector<Event> events;  // device and bus events
  std::vector<double> slot_time;  // per bus, then per device (by name rank): when it can next work
  // Per op, together because a dependency reads them at once: its name rank, its
  // dependencies still to come and the one that pops last of those pushed so far.
  struct PlacetoWait {
    Event last;
    int deps_left;
    int name_rank;
  };
  std::vector<PlacetoWait> waits;
  std::vector<Transfer> transfers;
  std::vector<double> start_us;
  std::vector<double> end_us;
  std::vector<double> device_free_us;
  std::vector<double> bus_free_us;
  std::vector<double> mem_now;
  struct SweepEntry {
    double time;
    double bytes;  // + allocated, - freed
    int device;
  };
  std::vector<SweepEntry> mem_allocs;  // in the order ops started
  std::vector<SweepEntry> mem_frees;
  // Placeto mode's memory sweep without sorting (placeto_mode.cc): whether every
  // op's output bytes are whole and all of them sum below 2^53, each device's
  // ops in the order they ran, and per op the buffers its end frees (a list
  // through freed_next).
  bool integral_output_bytes = false;
  std::vector<std::vector<int>> ran;
  std::vector<int> freed_first, freed_next;

  // Contention mode: evaluate()'s state, and evaluate_move()'s.
  analytic_detail::ContentionScratch full;
  struct Moves {
    // The last placement evaluated in full as a base, its finished state and
    // checkpoints; the last move evaluated from it (the candidate), likewise,
    // with the checkpoints it recorded after `candidate_from` (an index into the
    // base's log: the checkpoint it resumed from).
    bool have_base = false, have_candidate = false;
    std::vector<int> base_placement, candidate_placement;
    analytic_detail::ContentionScratch base, candidate;
    analytic_detail::CheckpointLog base_log, candidate_log;
    int candidate_from = 0;  // -1: the candidate ran in full (its log starts at round 0)
    StepResult base_result, candidate_result;
    // Whether checkpoints are being recorded, and what they have saved since the
    // last review (analytic_simulator.cc).
    bool checkpoints = true;
    long long moves_seen = 0, next_review = 0;
    double rounds_skipped = 0, rounds_total = 0;
  } moves;
};

namespace analytic_detail {

// The heaps are 4-ary: half the levels of a binary heap, and a node's children
// share a cache line or two. Entries are whole values ordered by (time, key), so
// any correct heap pops them in the same order.
inline bool event_before(const Event& a, const Event& b) {
  return a.time != b.time ? a.time < b.time : a.key < b.key;
}

// Small functions on the simulators' hot paths, inlined even where the
// compiler's size heuristics would not (an out-of-line call per event costs
// ~10% of a contention step).
#if defined(__GNUC__)
#define AWARE_HOT_INLINE inline __attribute__((always_inline))
#else
#define AWARE_HOT_INLINE inline
#endif

// A 4-ary min-heap under `before`.
template <typename T, typename Before>
AWARE_HOT_INLINE void heap4_push(std::vector<T>& heap, const T& value, Before before) {
  heap.push_back(value);
  size_t i = heap.size() - 1;
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!before(value, heap[parent])) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = value;
}

template <typename T, typename Before>
AWARE_HOT_INLINE T heap4_pop(std::vector<T>& heap, Before before) {
  const T top = heap.front();
  const T last = heap.back();
  heap.pop_back();
  const size_t n = heap.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = std::min(first + 4, n);
    for (size_t c = first + 1; c < end; ++c)
      if (before(heap[c], heap[best])) best = c;
    if (!before(heap[best], last)) break;
    heap[i] = heap[best];
    i = best;
  }
  heap[i] = last;
  return top;
}

// Up to this many devices the simulators keep their pending device and link
// events in a vector sorted latest first (sorted_push; the earliest is the
// back) instead of a heap: there are a few per device, and an insertion into
// a short sorted run is cheaper than a heap's sift.
constexpr int kSortedEventDevices = 16;

template <typename T>
AWARE_HOT_INLINE void sorted_push(std::vector<T>& q, const T& e) {
  q.push_back(e);
  size_t i = q.size() - 1;
  while (i > 0 && event_before(q[i - 1], e)) {
    q[i] = q[i - 1];
    --i;
  }
  q[i] = e;
}

template <typename T>
AWARE_HOT_INLINE T sorted_pop(std::vector<T>& q) {
  const T e = q.back();
  q.pop_back();
  return e;
}

// (time, key) order as function objects, so the heaps inline the comparison.
struct EarlierFirst {
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return a.time != b.time ? a.time < b.time : a.key < b.key;
  }
};

AWARE_HOT_INLINE void heap_push(std::vector<Event>& heap, const Event& value) { heap4_push(heap, value, EarlierFirst{}); }
AWARE_HOT_INLINE Event heap_pop(std::vector<Event>& heap) { return heap4_pop(heap, EarlierFirst{}); }
AWARE_HOT_INLINE void heap_push(std::vector<ReadyEntry>& heap, const ReadyEntry& value) {
  heap4_push(heap, value, EarlierFirst{});
}
AWARE_HOT_INLINE ReadyEntry heap_pop(std::vector<ReadyEntry>& heap) { return heap4_pop(heap, EarlierFirst{}); }

inline std::vector<int> byte_order_rank(const std::vector<std::string>& names) {
  std::vector<int> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return names[x] < names[y]; });
  std::vector<int> rank(names.size());
  for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = static_cast<int>(i);
  return rank;
}

// Memory sizes in the simulators' out-of-memory messages: always GB, 3 decimals.
inline std::string format_bytes(double bytes) {
  return aware::format_bytes(bytes, BytesStyle::kGigabytes);
}

}  // namespace analytic_detail

}  // namespace aware
