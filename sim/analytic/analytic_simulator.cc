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
#include "sim/analytic/contention.h"
#include "sim/analytic/prepared.h"

namespace aware {

using namespace analytic_detail;


AnalyticSimulator::AnalyticSimulator(AnalyticMode mode, PlacetoConstants constants)
    : mode_(mode), constants_(constants) {}

std::unique_ptr<AnalyticSimulator> AnalyticSimulator::from_options(const Options& options) {
  check_known_options(options,
                      {"mode", "placeto.delta1_us", "placeto.delta2_us", "placeto.bytes_per_us",
                       "costs", "slowdown.compute", "slowdown.memory", "slowdown.memory_from_bytes", "copies", "queue",
                       "host.op_us", "host.copy_us"},
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
  interference.memory_from_bytes = option_double(options, "slowdown.memory_from_bytes", 0, owner);
  if (!(interference.memory_from_bytes >= 0) || !std::isfinite(interference.memory_from_bytes))
    throw ConfigError(owner + ": slowdown.memory_from_bytes must be a byte count >= 0");
  const std::string copies = option_string(options, "copies", "links");
  if (copies != "links" && copies != "consumer")
    throw ConfigError(owner + ": copies '" + copies + "' unknown (known: links, consumer)");
  interference.copies_on_consumer = copies == "consumer";
  const std::string queue = option_string(options, "queue", "fifo");
  if (queue != "fifo" && queue != "rank")
    throw ConfigError(owner + ": queue '" + queue + "' unknown (known: fifo, rank)");
  interference.rank_queue = queue == "rank";
  if (m == AnalyticMode::kPlaceto && interference.rank_queue)
    throw ConfigError(owner + ": queue=rank applies to contention mode only");
  if (m == AnalyticMode::kPlaceto && interference.slows())
    throw ConfigError(owner + ": slowdown.* applies to contention mode only");
  if (m == AnalyticMode::kPlaceto && interference.copies_on_consumer)
    throw ConfigError(owner + ": copies=consumer applies to contention mode only");
  interference.host_op_us = option_double(options, "host.op_us", 0, owner);
  interference.host_copy_us = option_double(options, "host.copy_us", 0, owner);
  for (double us : {interference.host_op_us, interference.host_copy_us})
    if (!(us >= 0) || !std::isfinite(us))
      throw ConfigError(owner + ": host.op_us and host.copy_us must be microseconds >= 0");
  if (m == AnalyticMode::kPlaceto && interference.host_issues())
    throw ConfigError(owner + ": host.* applies to contention mode only");
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

void AnalyticSimulator::set_interference(Interference interference) {
  if (interference.compute != interference_.compute || interference.memory != interference_.memory ||
      interference.memory_from_bytes != interference_.memory_from_bytes)
    prepared_.reset();  // the per-op slowdowns are made in prepare()
  interference_ = interference;
  if (prepared_) prepared_->moves = {};  // its checkpoints were simulated with the old one
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
    if (!cost_table_->pair_slowdowns.empty() && mode_ == AnalyticMode::kContention)
      text += "; devices slow each other by the table's measured factor per op type";
  }
  if (interference_.slows()) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer,
                  "; devices slow each other: x%.3g compute-bound, x%.3g memory-bound",
                  interference_.compute, interference_.memory);
    text += buffer;
    if (interference_.memory_from_bytes > 0) {
      std::snprintf(buffer, sizeof buffer, " (from %.3g bytes)", interference_.memory_from_bytes);
      text += buffer;
    }
  }
  if (interference_.copies_on_consumer) text += "; copies run on the consumer's compute stream";
  if (interference_.rank_queue) text += "; each device runs its queued task of lowest topological rank";
  if (interference_.host_issues()) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer, "; one host issues every task: %.3g us an op, %.3g us a copy",
                  interference_.host_op_us, interference_.host_copy_us);
    text += buffer;
  }
  return text + ")";
}

bool AnalyticSimulator::sparse_routes(const Cluster& cluster) const {
  return route_table_ == RouteTable::kSparse || cluster.num_devices() > Prepared::kDenseRouteDevices;
}

void AnalyticSimulator::set_route_table(RouteTable table) {
  if (table == route_table_) return;
  route_table_ = table;
  prepared_.reset();
}

