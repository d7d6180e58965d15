#include "sim/analytic/analytic_simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "core/cluster.h"
#include "core/cost_table.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/op_graph.h"
#include "core/step_observer.h"
#include "sim/analytic/prepared.h"

namespace aware {

using namespace analytic_detail;


AnalyticSimulator::AnalyticSimulator(AnalyticMode mode, PlacetoConstants constants)
    : mode_(mode), constants_(constants) {}

std::unique_ptr<AnalyticSimulator> AnalyticSimulator::from_options(const Options& options) {
  check_known_options(options,
                      {"mode", "placeto.delta1_us", "placeto.delta2_us", "placeto.bytes_per_us",
                       "costs", "slowdown.compute", "slowdown.memory", "copies"},
                      "evaluator 'analytic'");
  const std::string mode = option_string(options, "mode", "contention");
  AnalyticMode m;
  if (mode == "contention") {
    m = AnalyticMode::kContention;
  } else if (mode == "placeto") {
    m = AnalyticMode::kPlaceto;
  } else {
    throw ConfigError("evaluator 'analytic': mode '" + mode + "' unknown (known: contention, placeto)");
  }
  PlacetoConstants c;
  const std::string owner = "evaluator 'analytic'";
  c.device_overhead_us = option_double(options, "placeto.delta1_us", c.device_overhead_us, owner);
  c.bus_overhead_us = option_double(options, "placeto.delta2_us", c.bus_overhead_us, owner);
  c.transfer_bytes_per_us = option_double(options, "placeto.bytes_per_us", c.transfer_bytes_per_us, owner);
  if (c.device_overhead_us < 0 || c.bus_overhead_us < 0 || !(c.transfer_bytes_per_us > 0)) {
    throw ConfigError(owner + ": placeto overheads must be >= 0 and bytes_per_us > 0");
  }
  Interference interference;
  interference.compute = option_double(options, "slowdown.compute", 1, owner);
  interference.memory = option_double(options, "slowdown.memory", 1, owner);
  for (double f : {interference.compute, interference.memory})
    if (!(f > 0) || !std::isfinite(f)) throw ConfigError(owner + ": slowdown factors must be positive");
  const std::string copies = option_string(options, "copies", "links");
  if (copies != "links" && copies != "consumer")
    throw ConfigError(owner + ": copies '" + copies + "' unknown (known: links, consumer)");
  interference.copies_on_consumer = copies == "consumer";
  if (m == AnalyticMode::kPlaceto && interference.slows())
    throw ConfigError(owner + ": slowdown.* applies to contention mode only");
  if (m == AnalyticMode::kPlaceto && interference.copies_on_consumer)
    throw ConfigError(owner + ": copies=consumer applies to contention mode only");
  auto simulator = std::make_unique<AnalyticSimulator>(m, c);
  simulator->set_interference(interference);
  const std::string costs = option_string(options, "costs", "");
  if (!costs.empty()) {
    try {
      simulator->set_cost_table(std::make_shared<const CostTable>(read_cost_table_file(costs)),
                                costs);
    } catch (const ParseError& e) {
      throw ParseError(owner + ": option 'costs': " + e.what());
    }
  }
  return simulator;
}

void AnalyticSimulator::set_cost_table(std::shared_ptr<const CostTable> table, std::string label) {
  if (table != nullptr && table->empty()) table = nullptr;
  cost_table_ = std::move(table);
  cost_table_label_ = cost_table_ ? std::move(label) : std::string();
  prepared_.reset();  // the op costs it holds came from the old table
}

std::string AnalyticSimulator::describe() const {
  std::string text;
  if (mode_ == AnalyticMode::kContention) {
    text = "analytic (contention: one stream per device, one transfer per link direction, "
           "memory tracked";
  } else {
    char buffer[200];
    std::snprintf(buffer, sizeof buffer,
                  "analytic (placeto: bus per source device at %.0f B/us, %.1f us after ops, "
                  "%.1f us after transfers",
                  constants_.transfer_bytes_per_us, constants_.device_overhead_us,
                  constants_.bus_overhead_us);
    text = buffer;
  }
  if (cost_table_) {
    text += "; op costs from " + cost_table_label_ + " (" +
            std::to_string(cost_table_->us.size()) +
            (cost_table_->us.size() == 1 ? " entry" : " entries") + ", roofline elsewhere)";
  }
  if (interference_.slows()) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer,
                  "; devices slow each other: x%.3g compute-bound, x%.3g memory-bound",
                  interference_.compute, interference_.memory);
    text += buffer;
  }
  if (interference_.copies_on_consumer) text += "; copies run on the consumer's compute stream";
  return text + ")";
}

