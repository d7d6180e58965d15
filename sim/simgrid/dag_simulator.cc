#include "sim/simgrid/dag_simulator.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <mutex>
#include <numeric>
#include <queue>
#include <unordered_set>

#include <simgrid/s4u.hpp>

#include "core/cost_model.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/units.h"
#include "sim/analytic/analytic_simulator.h"

namespace sg4 = simgrid::s4u;

namespace aware {
namespace {

const std::vector<std::string> kExactNetwork = {"network/latency-factor:1",
                                                "network/bandwidth-factor:1",
                                                "network/crosstraffic:0", "network/TCP-gamma:0"};

// SimGrid's clock keeps running across simulations; results are clock
// differences, rounded to 1 ns so that the offset's last bits do not make two
// runs of one placement differ.
double to_us(double seconds) { return std::round(seconds * 1e9) / 1e3; }

// The activities of one step, made only when they become ready. SimGrid 3.32
// keeps every activity made from the maestro in one std::list until it ends, and
// each one that ends removes itself from that list by a linear scan
// (ExecImpl::post, CommImpl::finish): with all of a step's ~2,000 execs and comms
// made up front that scan was a quarter of a worker's time. Made when ready, the
// list holds only what is in flight.
//
// Activity ids: op i's exec is i, transfer t's comm is n + t; SimGrid data tags
// are id + 1. Dependencies are ours (successor lists in the order the earlier
// add_successor() calls made them, released in reverse, as SimGrid's
// release_dependencies() walks them), so each activity starts at the same point
// of the engine's loop as when SimGrid released it: inside the completion of the
// activity that solved its last dependency, after the completion callbacks.
//
// order=ready: each device stream picks, in SimGrid's own time, its next op among
// those whose inputs have arrived (earliest ready first, then topological rank);
// when an exec completes its lane takes the next queued op, before the exec's
// successors are released. order=analytic: a ready exec starts at once (the lane
// order is in its dependencies). Only one simulation runs at a time in a worker
// process, so the completion callback reaches it through one pointer.
struct LazyStep {
  struct Entry {
    double ready;
    int rank;
    int op;
    bool operator>(const Entry& o) const {
      return ready != o.ready ? ready > o.ready : rank > o.rank;
    }
  };
  int n = 0;
  bool order_ready = true;
  std::vector<sg4::ExecPtr>* execs = nullptr;
  std::vector<sg4::CommPtr>* comms = nullptr;
  std::vector<double> flops;                 // per op
  std::vector<sg4::Host*> exec_host;         // per op (its device's host)
  std::vector<sg4::Host*> comm_src, comm_dst;  // per transfer
  std::vector<std::uint64_t> comm_bytes;     // per transfer
  std::vector<int> succ_begin, succ;         // per activity, in add order
  std::vector<int> preds_left;               // per activity
  // order=ready
  std::vector<int> lane_of_op;
  std::vector<char> lane_busy;
  std::vector<std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>>> queue;
  const std::vector<int>* topo_rank = nullptr;

  static void* tag(int id) { return reinterpret_cast<void*>(static_cast<std::intptr_t>(id) + 1); }
  int id_of(const sg4::Activity& a) const {
    const auto t = reinterpret_cast<std::intptr_t>(a.get_data<void>());
    return t >= 1 && t <= static_cast<std::intptr_t>(preds_left.size()) ? static_cast<int>(t - 1) : -1;
  }

  void start_exec(int op) {
    sg4::ExecPtr exec = sg4::Exec::init();
    exec->set_flops_amount(flops[op]);
    exec->set_host(exec_host[op]);
    exec->set_data(tag(op));
    (*execs)[op] = exec;
    exec->start();
  }

  void start_next(int lane) {
    if (lane_busy[lane] || queue[lane].empty()) return;
    const int op = queue[lane].top().op;
    queue[lane].pop();
    lane_busy[lane] = 1;
    start_exec(op);
  }

