#include "agents/rl/mdp.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "agents/common/placer_common.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/rng.h"

namespace aware::rl {

namespace {
constexpr double kUsPerS = 1e6;
}  // namespace

MdpMode parse_mdp_mode(const std::string& text) {
  if (text == "one-shot") return MdpMode::kOneShot;
  if (text == "per-node") return MdpMode::kPerNode;
  throw ConfigError("mode must be one-shot or per-node, got '" + text + "'");
}

PenaltyKind parse_penalty_kind(const std::string& text) {
  if (text == "placeto") return PenaltyKind::kPlacetoMemory;
  if (text == "fixed") return PenaltyKind::kFixed100s;
  throw ConfigError("penalty must be placeto or fixed, got '" + text + "'");
}

PlacementMdp::PlacementMdp(const OpGraph& graph, const Cluster& cluster,
                           std::unique_ptr<Evaluator> evaluator, MdpOptions options)
    : graph_(&graph),
      cluster_(&cluster),
      evaluator_(std::move(evaluator)),
      options_(std::move(options)),
      env_(graph, cluster, *evaluator_, options_.penalty, options_.budget_evals,
           options_.budget_seconds, nullptr) {
  if (options_.start != "random" && options_.start != "fixed" && options_.start != "zero")
    throw ConfigError("start must be random, fixed or zero, got '" + options_.start + "'");
  if (options_.budget_evals < 0) throw ConfigError("budget_evals must be 0 (no limit) or positive");
  if (!(options_.budget_seconds >= 0)) throw ConfigError("budget_seconds must be 0 (no limit) or positive");
  if (cluster.num_devices() < 1) throw ConfigError("cluster " + cluster.name() + " has no devices");
  graph.validate();
  placing::Units units = placing::colocation_units(graph);
  unit_of_op_ = std::move(units.unit_of_op);
  unit_ops_ = std::move(units.ops_of_unit);
  const std::vector<int> rank = topological_rank(graph);
  std::vector<int> first_rank(unit_ops_.size(), std::numeric_limits<int>::max());
  for (int op = 0; op < graph.num_ops(); ++op)
    first_rank[unit_of_op_[op]] = std::min(first_rank[unit_of_op_[op]], rank[op]);
  unit_order_.resize(unit_ops_.size());
  std::iota(unit_order_.begin(), unit_order_.end(), 0);
  std::stable_sort(unit_order_.begin(), unit_order_.end(),
                   [&](int a, int b) { return first_rank[a] < first_rank[b]; });
  placement_ = Placement(std::vector<int>(graph.num_ops(), 0));
}

int PlacementMdp::current_unit() const {
  if (options_.mode == MdpMode::kOneShot) return 0;
  return position_ < num_units() ? unit_order_[position_] : num_units();
}

void PlacementMdp::reset(std::uint64_t seed) {
  started_ = true;
  done_ = false;
  position_ = 0;
  current_us_ = std::numeric_limits<double>::infinity();
  placement_ = Placement(std::vector<int>(num_ops(), 0));
  if (options_.mode == MdpMode::kOneShot) return;
  const int devices = num_devices();
  const auto draw = [&](std::uint64_t s) {
    SplitMixRng rng(s * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL);
    Placement p(std::vector<int>(num_ops(), 0));
    for (const auto& ops : unit_ops_) {
      const int d = rng.below(devices);
      for (int op : ops) p[op] = d;
    }
    return p;
  };
  if (options_.start == "random") {
    placement_ = draw(seed);
  } else if (options_.start == "fixed") {
    if (fixed_start_.size() != num_ops()) fixed_start_ = draw(seed);
    placement_ = fixed_start_;
  }
  if (!env_.exhausted()) current_us_ = env_.evaluate(placement_);
}

void PlacementMdp::check_running(const char* call, MdpMode wanted) const {
  if (options_.mode != wanted)
    throw ConfigError(std::string(call) + " is for the " + (wanted == MdpMode::kOneShot ? "one-shot" : "per-node") +
                      " mode; this environment is " + (options_.mode == MdpMode::kOneShot ? "one-shot" : "per-node"));
  if (!started_) throw ConfigError(std::string(call) + " before reset()");
  if (done_) throw ConfigError(std::string(call) + " after the episode ended: call reset()");
}

MdpStep PlacementMdp::step_placement(const std::vector<int>& devices) {
  check_running("step with a whole placement", MdpMode::kOneShot);
  if (static_cast<int>(devices.size()) != num_units())
    throw ConfigError("the action gives " + std::to_string(devices.size()) + " devices; expected one per colocation unit: " +
                      std::to_string(num_units()));
  for (int u = 0; u < num_units(); ++u)
    if (devices[u] < 0 || devices[u] >= num_devices())
      throw ConfigError("the action puts unit " + std::to_string(u) + " (op " + graph_->op(unit_ops_[u][0]).name +
                        ") on device " + std::to_string(devices[u]) + "; the cluster has devices 0.." +
                        std::to_string(num_devices() - 1));
  MdpStep out;
  done_ = true;
  out.terminated = true;
  if (env_.exhausted()) {
    out.truncated = true;
    return out;
  }
  for (int u = 0; u < num_units(); ++u)
    for (int op : unit_ops_[u]) placement_[op] = devices[u];
  out.penalised_us = env_.evaluate(placement_);
  current_us_ = out.penalised_us;
  out.evaluated = true;
  out.step_us = env_.last_step_us();
  out.feasible = env_.last_feasible();
  out.reward = -out.penalised_us / kUsPerS;
  return out;
}

MdpStep PlacementMdp::step_device(int device) {
  check_running("step with one device", MdpMode::kPerNode);
  if (device < 0 || device >= num_devices())
    throw ConfigError("the action is device " + std::to_string(device) + "; the cluster has devices 0.." +
                      std::to_string(num_devices() - 1));
  MdpStep out;
  const int unit = unit_order_[position_];
  ++position_;
  done_ = position_ >= num_units();
  out.terminated = done_;
  if (env_.exhausted() || !(current_us_ < std::numeric_limits<double>::infinity())) {
    // Nothing evaluated: the budget is spent (or was when the episode started).
    for (int op : unit_ops_[unit]) placement_[op] = device;
    out.truncated = true;
    done_ = true;
    return out;
  }
  std::vector<OpMove> moves;
  for (int op : unit_ops_[unit])
    if (placement_[op] != device) moves.push_back({op, device});
  const double before = current_us_;
  out.penalised_us = env_.evaluate_move(placement_, moves);
  placement_ = env_.last_placement();
  current_us_ = out.penalised_us;
  out.evaluated = true;
  out.step_us = env_.last_step_us();
  out.feasible = env_.last_feasible();
  out.reward = (before - out.penalised_us) / kUsPerS;
  if (!out.terminated && env_.exhausted()) {
    out.truncated = true;
    done_ = true;
  }
  return out;
}

const std::vector<std::string>& op_feature_names() {
  static const std::vector<std::string> names = {"compute_time", "output_bytes", "param_bytes", "in_degree",
                                                 "out_degree",   "depth",        "phase"};
  return names;
}

std::vector<float> op_feature_matrix(const OpGraph& graph, const Cluster& cluster) {
  const int n = graph.num_ops();
  constexpr int F = kOpFeatureColumns;
  std::vector<double> raw(static_cast<std::size_t>(n) * F, 0.0);
  std::vector<int> depth(n, 0);
  for (int op : topological_order(graph))
    for (int e : graph.in_edges(op)) depth[op] = std::max(depth[op], depth[graph.edge(e).src] + 1);
  for (int op = 0; op < n; ++op) {
    const Op& o = graph.op(op);
    double* row = &raw[static_cast<std::size_t>(op) * F];
    row[0] = cluster.num_devices() > 0 ? op_time_us(o, cluster.device(0)) : 0.0;
    row[1] = o.total_output_bytes();
    row[2] = o.param_bytes;
    row[3] = static_cast<double>(graph.in_edges(op).size());
    row[4] = static_cast<double>(graph.out_edges(op).size());
    row[5] = depth[op];
    row[6] = static_cast<double>(static_cast<int>(o.phase)) / 2.0;
  }
  std::vector<float> out(raw.size(), 0.0f);
  for (int c = 0; c < F; ++c) {
    double top = 0;
    for (int op = 0; op < n; ++op) top = std::max(top, raw[static_cast<std::size_t>(op) * F + c]);
    const double scale = (c == 6 || top <= 0) ? 1.0 : top;  // the phase is already in [0, 1]
    for (int op = 0; op < n; ++op)
      out[static_cast<std::size_t>(op) * F + c] = static_cast<float>(raw[static_cast<std::size_t>(op) * F + c] / scale);
  }
  return out;
}

}  // namespace aware::rl