std::unique_ptr<Evaluator> AnalyticSimulator::clone() const {
  auto copy = std::make_unique<AnalyticSimulator>(mode_, constants_);
  copy->set_cost_table(cost_table_, cost_table_label_);
  copy->set_interference(interference_);
  return copy;
}

void AnalyticSimulator::prepare(const OpGraph& graph, const Cluster& cluster) {
  if (prepared_ && prepared_->graph_revision == graph.revision() &&
      prepared_->cluster_revision == cluster.revision()) {
    return;
  }
  if (!cluster.finalized()) {
    throw ConfigError("cluster '" + cluster.name() + "' must be finalized before evaluation");
  }
  auto p = std::make_shared<Prepared>();
  p->graph_revision = graph.revision();
  p->cluster_revision = cluster.revision();
  const int n = graph.num_ops();
  const int D = cluster.num_devices();
  p->num_ops = n;
  p->num_devices = D;
  p->num_channels = 2 * cluster.num_links();
  p->costs = OpCostMatrix(graph, cluster, cost_table_.get());
  p->memory_bound.assign(static_cast<size_t>(n) * D, 0);
  for (int op = 0; op < n; ++op) {
    const Op& o = graph.op(op);
    for (int d = 0; d < D; ++d) {
      const Device& dev = cluster.device(d);
      p->memory_bound[static_cast<size_t>(op) * D + d] =
          o.bytes_accessed * dev.peak_flops * dev.efficiency > o.flops * dev.memory_Bps;
    }
  }
  p->topo_rank = topological_rank(graph);
  p->out_total_bytes.resize(n);
  p->param_bytes.resize(n);
  p->temp_bytes.resize(n);
  for (int op = 0; op < n; ++op) {
    p->out_total_bytes[op] = graph.op(op).total_output_bytes();
    p->param_bytes[op] = graph.op(op).param_bytes;
    p->temp_bytes[op] = graph.op(op).temp_bytes;
  }
  p->route_begin.assign(static_cast<size_t>(D) * D + 1, 0);
  p->route_latency_us.assign(static_cast<size_t>(D) * D, 0);
  p->route_bandwidth_Bps.assign(static_cast<size_t>(D) * D, 0);
  for (int s = 0; s < D; ++s) {
    for (int d = 0; d < D; ++d) {
      const size_t idx = static_cast<size_t>(s) * D + d;
      p->route_begin[idx] = static_cast<int>(p->route_channels.size());
      for (const Hop& hop : cluster.route(s, d)) p->route_channels.push_back(hop.channel());
      p->route_latency_us[idx] = cluster.route_latency_us(s, d);
      p->route_bandwidth_Bps[idx] = cluster.route_bandwidth_Bps(s, d);
    }
  }
  p->route_begin.back() = static_cast<int>(p->route_channels.size());

  // Placeto pairs: one dependency per (parent, child); the last listed input wins.
  p->child_begin.assign(n + 1, 0);
  p->distinct_parents.assign(n, 0);
  std::vector<std::vector<std::pair<int, int>>> children(n);
  for (int c = 0; c < n; ++c) {
    std::vector<std::pair<int, int>> last;  // (parent, output) in order of first appearance
    for (int e : graph.in_edges(c)) {
      const Edge& edge = graph.edge(e);
      bool found = false;
      for (auto& [parent, output] : last) {
        if (parent == edge.src) {
          output = edge.src_output;
          found = true;
        }
      }
      if (!found) last.push_back({edge.src, edge.src_output});
    }
    p->distinct_parents[c] = static_cast<int>(last.size());
    for (const auto& [parent, output] : last) children[parent].push_back({c, output});
  }
  for (int op = 0; op < n; ++op) {
    p->child_begin[op] = static_cast<int>(p->child_op.size());
    for (const auto& [c, output] : children[op]) {
      p->child_op.push_back(c);
      p->child_output.push_back(output);
    }
  }
  p->child_begin[n] = static_cast<int>(p->child_op.size());
  std::vector<std::string> names(n);
  for (int op = 0; op < n; ++op) names[op] = graph.op(op).name;
  p->name_rank = byte_order_rank(names);
  p->op_of_name_rank.resize(n);
  for (int op = 0; op < n; ++op) p->op_of_name_rank[p->name_rank[op]] = op;
  p->in_begin.assign(n + 1, 0);
  p->out_begin.assign(n + 1, 0);
  for (int op = 0; op < n; ++op) {
    p->in_begin[op] = static_cast<int>(p->in_src.size());
    for (int e : graph.in_edges(op)) {
      p->in_src.push_back(graph.edge(e).src);
      p->in_edge.push_back(e);
    }
    p->out_begin[op] = static_cast<int>(p->out_dst.size());
    for (int e : graph.out_edges(op)) {
      p->out_dst.push_back(graph.edge(e).dst);
      p->out_output.push_back(graph.edge(e).src_output);
      p->out_bytes.push_back(graph.edge(e).bytes);
      p->out_edge.push_back(e);
    }
  }
  p->in_begin[n] = static_cast<int>(p->in_src.size());
  p->out_begin[n] = static_cast<int>(p->out_dst.size());
  if (n >= (1 << 30) || D >= (1 << 30)) throw ConfigError("graph too large for the analytic simulator");
  std::vector<std::string> device_names(D);
  for (int d = 0; d < D; ++d) device_names[d] = cluster.device(d).name;
  p->device_name_rank = byte_order_rank(device_names);
  p->device_of_name_rank.resize(D);
  for (int d = 0; d < D; ++d) p->device_of_name_rank[p->device_name_rank[d]] = d;

  // Scratch, sized for the worst case.
  const size_t edges = static_cast<size_t>(graph.num_edges());
  p->ready.assign(D, {});
  p->bus.assign(D, {});
  for (auto& q : p->ready) q.reserve(n);
  // Two lanes per device: its compute stream (lane d) and its communication stream
  // (lane D + d), each running one op at a time.
  p->fifo.assign(2 * static_cast<size_t>(D), {});
  for (auto& q : p->fifo) q.reserve(n);
  p->fifo_head.assign(2 * static_cast<size_t>(D), 0);
  p->staged.reserve(n);
  for (auto& q : p->bus) q.reserve(n + 1);
  p->events.reserve(4 * (n + edges) + 4 * D + 16);
  p->transfers.reserve(edges + 1);

  p->deps_left.resize(n);
  p->op_refs.resize(n);
  p->edge_transfer.resize(edges);
  p->start_us.resize(n);
  p->end_us.resize(n);
  p->device_free_us.resize(D);
  p->bus_free_us.resize(D);
  p->device_busy.resize(2 * static_cast<size_t>(D));
  p->stream.resize(n);
  for (int op = 0; op < n; ++op) p->stream[op] = graph.op(op).stream;
  p->channel_free_us.resize(p->num_channels);
  p->route_queue.assign(static_cast<size_t>(D) * D, {});
  for (auto& q : p->route_queue) q.reserve(edges / std::max(1, D) + 1);
  p->route_head.assign(static_cast<size_t>(D) * D, 0);
  p->mem_now.resize(D);
  p->mem_sweep.reserve(2 * static_cast<size_t>(n));
  p->mem_sweep_device.reserve(2 * static_cast<size_t>(n));
  p->sweep_order.reserve(2 * static_cast<size_t>(n));
  prepared_ = std::move(p);
}