  // Every dependency of `id` is solved.
  void ready(int id) {
    if (id >= n) {
      const int t = id - n;
      sg4::CommPtr comm = sg4::Comm::sendto_init(comm_src[t], comm_dst[t]);
      comm->set_payload_size(comm_bytes[t]);
      comm->set_data(tag(id));
      (*comms)[t] = comm;
      comm->start();
    } else if (order_ready) {
      const int lane = lane_of_op[id];
      queue[lane].push(Entry{sg4::Engine::get_clock(), (*topo_rank)[id], id});
      start_next(lane);
    } else {
      start_exec(id);
    }
  }

  void completed(const sg4::Activity& a) {
    const int id = id_of(a);
    if (id < 0) return;
    if (order_ready && id < n) {
      lane_busy[lane_of_op[id]] = 0;
      start_next(lane_of_op[id]);
    }
    for (int k = succ_begin[id + 1] - 1; k >= succ_begin[id]; --k)
      if (--preds_left[succ[k]] == 0) ready(succ[k]);
  }
};

LazyStep* g_step = nullptr;

void connect_completion_callback() {
  static std::once_flag once;
  std::call_once(once, [] {
    sg4::Activity::on_completion_cb([](const sg4::Activity& a) {
      if (g_step != nullptr && a.get_state() == sg4::Activity::State::FINISHED) g_step->completed(a);
    });
  });
}

// Clears the step pointer however the simulation ends.
struct StepScope {
  explicit StepScope(LazyStep* s) { g_step = s; }
  ~StepScope() { g_step = nullptr; }
  StepScope(const StepScope&) = delete;
  StepScope& operator=(const StepScope&) = delete;
};

}  // namespace

struct DagSimulator::Impl {
  std::unique_ptr<sg4::Engine> engine;
  std::vector<std::string> cfg_used;
  bool order_ready = true;  // aware/order: ready (default) or analytic
  std::string platform_desc;
  Cluster cluster;
  std::vector<sg4::Host*> hosts;  // by device id
  std::vector<double> speed;      // flop/s per device host
  bool loaded = false;
  // The device order comes from the analytic contention simulator.
  AnalyticSimulator analytic{AnalyticMode::kContention};
  Trace order_trace;
  std::shared_ptr<const CostTable> cost_table;  // null: no measured table
  // Per graph.
  std::uint64_t graph_revision = 0;
  bool graph_ready = false;
  OpCostMatrix costs;
  std::vector<int> topo_rank;
};

DagSimulator::DagSimulator(const std::vector<std::string>& cfg) : impl_(std::make_unique<Impl>()) {
  // SimGrid reads --log / --cfg from argv; keep its configuration chatter quiet.
  static char arg0[] = "aware-simgrid-worker";
  static char arg1[] = "--log=xbt_cfg.thres:warning";
  static char* argv[] = {arg0, arg1, nullptr};
  int argc = 2;
  impl_->engine = std::make_unique<sg4::Engine>(&argc, argv);
  std::vector<std::string> entries = kExactNetwork;
  entries.insert(entries.end(), cfg.begin(), cfg.end());
  std::vector<std::string> used;
  for (const std::string& entry : entries) {
    if (entry.find(':') == std::string::npos) {
      throw ConfigError("evaluator 'simgrid': cfg entry '" + entry + "' must be KEY:VALUE");
    }
    // Our own settings travel with SimGrid's cfg entries, under "aware/".
    if (entry.rfind("aware/", 0) == 0) {
      if (entry == "aware/order:ready" || entry == "aware/order:analytic") {
        impl_->order_ready = entry == "aware/order:ready";
        continue;
      }
      throw ConfigError("evaluator 'simgrid': unknown setting '" + entry +
                        "' (known: aware/order:ready, aware/order:analytic)");
    }
    used.push_back(entry);
    try {
      sg4::Engine::set_config(entry);
    } catch (const std::exception& e) {
      throw ConfigError("evaluator 'simgrid': SimGrid rejects cfg entry '" + entry +
                        "': " + first_line(e.what()));
    }
  }
  impl_->cfg_used = used;
  connect_completion_callback();
}

DagSimulator::~DagSimulator() = default;

void DagSimulator::set_cost_table(CostTable table) {
  Impl& m = *impl_;
  m.cost_table = table.empty() ? nullptr : std::make_shared<const CostTable>(std::move(table));
  m.analytic.set_cost_table(m.cost_table, "the client's cost table");
  m.graph_ready = false;  // the cost matrix was built from the old table
}

std::string DagSimulator::describe() const {
  std::string out = impl_->order_ready
                        ? "simgrid 3.32 (flow-level network, one stream per device running its first "
                          "ready op in SimGrid's time; cfg "
                        : "simgrid 3.32 (flow-level network, one in-order stream per device, order "
                          "from the analytic schedule; cfg ";
  for (size_t i = 0; i < impl_->cfg_used.size(); ++i) out += (i ? "," : "") + impl_->cfg_used[i];
  out += ")";
  if (!impl_->platform_desc.empty()) out += " on " + impl_->platform_desc;
  return out;
}

void DagSimulator::load_cluster(const Cluster& cluster, const std::string& platform_file) {
  Impl& m = *impl_;
  AWARE_CHECK(!m.loaded, "a simgrid worker builds one platform per process");
  if (!cluster.finalized()) {
    throw ConfigError("cluster '" + cluster.name() + "' must be finalized before evaluation");
  }
  m.cluster = cluster;
  const int D = cluster.num_devices();
  m.hosts.assign(D, nullptr);
  m.speed.assign(D, 0);
  if (!platform_file.empty()) {
    try {
      m.engine->load_platform(platform_file);
    } catch (const std::exception& e) {
      throw ParseError(platform_file +
                       ": SimGrid cannot load the platform: " + first_line(e.what()));
    }
    for (int d = 0; d < D; ++d) {
      m.hosts[d] = m.engine->host_by_name_or_null(cluster.device(d).name);
      if (m.hosts[d] == nullptr) {
        throw DeviceError(platform_file + ": device '" + cluster.device(d).name +
                          "' is not a host of this platform");
      }
      m.speed[d] = m.hosts[d]->get_speed();
    }
    m.platform_desc = "platform file " + platform_file;
  } else {
    // One full zone: explicit host-to-host routes are exactly Cluster::route.
    auto* zone = sg4::create_full_zone(cluster.name().empty() ? "cluster" : cluster.name());
    for (int d = 0; d < D; ++d) {
      const Device& dev = cluster.device(d);
      m.speed[d] = dev.peak_flops * dev.efficiency;
      // Two cores at the device's speed: its compute and communication streams run
      // side by side without sharing (an exec uses one core; each stream is in order).
      m.hosts[d] = zone->create_host(dev.name, m.speed[d])->set_core_count(2)->seal();
    }
    for (const std::string& sw : cluster.switches()) zone->create_router(sw);
    std::vector<sg4::Link*> links(cluster.num_links());
    for (int l = 0; l < cluster.num_links(); ++l) {
      const Link& link = cluster.link(l);
      const std::string name = link.name.empty() ? "link" + std::to_string(l) : link.name;
      links[l] = zone->create_split_duplex_link(name + "#" + std::to_string(l), link.bandwidth_Bps)
                     ->set_latency(link.latency_us * 1e-6)
                     ->seal();
    }
    for (int s = 0; s < D; ++s) {
      for (int d = 0; d < D; ++d) {
        if (s == d) continue;
        std::vector<sg4::LinkInRoute> route;
        for (const Hop& hop : cluster.route(s, d)) {
          route.emplace_back(links[hop.link], hop.direction == 0
                                                  ? sg4::LinkInRoute::Direction::UP
                                                  : sg4::LinkInRoute::Direction::DOWN);
        }
        zone->add_route(m.hosts[s]->get_netpoint(), m.hosts[d]->get_netpoint(), nullptr, nullptr,
                        route, false);
      }
    }
    zone->seal();
    m.platform_desc = "cluster '" + cluster.name() + "'";
  }
  m.loaded = true;
}

StepResult DagSimulator::evaluate(const OpGraph& graph, const Placement& placement,
                                  StepObserver* observer) {
  Impl& m = *impl_;
  AWARE_CHECK(m.loaded, "simgrid worker: evaluate before the cluster was loaded");
  const Cluster& cluster = m.cluster;
  check_placement(graph, cluster, placement);
  const int n = graph.num_ops();
  const int D = cluster.num_devices();
  if (!m.graph_ready || m.graph_revision != graph.revision()) {
    m.costs = OpCostMatrix(graph, cluster, m.cost_table.get());
    m.topo_rank = topological_rank(graph);
    m.graph_revision = graph.revision();
    m.graph_ready = true;
  }

  // 1. order=analytic: the order each device runs its ops is the analytic
  // contention schedule's. Lanes: each device's compute stream (d) and
  // communication stream (D + d), each in the order the analytic schedule ran it.
  // order=ready leaves the order to the step's lanes, during the run.
  std::vector<std::vector<int>> order(2 * static_cast<size_t>(D));
  if (!m.order_ready) {
    m.analytic.evaluate(graph, cluster, placement, &m.order_trace);
    std::vector<int> ops(n);
    std::iota(ops.begin(), ops.end(), 0);
    const auto& spans = m.order_trace.ops;
    std::sort(ops.begin(), ops.end(), [&](int a, int b) {
      if (spans[a].start_us != spans[b].start_us) return spans[a].start_us < spans[b].start_us;
      if (spans[a].end_us != spans[b].end_us) return spans[a].end_us < spans[b].end_us;
      return m.topo_rank[a] < m.topo_rank[b];
    });
    for (int op : ops) order[placement[op] + (graph.op(op).stream != 0 ? D : 0)].push_back(op);
  }

  // 2. Activities: an Exec per op, a Comm per (op, output, destination device),
  // made when they become ready (LazyStep).
  struct Transfer {
    int src_op, output, src_dev, dst_dev;
    double bytes;
    int refs;  // consumer edges served
  };
  std::vector<Transfer> transfers;
  std::vector<int> edge_transfer(graph.num_edges(), -1);
  std::vector<int> op_refs(n, 0);
  for (int op = 0; op < n; ++op) {
    const int d = placement[op];
    const int first = static_cast<int>(transfers.size());
    for (int e : graph.out_edges(op)) {
      const Edge& edge = graph.edge(e);
      const int dd = placement[edge.dst];
      if (dd == d) {
        ++op_refs[op];
        continue;
      }
      int tid = -1;
      for (int t = first; t < static_cast<int>(transfers.size()) && tid < 0; ++t) {
        if (transfers[t].output == edge.src_output && transfers[t].dst_dev == dd) tid = t;
      }
      if (tid < 0) {
        tid = static_cast<int>(transfers.size());
        transfers.push_back(Transfer{op, edge.src_output, d, dd, edge.bytes, 0});
        ++op_refs[op];
      }
      transfers[tid].bytes = std::max(transfers[tid].bytes, edge.bytes);
      ++transfers[tid].refs;
      edge_transfer[e] = tid;
    }
  }
  const int T = static_cast<int>(transfers.size());
  std::vector<sg4::ExecPtr> execs(n);
  std::vector<sg4::CommPtr> comms(T);
  LazyStep step;
  step.n = n;
  step.order_ready = m.order_ready;
  step.execs = &execs;
  step.comms = &comms;
  step.flops.resize(n);
  step.exec_host.resize(n);
  for (int op = 0; op < n; ++op) {
    step.flops[op] = m.costs.time_us(op, placement[op]) * 1e-6 * m.speed[placement[op]];
    step.exec_host[op] = m.hosts[placement[op]];
  }
  for (const Transfer& tr : transfers) {
    step.comm_src.push_back(m.hosts[tr.src_dev]);
    step.comm_dst.push_back(m.hosts[tr.dst_dev]);
    step.comm_bytes.push_back(static_cast<std::uint64_t>(std::llround(tr.bytes)));
  }

  // 3. Dependencies, each pair once: data edges in edge order (op -> op on one
  // device, comm -> consumer), then op -> its comms, then (order=analytic) each
  // lane's order; kept per activity in that order.
  std::unordered_set<std::uint64_t> seen;
  seen.reserve(2 * static_cast<size_t>(graph.num_edges() + n));
  std::vector<std::pair<int, int>> deps;
  deps.reserve(static_cast<size_t>(graph.num_edges()) + T + n);
  auto exec_edge = [&](int a, int b) {
    if (seen.insert((static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b)).second)
      deps.emplace_back(a, b);
  };
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    if (edge_transfer[e] < 0) {
      exec_edge(edge.src, edge.dst);
      continue;
    }
    const int t = edge_transfer[e];
    // Comm -> consumer, keyed apart from exec pairs by the high bit.
    const std::uint64_t key =
        (1ULL << 63) | (static_cast<std::uint64_t>(t) << 32) | static_cast<std::uint32_t>(edge.dst);
    if (seen.insert(key).second) deps.emplace_back(n + t, edge.dst);
  }
  for (int t = 0; t < T; ++t) deps.emplace_back(transfers[t].src_op, n + t);
  for (const std::vector<int>& lane : order) {
    for (size_t k = 1; k < lane.size(); ++k) exec_edge(lane[k - 1], lane[k]);
  }
  const int A = n + T;
  step.succ_begin.assign(A + 1, 0);
  step.preds_left.assign(A, 0);
  for (const auto& [a, b] : deps) {
    ++step.succ_begin[a + 1];
    ++step.preds_left[b];
  }
  for (int a = 0; a < A; ++a) step.succ_begin[a + 1] += step.succ_begin[a];
  step.succ.resize(deps.size());
  {
    std::vector<int> fill(step.succ_begin.begin(), step.succ_begin.end() - 1);
    for (const auto& [a, b] : deps) step.succ[fill[a]++] = b;  // stable: add order kept
  }

