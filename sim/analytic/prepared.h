// INTERNAL to sim/analytic: the per-(graph, cluster) preparation and scratch
// buffers both modes share, and small helpers. Not part of the public API.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "core/cost_model.h"
#include "core/units.h"
#include "sim/analytic/analytic_simulator.h"

namespace aware {

// Everything that depends only on (graph, cluster), plus the scratch buffers the
// simulation reuses, sized once so evaluate() does not allocate.
struct AnalyticSimulator::Prepared {
  std::uint64_t graph_revision = 0;
  std::uint64_t cluster_revision = 0;
  int num_ops = 0;
  int num_devices = 0;
  int num_channels = 0;
  OpCostMatrix costs;
  std::vector<char> memory_bound;  // op * D + device: the roofline's memory term dominates
  std::vector<int> topo_rank;
  std::vector<double> out_total_bytes;
  std::vector<double> param_bytes;
  std::vector<double> temp_bytes;
  std::vector<int> stream;         // 0 compute, 1 communication (Op::stream)
  // Routes, flattened: channels of route (s, d) are
  // route_channels[route_begin[s*D+d] .. route_begin[s*D+d+1]).
  std::vector<int> route_begin;
  std::vector<int> route_channels;
  std::vector<double> route_latency_us;
  std::vector<double> route_bandwidth_Bps;
  // Placeto mode: distinct (child, output index) pairs per parent, the output index
  // being that of the last listed input edge from the parent.
  std::vector<int> child_begin;
  std::vector<int> child_op;
  std::vector<int> child_output;
  std::vector<int> distinct_parents;
  std::vector<int> name_rank;         // op's rank in byte order of names
  std::vector<int> op_of_name_rank;   // inverse of name_rank
  std::vector<int> device_name_rank;  // device's rank in byte order of names
  std::vector<int> device_of_name_rank;
  // Edges in compressed rows, so the inner loops read contiguous memory.
  std::vector<int> in_begin, in_src, in_edge;
  std::vector<int> out_begin, out_dst, out_output, out_edge;
  std::vector<double> out_bytes;

  // ---- scratch
  struct ReadyEntry {
    double time;
    int key;  // contention: topological rank; placeto: insertion counter
    int op;
    bool operator>(const ReadyEntry& o) const {
      return time != o.time ? time > o.time : key > o.key;
    }
  };
  // 16 bytes: the time and one key that orders ties. Placeto mode packs
  // (kind, first payload rank, second payload rank) into the key so ties follow
  // the original's tuple order; contention mode packs (kind, id).
  struct Event {
    double time;
    std::uint64_t key;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : key > o.key; }
  };
  static std::uint64_t pack(std::uint64_t kind, std::uint64_t a, std::uint64_t b) {
    return (kind << 60) | (a << 30) | b;
  }
  static int kind_of(std::uint64_t key) { return static_cast<int>(key >> 60); }
  static int first_of(std::uint64_t key) { return static_cast<int>((key >> 30) & ((1u << 30) - 1)); }
  static int second_of(std::uint64_t key) { return static_cast<int>(key & ((1u << 30) - 1)); }
  struct Transfer {
    int src_op, output, src_dev, dst_dev;
    double bytes, ready_us, start_us, end_us;
    int refs;
  };
  std::vector<std::vector<ReadyEntry>> ready;  // placeto: per device heap
  std::vector<std::vector<int>> fifo;          // contention: per lane ready queue
  std::vector<int> fifo_head;
  std::vector<int> staged;                     // contention: ops made ready in this batch
  std::vector<std::vector<ReadyEntry>> bus;    // placeto: per device bus heap (op = transfer id)
  std::vector<Event> events;
  std::vector<Transfer> transfers;

  std::vector<int> deps_left;
  std::vector<int> op_refs;
  std::vector<int> edge_transfer;
  std::vector<double> start_us;
  std::vector<double> end_us;
  std::vector<double> device_free_us;
  std::vector<double> bus_free_us;
  std::vector<char> device_busy;  // contention: per lane (compute lanes first)
  std::vector<double> channel_free_us;  // contention: when each directed channel is next free
  std::vector<std::vector<int>> route_queue;  // contention: booked transfers per route, in order
  std::vector<int> route_head;                // contention: first unfinished entry per route
  std::vector<double> mem_now;
  std::vector<std::pair<double, double>> mem_sweep;  // placeto: (time, +/- bytes) per device
  std::vector<int> mem_sweep_device;
  std::vector<int> sweep_order;
};

namespace analytic_detail {

template <typename T>
inline void heap_push(std::vector<T>& heap, const T& value) {
  heap.push_back(value);
  std::push_heap(heap.begin(), heap.end(), std::greater<T>());
}

template <typename T>
inline T heap_pop(std::vector<T>& heap) {
  std::pop_heap(heap.begin(), heap.end(), std::greater<T>());
  T top = heap.back();
  heap.pop_back();
  return top;
}

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