std::unique_ptr<Evaluator> AnalyticSimulator::clone() const {
  auto copy = std::make_unique<AnalyticSimulator>(mode_, constants_);
  copy->set_cost_table(cost_table_, cost_table_label_);
  copy->set_interference(interference_);
  copy->set_route_table(route_table_);
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
  // Per device class (the cost matrix's: the same peak, efficiency and memory bandwidth).
  const int K = p->costs.num_classes();
  std::vector<int> first_of_class(static_cast<size_t>(K), -1);
  for (int d = D - 1; d >= 0; --d) first_of_class[static_cast<size_t>(p->costs.device_class(d))] = d;
  p->slowdown.assign(static_cast<size_t>(n) * K, 1);
  p->slows = false;
  if (mode_ == AnalyticMode::kContention) {
    for (int op = 0; op < n; ++op) {
      const Op& o = graph.op(op);
      for (int k = 0; k < K; ++k) {
        const Device& dev = cluster.device(first_of_class[static_cast<size_t>(k)]);
        double f = cost_table_ ? cost_table_->pair_slowdown(o.type, dev.kind) : 0;
        if (!(f > 0)) {
          const bool memory_bound = o.bytes_accessed * dev.peak_flops * dev.efficiency > o.flops * dev.memory_Bps &&
                                    o.bytes_accessed >= interference_.memory_from_bytes;
          f = memory_bound ? interference_.memory : interference_.compute;
        }
        p->slowdown[static_cast<size_t>(op) * K + k] = f;
        p->slows = p->slows || f != 1;
      }
    }
  }
  p->topo_rank = topological_rank(graph);
  p->out_total_bytes.resize(n);
  p->param_bytes.resize(n);
  p->temp_bytes.resize(n);
  double all_output_bytes = 0;
  p->integral_output_bytes = true;
  for (int op = 0; op < n; ++op) {
    p->out_total_bytes[op] = graph.op(op).total_output_bytes();
    p->param_bytes[op] = graph.op(op).param_bytes;
    p->temp_bytes[op] = graph.op(op).temp_bytes;
    all_output_bytes += p->out_total_bytes[op];
    if (std::floor(p->out_total_bytes[op]) != p->out_total_bytes[op]) p->integral_output_bytes = false;
  }
  if (!(all_output_bytes < 9007199254740992.0)) p->integral_output_bytes = false;  // 2^53
  p->sparse_routes = sparse_routes(cluster);
  p->route_begin.assign(p->sparse_routes ? 1 : static_cast<size_t>(D) * D + 1, 0);
  p->route_latency_us.assign(p->sparse_routes ? 0 : static_cast<size_t>(D) * D, 0);
  p->route_bandwidth_Bps.assign(p->sparse_routes ? 0 : static_cast<size_t>(D) * D, 0);
  for (int s = 0; s < (p->sparse_routes ? 0 : D); ++s) {
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
  p->children.clear();
  for (int op = 0; op < n; ++op) {
    p->child_begin[op] = static_cast<int>(p->children.size());
    const std::vector<double>& sizes = graph.op(op).output_bytes;
    for (const auto& [c, output] : children[op])
      p->children.push_back({c, output, output < static_cast<int>(sizes.size()) ? sizes[output] : 0.0});
  }
  p->child_begin[n] = static_cast<int>(p->children.size());
  p->bus_next.resize(p->children.size());
  p->bus_tail.resize(p->children.size() + 1);
  std::vector<std::string> names(n);
  for (int op = 0; op < n; ++op) names[op] = graph.op(op).name;
  const std::vector<int> name_rank = byte_order_rank(names);
  p->waits.resize(n);
  for (int op = 0; op < n; ++op) p->waits[op].name_rank = name_rank[op];
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
  std::vector<int> in_row_of_edge(static_cast<size_t>(graph.num_edges()), -1);
  for (size_t i = 0; i < p->in_edge.size(); ++i) in_row_of_edge[static_cast<size_t>(p->in_edge[i])] = static_cast<int>(i);
  p->out_in_row.resize(p->out_edge.size());
  for (size_t i = 0; i < p->out_edge.size(); ++i) p->out_in_row[i] = in_row_of_edge[static_cast<size_t>(p->out_edge[i])];
  if (n >= (1 << 30) || D >= (1 << 30)) throw ConfigError("graph too large for the analytic simulator");
  std::vector<std::string> device_names(D);
  for (int d = 0; d < D; ++d) device_names[d] = cluster.device(d).name;
  p->device_name_rank = byte_order_rank(device_names);
  p->device_of_name_rank.resize(D);
  for (int d = 0; d < D; ++d) p->device_of_name_rank[p->device_name_rank[d]] = d;

  // Scratch, sized for the worst case.
  const size_t edges = static_cast<size_t>(graph.num_edges());
  if (mode_ == AnalyticMode::kPlaceto) {
    p->ready.assign(D, {});
    p->bus.assign(D, {});
    for (auto& q : p->ready) q.reserve(n);
    for (auto& q : p->bus) q.reserve(n + 1);
    p->events.reserve(4 * (n + edges) + 4 * D + 16);
    p->transfers.reserve(edges + 1);
    p->slot_time.resize(2 * D);
    p->sources.assign(D, {});
    for (auto& q : p->sources) q.reserve(n);
    p->source_head.resize(D);
    p->bus_head.resize(D);
    p->ran.assign(D, {});
    for (auto& r : p->ran) r.reserve(n);
    p->freed_first.resize(n);
    p->freed_next.resize(n);
    p->start_us.resize(n);
    p->end_us.resize(n);
    p->device_free_us.resize(D);
    p->bus_free_us.resize(D);
    p->mem_now.resize(D);
    p->mem_allocs.reserve(n);
    p->mem_frees.reserve(n);
  } else {
    size_contention_scratch(*p, graph.num_edges(), p->full);
  }
  p->stream.resize(n);
  for (int op = 0; op < n; ++op) p->stream[op] = graph.op(op).stream;
  prepared_ = std::move(p);
}

namespace {
void check_placement_fast(const OpGraph& graph, const Cluster& cluster, const Placement& placement) {
  if (placement.size() != graph.num_ops()) check_placement(graph, cluster, placement);
  for (int op = 0; op < graph.num_ops(); ++op) {
    if (placement[op] < 0 || placement[op] >= cluster.num_devices()) {
      check_placement(graph, cluster, placement);
    }
  }
}
}  // namespace

StepResult AnalyticSimulator::run_step(const OpGraph& graph, const Cluster& cluster,
                                       const Placement& placement, StepObserver* observer) {
  check_placement_fast(graph, cluster, placement);
  prepare(graph, cluster);
  StepResult result = mode_ == AnalyticMode::kContention
                          ? run_contention(graph, cluster, placement, observer)
                          : run_placeto(graph, cluster, placement, observer);
  result.evaluator = "analytic";
  return result;
}

// ------------------------------------------------------------ contention mode

StepResult AnalyticSimulator::run_contention(const OpGraph& graph, const Cluster& cluster,
                                             const Placement& placement, StepObserver* observer) {
  ContentionRun step(*prepared_, prepared_->full, graph, cluster, placement.device_of_op,
                     interference_);
  StepResult result = step.run();
  if (observer != nullptr) step.report(*observer);
  return result;
}

// ------------------------------------------------------------ moves

namespace {
// Checkpoints per step: more cost a full run more copying, fewer leave a move
// more rounds to re-simulate.
constexpr int kCheckpointsPerStep = 16;
// Recording checkpoints costs about a tenth of a step. Every kReviewEvery moves
// the evaluator checks the share of rounds the moves skipped; under kMinSkipped
// (a graph whose every op waits on a source op, like a zoo model's weights) it
// stops recording for kPauseFor moves, then tries again. Results never depend
// on this: a move without checkpoints is a full run.
constexpr long long kReviewEvery = 64;
constexpr double kMinSkipped = 0.2;
constexpr long long kPauseFor = 4096;
}  // namespace

StepResult AnalyticSimulator::run_move(const OpGraph& graph, const Cluster& cluster,
                                       const Placement& prev, const std::vector<OpMove>& moves) {
  // Checkpoints record every route's queue, which clusters with routes kept
  // only as used cannot offer: a move there is a full run.
  if (mode_ != AnalyticMode::kContention || sparse_routes(cluster) || interference_.rank_queue)
    return Evaluator::run_move(graph, cluster, prev, moves);
  check_placement_fast(graph, cluster, prev);
  prepare(graph, cluster);
  Prepared& p = *prepared_;
  Prepared::Moves& m = p.moves;
  if (m.base_log.stride == 0) {
    size_contention_scratch(p, graph.num_edges(), m.base);
    size_contention_scratch(p, graph.num_edges(), m.candidate);
    // Rounds: about one per op end and one per transfer end.
    const int rounds_estimate = p.num_ops + graph.num_edges() / 2;
    m.base_log.stride = m.candidate_log.stride = std::max(1, rounds_estimate / kCheckpointsPerStep);
    m.next_review = kReviewEvery;
  }
  if (++m.moves_seen >= m.next_review) {
    const bool paying = m.rounds_skipped >= kMinSkipped * m.rounds_total;
    m.checkpoints = !m.checkpoints || paying || move_checkpoints_ == MoveCheckpoints::kAlways;
    m.next_review = m.moves_seen + (m.checkpoints ? kReviewEvery : kPauseFor);
    m.rounds_skipped = m.rounds_total = 0;
  }
  // The state `prev` continues from: the last move (accepted), the base
  // (the move was rejected), or neither (a full run becomes the base).
  if (m.have_candidate && prev.device_of_op == m.candidate_placement) {
    std::swap(m.base, m.candidate);
    m.base_placement.swap(m.candidate_placement);
    std::swap(m.base_result, m.candidate_result);
    if (m.candidate_from < 0) {
      std::swap(m.base_log, m.candidate_log);
    } else {
      m.base_log.used = m.candidate_from + 1;
      for (int i = 0; i < m.candidate_log.used; ++i) {
        if (m.base_log.used == static_cast<int>(m.base_log.entries.size())) m.base_log.entries.emplace_back();
        std::swap(m.base_log.entries[m.base_log.used++], m.candidate_log.entries[i]);
      }
    }
    m.have_candidate = false;
  } else if (!m.have_base || prev.device_of_op != m.base_placement ||
             (m.checkpoints && m.base_log.used == 0)) {
    m.base_placement = prev.device_of_op;
    m.base_log.used = 0;
    ContentionRun run(p, m.base, graph, cluster, m.base_placement, interference_,
                      m.checkpoints ? &m.base_log : nullptr);
    m.base_result = run.run();
    m.base_result.evaluator = "analytic";
    m.have_base = true;
    m.have_candidate = false;
  }
  m.candidate_placement = m.base_placement;
  Placement next(std::move(m.candidate_placement));
  apply_moves(graph, cluster, next, moves);
  m.candidate_placement = std::move(next.device_of_op);
  // The first round any moved op's placement is read: when its first producer ends.
  int first_round = std::numeric_limits<int>::max();
  for (const OpMove& move : moves) {
    if (m.base_placement[move.op] == move.device) continue;
    if (p.in_begin[move.op] == p.in_begin[move.op + 1]) first_round = 0;
    for (int i = p.in_begin[move.op]; i < p.in_begin[move.op + 1]; ++i)
      first_round = std::min(first_round, m.base.finish_round[p.in_src[i]]);
  }
  if (first_round == std::numeric_limits<int>::max()) {  // nothing moves
    m.have_candidate = false;  // its placement was just overwritten
    return m.base_result;
  }
  int from = 0;
  while (from + 1 < m.base_log.used && m.base_log.entries[from + 1].round <= first_round) ++from;
  m.candidate_log.used = 0;
  CheckpointLog* log = m.checkpoints ? &m.candidate_log : nullptr;
  ContentionRun run(p, m.candidate, graph, cluster, m.candidate_placement, interference_, log);
  StepResult result;
  if (m.checkpoints && m.base_log.used > 0 && run.resume(m.base, m.base_log.entries[from], result)) {
    m.candidate_from = from;
    m.rounds_skipped += m.base_log.entries[from].round;
    m.rounds_total += run.rounds();
  } else {
    ContentionRun full(p, m.candidate, graph, cluster, m.candidate_placement, interference_, log);
    result = full.run();
    m.candidate_from = -1;
    m.rounds_total += full.rounds();
  }
  m.have_candidate = true;
  result.evaluator = "analytic";
  m.candidate_result = result;
  return result;
}

}  // namespace aware