  // 4. Run: roots (ops with no dependency) are ready now, in op order.
  const double t0 = sg4::Engine::get_clock();
  if (m.order_ready) {
    step.topo_rank = &m.topo_rank;
    step.lane_of_op.resize(n);
    for (int op = 0; op < n; ++op) step.lane_of_op[op] = placement[op] + (graph.op(op).stream != 0 ? D : 0);
    step.lane_busy.assign(2 * static_cast<size_t>(D), 0);
    step.queue.resize(2 * static_cast<size_t>(D));
  }
  {
    StepScope scope(&step);
    for (int op = 0; op < n; ++op) {
      if (step.preds_left[op] == 0) step.ready(op);
    }
    m.engine->run();
  }

  StepResult result;
  result.evaluator = "simgrid";
  result.device_busy_us.assign(D, 0);
  result.peak_memory_bytes.assign(D, 0);
  std::vector<double> start(n), end(n), tstart(transfers.size()), tend(transfers.size());
  double step_end = 0;
  for (int op = 0; op < n; ++op) {
    AWARE_CHECK(execs[op] && execs[op]->get_state() == sg4::Activity::State::FINISHED,
                "simgrid left op '" + graph.op(op).name + "' unfinished");
    start[op] = to_us(execs[op]->get_start_time() - t0);
    end[op] = to_us(execs[op]->get_finish_time() - t0);
    step_end = std::max(step_end, end[op]);
    result.device_busy_us[placement[op]] += m.costs.time_us(op, placement[op]);
  }
  for (size_t t = 0; t < transfers.size(); ++t) {
    AWARE_CHECK(comms[t] && comms[t]->get_state() == sg4::Activity::State::FINISHED,
                "simgrid left a transfer of op '" + graph.op(transfers[t].src_op).name + "' unfinished");
    tstart[t] = to_us(comms[t]->get_start_time() - t0);
    tend[t] = to_us(comms[t]->get_finish_time() - t0);
    step_end = std::max(step_end, tend[t]);
    result.bytes_moved += transfers[t].bytes;
  }
  result.transfers = static_cast<int>(transfers.size());
  result.step_time_us = step_end;