StepResult AnalyticSimulator::run_step(const OpGraph& graph, const Cluster& cluster,
                                       const Placement& placement, StepObserver* observer) {
  if (placement.size() != graph.num_ops()) check_placement(graph, cluster, placement);
  for (int op = 0; op < graph.num_ops(); ++op) {
    if (placement[op] < 0 || placement[op] >= cluster.num_devices()) {
      check_placement(graph, cluster, placement);
    }
  }
  prepare(graph, cluster);
  StepResult result = mode_ == AnalyticMode::kContention
                          ? run_contention(graph, cluster, placement, observer)
                          : run_placeto(graph, cluster, placement, observer);
  result.evaluator = "analytic";
  return result;
}

// ------------------------------------------------------------ contention mode

namespace {

// One contention-mode step over a prepared graph, in named steps: reset the
// scratch, allocate parameters, then alternate dispatch_ready_ops() with
// process_events_at_next_time() until nothing is left, and report the spans.
class ContentionRun {
 public:
  using Prepared = AnalyticSimulator::Prepared;

  ContentionRun(Prepared& p, const OpGraph& graph, const Cluster& cluster,
                const Placement& placement, const Interference& interference)
      : p_(p),
        graph_(graph),
        cluster_(cluster),
        placement_(placement),
        interference_(interference),
        D_(p.num_devices) {}

  StepResult run() {
    reset_scratch();
    allocate_parameters_and_seed_ready();
    for (;;) {
      dispatch_ready_ops();
      if (p_.events.empty()) break;
      process_events_at_next_time();
    }
    AWARE_CHECK(finished_ == p_.num_ops, "every op must run once (a cycle would leave some unscheduled)");
    result_.step_time_us = now_;
    return std::move(result_);
  }

  // Reports every op span (op-id order), then every transfer (booking order).
  void report(StepObserver& observer) const {
    for (int op = 0; op < p_.num_ops; ++op)
      observer.on_op(OpSpan{op, placement_[op], p_.start_us[op], p_.end_us[op]});
    for (const Prepared::Transfer& t : p_.transfers) {
      observer.on_transfer(link_transfer_span(cluster_, t.src_op, t.output, t.src_dev, t.dst_dev,
                                              t.bytes, t.start_us, t.end_us));
    }
  }

 private:
  using ReadyEntry = Prepared::ReadyEntry;
  using Event = Prepared::Event;

  void reset_scratch() {
    result_.device_busy_us.assign(D_, 0);
    result_.peak_memory_bytes.assign(D_, 0);
    for (auto& q : p_.fifo) q.clear();
    std::fill(p_.fifo_head.begin(), p_.fifo_head.end(), 0);
    p_.staged.clear();
    p_.events.clear();
    p_.transfers.clear();
    std::fill(p_.device_busy.begin(), p_.device_busy.end(), 0);
    std::fill(p_.channel_free_us.begin(), p_.channel_free_us.end(), 0.0);
    for (auto& q : p_.route_queue) q.clear();
    std::fill(p_.route_head.begin(), p_.route_head.end(), 0);
    std::fill(p_.mem_now.begin(), p_.mem_now.end(), 0.0);
  }

  void allocate(int device, double bytes, int op) {
    p_.mem_now[device] += bytes;
    if (p_.mem_now[device] > result_.peak_memory_bytes[device])
      result_.peak_memory_bytes[device] = p_.mem_now[device];
    if (result_.feasible && p_.mem_now[device] > cluster_.device(device).memory_bytes) {
      result_.feasible = false;
      result_.infeasible_reason = "device '" + cluster_.device(device).name +
                                  "' out of memory at op '" + graph_.op(op).name + "': needs " +
                                  format_bytes(p_.mem_now[device]) + ", has " +
                                  format_bytes(cluster_.device(device).memory_bytes);
    }
  }

  // One of `op`'s inputs has arrived; it is staged once all have.
  void release(int op) {
    if (--p_.deps_left[op] == 0) p_.staged.push_back(op);
  }

  // Parameters stay resident for the whole step; source ops are ready at 0.
  void allocate_parameters_and_seed_ready() {
    const int n = p_.num_ops;
    for (int op = 0; op < n; ++op) {
      if (p_.param_bytes[op] > 0) allocate(placement_[op], p_.param_bytes[op], op);
    }
    for (int op = 0; op < n; ++op) {
      p_.deps_left[op] = p_.in_begin[op + 1] - p_.in_begin[op];
      if (p_.deps_left[op] == 0) p_.staged.push_back(op);
    }
  }

  // Ops made ready in this batch join their device's queue in topological order.
  // Ready times never decrease, so each queue stays ordered by (ready time,
  // topological rank) without a heap. Then every idle device starts its next op.
  //
  // With copies on the consumer, a staged id of num_ops + t is transfer t's copy
  // task, ranked just after its producer.
  void dispatch_ready_ops() {
    if (p_.staged.size() > 1) {
      std::sort(p_.staged.begin(), p_.staged.end(),
                [&](int x, int y) {
                  const long long rx = task_rank(x), ry = task_rank(y);
                  return rx != ry ? rx < ry : x < y;  // two copies of one producer: booking order
                });
    }
    for (int id : p_.staged) p_.fifo[id < p_.num_ops ? lane_of(id) : copy_lane(id)].push_back(id);
    p_.staged.clear();
    for (int lane = 0; lane < 2 * D_; ++lane) {
      if (p_.device_busy[lane] || p_.fifo_head[lane] == static_cast<int>(p_.fifo[lane].size()))
        continue;
      const int d = lane % D_;
      const int id = p_.fifo[lane][p_.fifo_head[lane]++];
      if (id >= p_.num_ops) {
        start_copy_task(id - p_.num_ops, lane);
        continue;
      }
      const ReadyEntry e{now_, 0, id};
      double cost = p_.costs.time_us(e.op, d);
      if (interference_.slows() && D_ > 1) {
        int others_busy = 0;
        for (int o = 0; o < D_; ++o) others_busy += o != d && p_.device_busy[o];
        const double slowdown = p_.memory_bound[static_cast<size_t>(e.op) * D_ + d]
                                    ? interference_.memory
                                    : interference_.compute;
        cost *= 1 + (slowdown - 1) * others_busy / (D_ - 1);
      }
      p_.device_busy[lane] = 1;
      p_.start_us[e.op] = now_;
      p_.end_us[e.op] = now_ + cost;
      result_.device_busy_us[d] += cost;
      allocate(d, p_.out_total_bytes[e.op] + p_.temp_bytes[e.op], e.op);
      heap_push(p_.events, Event{now_ + cost, Prepared::pack(0, 0, static_cast<std::uint64_t>(e.op))});
    }
  }