  // 5. Memory, replayed from SimGrid's times with the analytic simulator's rules:
  // parameters resident; outputs from the op's start until their last consumer
  // ends (received copies from the transfer's start); workspace while running.
  // At one instant frees come before allocations, producers before consumers.
  struct MemEvent {
    double time;
    int phase;  // 0 free (op end), 1 free (transfer end), 2 alloc (op / transfer start)
    int rank;   // topological rank of the op involved
    int kind;   // 0 op, 1 transfer
    int id;
  };
  std::vector<MemEvent> events;
  events.reserve(2 * (n + transfers.size()));
  for (int op = 0; op < n; ++op) {
    events.push_back({start[op], 2, m.topo_rank[op], 0, op});
    events.push_back({end[op], 0, m.topo_rank[op], 0, op});
  }
  for (size_t t = 0; t < transfers.size(); ++t) {
    const int rank = m.topo_rank[transfers[t].src_op];
    events.push_back({tstart[t], 2, rank, 1, static_cast<int>(t)});
    events.push_back({tend[t], 1, rank, 1, static_cast<int>(t)});
  }
  std::sort(events.begin(), events.end(), [](const MemEvent& a, const MemEvent& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.phase != b.phase) return a.phase < b.phase;
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.id < b.id;
  });
  std::vector<double> mem(D, 0);
  auto allocate = [&](int device, double bytes, int op) {
    mem[device] += bytes;
    result.peak_memory_bytes[device] = std::max(result.peak_memory_bytes[device], mem[device]);
    if (result.feasible && mem[device] > cluster.device(device).memory_bytes) {
      result.feasible = false;
      result.infeasible_reason =
          "device '" + cluster.device(device).name + "' out of memory at op '" + graph.op(op).name +
          "': " + format_memory_shortfall(mem[device], cluster.device(device).memory_bytes);
    }
  };
  for (int op = 0; op < n; ++op) {
    if (graph.op(op).param_bytes > 0) allocate(placement[op], graph.op(op).param_bytes, op);
  }
  std::vector<int> refs = op_refs;
  std::vector<int> transfer_refs(transfers.size());
  for (size_t t = 0; t < transfers.size(); ++t) transfer_refs[t] = transfers[t].refs;
  for (const MemEvent& ev : events) {
    if (ev.kind == 0) {
      const int op = ev.id;
      const int d = placement[op];
      const Op& o = graph.op(op);
      if (ev.phase == 2) {
        allocate(d, o.total_output_bytes() + o.temp_bytes, op);
        continue;
      }
      mem[d] -= o.temp_bytes;
      for (int e : graph.in_edges(op)) {
        const int src = graph.edge(e).src;
        if (edge_transfer[e] < 0) {
          if (--refs[src] == 0) mem[d] -= graph.op(src).total_output_bytes();
        } else if (--transfer_refs[edge_transfer[e]] == 0) {
          mem[d] -= transfers[edge_transfer[e]].bytes;
        }
      }
      if (op_refs[op] == 0) mem[d] -= o.total_output_bytes();
    } else {
      const Transfer& tr = transfers[ev.id];
      if (ev.phase == 2) {
        allocate(tr.dst_dev, tr.bytes, tr.src_op);
      } else if (--refs[tr.src_op] == 0) {
        mem[tr.src_dev] -= graph.op(tr.src_op).total_output_bytes();
      }
    }
  }

  if (observer != nullptr) {
    for (int op = 0; op < n; ++op) observer->on_op(OpSpan{op, placement[op], start[op], end[op]});
    for (size_t t = 0; t < transfers.size(); ++t) {
      const Transfer& tr = transfers[t];
      observer->on_transfer(link_transfer_span(cluster, tr.src_op, tr.output, tr.src_dev,
                                               tr.dst_dev, tr.bytes, tstart[t], tend[t]));
    }
  }
  return result;
}

}  // namespace aware