  // Every event at the earliest time is processed before dispatching again, so
  // ops made ready at the same instant compete by topological rank.
  void process_events_at_next_time() {
    now_ = p_.events.front().time;
    while (!p_.events.empty() && p_.events.front().time == now_) {
      const Event ev = heap_pop(p_.events);
      const int id = Prepared::second_of(ev.key);
      if (Prepared::kind_of(ev.key) == 0) {
        finish_op(id);
      } else {
        finish_transfer(id);
      }
    }
  }

  int lane_of(int op) const { return placement_[op] + (p_.stream[op] != 0 ? D_ : 0); }

  // copies_on_consumer: a copy task's lane is its destination's compute stream;
  // ops rank 2 * topological rank, copies 2 * their producer's + 1.
  int copy_lane(int id) const { return p_.transfers[id - p_.num_ops].dst_dev; }
  long long task_rank(int id) const {
    if (id < p_.num_ops) return 2LL * p_.topo_rank[id];
    return 2LL * p_.topo_rank[p_.transfers[id - p_.num_ops].src_op] + 1;
  }

  // The copy starts now on its destination's compute stream (slowed like a
  // memory-bound op while other devices are busy).
  void start_copy_task(int tid, int lane) {
    Prepared::Transfer& t = p_.transfers[tid];
    const size_t r = static_cast<size_t>(t.src_dev) * D_ + t.dst_dev;
    double cost = p_.route_latency_us[r] + t.bytes / p_.route_bandwidth_Bps[r] * 1e6;
    if (interference_.slows() && D_ > 1) {
      int others_busy = 0;
      for (int o = 0; o < D_; ++o) others_busy += o != t.dst_dev && p_.device_busy[o];
      cost *= 1 + (interference_.memory - 1) * others_busy / (D_ - 1);
    }
    p_.device_busy[lane] = 1;
    t.start_us = now_;
    t.end_us = now_ + cost;
    result_.device_busy_us[t.dst_dev] += cost;
    heap_push(p_.events, Event{t.end_us, Prepared::pack(1, 0, static_cast<std::uint64_t>(tid))});
  }

  void finish_op(int op) {
    const int d = placement_[op];
    p_.device_busy[lane_of(op)] = 0;
    ++finished_;
    p_.mem_now[d] -= p_.temp_bytes[op];
    release_consumed_inputs(op, d);
    const int first_new = static_cast<int>(p_.transfers.size());
    const int refs = send_outputs(op, d);
    book_transfers_from(first_new);
    p_.op_refs[op] = refs;
    if (refs == 0) p_.mem_now[d] -= p_.out_total_bytes[op];
  }

  // `op`'s inputs are consumed: release the buffers it was holding.
  void release_consumed_inputs(int op, int d) {
    for (int i = p_.in_begin[op]; i < p_.in_begin[op + 1]; ++i) {
      const int src = p_.in_src[i];
      if (placement_[src] == d) {
        if (--p_.op_refs[src] == 0) p_.mem_now[d] -= p_.out_total_bytes[src];
      } else {
        Prepared::Transfer& t = p_.transfers[p_.edge_transfer[p_.in_edge[i]]];
        if (--t.refs == 0) p_.mem_now[d] -= t.bytes;
      }
    }
  }

  // Same-device consumers are released now; each (output, device) pair elsewhere
  // gets one transfer. Returns how many holders keep `op`'s outputs alive.
  int send_outputs(int op, int d) {
    int refs = 0;
    const int first_new = static_cast<int>(p_.transfers.size());
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
      for (int t = first_new; t < static_cast<int>(p_.transfers.size()); ++t) {
        if (p_.transfers[t].output == output && p_.transfers[t].dst_dev == dst_dev) {
          tid = t;
          break;
        }
      }
      if (tid < 0) {
        tid = static_cast<int>(p_.transfers.size());
        p_.transfers.push_back(Prepared::Transfer{op, output, d, dst_dev, p_.out_bytes[i], now_, 0, 0, 0});
        ++refs;
      }
      p_.transfers[tid].bytes = std::max(p_.transfers[tid].bytes, p_.out_bytes[i]);
      ++p_.transfers[tid].refs;
      p_.edge_transfer[p_.out_edge[i]] = tid;
    }
    return refs;
  }

  // Books the new transfers on their routes, first come first served: each starts
  // once every channel of its route is free of earlier bookings.
  // With copies on the consumer, each becomes a task on its destination instead.
  void book_transfers_from(int first_new) {
    for (int tid = first_new; tid < static_cast<int>(p_.transfers.size()); ++tid) {
      Prepared::Transfer& t = p_.transfers[tid];
      if (interference_.copies_on_consumer) {
        allocate(t.dst_dev, t.bytes, t.src_op);
        p_.staged.push_back(p_.num_ops + tid);
        continue;
      }
      const size_t r = static_cast<size_t>(t.src_dev) * D_ + t.dst_dev;
      double start = now_;
      for (int c = p_.route_begin[r]; c < p_.route_begin[r + 1]; ++c)
        start = std::max(start, p_.channel_free_us[p_.route_channels[c]]);
      t.start_us = start;
      t.end_us = start + p_.route_latency_us[r] + t.bytes / p_.route_bandwidth_Bps[r] * 1e6;
      for (int c = p_.route_begin[r]; c < p_.route_begin[r + 1]; ++c)
        p_.channel_free_us[p_.route_channels[c]] = t.end_us;
      // The receiving buffer is reserved from the request on (conservative).
      allocate(t.dst_dev, t.bytes, t.src_op);
      // Bookings on one route end in order, so only each route's oldest transfer
      // sits in the event heap; that keeps the heap tiny.
      auto& queue = p_.route_queue[r];
      if (p_.route_head[r] == static_cast<int>(queue.size()))
        heap_push(p_.events, Event{t.end_us, Prepared::pack(1, 0, static_cast<std::uint64_t>(tid))});
      queue.push_back(tid);
    }
  }

  // A transfer arrived: the route's next booking enters the event heap, the
  // sender's buffer may be freed, and its consumers on the destination are released.
  void finish_transfer(int tid) {
    const Prepared::Transfer& t = p_.transfers[tid];
    if (interference_.copies_on_consumer) {
      p_.device_busy[t.dst_dev] = 0;  // the consumer's compute stream is free again
    } else {
      const size_t r = static_cast<size_t>(t.src_dev) * D_ + t.dst_dev;
      const int next = ++p_.route_head[r];
      if (next < static_cast<int>(p_.route_queue[r].size())) {
        const int queued = p_.route_queue[r][next];
        heap_push(p_.events, Event{p_.transfers[queued].end_us, Prepared::pack(1, 0, static_cast<std::uint64_t>(queued))});
      }
    }
    result_.bytes_moved += t.bytes;
    ++result_.transfers;
    if (--p_.op_refs[t.src_op] == 0) p_.mem_now[t.src_dev] -= p_.out_total_bytes[t.src_op];
    for (int i = p_.out_begin[t.src_op]; i < p_.out_begin[t.src_op + 1]; ++i) {
      if (p_.out_output[i] == t.output && placement_[p_.out_dst[i]] == t.dst_dev) release(p_.out_dst[i]);
    }
  }

  Prepared& p_;
  const OpGraph& graph_;
  const Cluster& cluster_;
  const Placement& placement_;
  const Interference& interference_;
  const int D_;
  StepResult result_;
  double now_ = 0;
  int finished_ = 0;
};

}  // namespace

StepResult AnalyticSimulator::run_contention(const OpGraph& graph, const Cluster& cluster,
                                             const Placement& placement, StepObserver* observer) {
  ContentionRun step(*prepared_, graph, cluster, placement, interference_);
  StepResult result = step.run();
  if (observer != nullptr) step.report(*observer);
  return result;
}

}  // namespace aware
