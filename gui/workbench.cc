#include "gui/workbench.h"

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "core/cost_model.h"
#include "core/errors.h"
#include "core/random_dag.h"
#include "core/units.h"
#include "datasets/load.h"
#ifdef AWARE_GUI_HAVE_FUSION
#include "agents/fusion/fusion.h"
#endif

namespace aware::gui {

namespace {

ConfigError too_large_for_gui(const std::string& spec, long long ops) {
  return ConfigError("graph '" + spec + "': " + std::to_string(ops) +
                     " ops, more than the GUI opens (at most " + std::to_string(kMaxGuiOps) +
                     "); the CLI (aware graph info, place, simulate) reads it");
}

}  // namespace

OpGraph load_gui_graph(const std::string& spec) {
  if (spec.rfind("random:", 0) == 0) {
    // random:N[:SEED[:WIDTH]]
    std::vector<long long> parts;
    std::stringstream in(spec.substr(7));
    std::string item;
    while (std::getline(in, item, ':')) {
      char* end = nullptr;
      const long long v = std::strtoll(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v <= 0)
        throw ConfigError("graph '" + spec +
                          "': expected random:N[:SEED[:WIDTH]] with positive integers");
      parts.push_back(v);
    }
    if (parts.empty() || parts.size() > 3 || parts[0] > 1000000)
      throw ConfigError("graph '" + spec + "': expected random:N[:SEED[:WIDTH]], N <= 1000000");
    if (parts[0] > kMaxGuiOps) throw too_large_for_gui(spec, parts[0]);
    OpGraph g = random_layered_dag(static_cast<int>(parts[0]), parts.size() > 1 ? parts[1] : 1,
                                   parts.size() > 2 ? static_cast<int>(parts[2]) : 8);
    g.set_source(spec);
    return g;
  }
  OpGraph graph = load_graph(spec);
  if (graph.num_ops() > kMaxGuiOps) throw too_large_for_gui(spec, graph.num_ops());
  return graph;
}

Workbench::Workbench(QObject* parent) : QObject(parent) {
  cluster_ = std::make_shared<const Cluster>(load_cluster("preset:k40x4"));
  cluster_spec_ = "preset:k40x4";
}

void Workbench::loadGraph(const std::string& spec) {
  const auto begin = std::chrono::steady_clock::now();
  auto graph = std::make_shared<const OpGraph>(load_gui_graph(spec));
  graph_load_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  graph_ = std::move(graph);
  base_graph_ = graph_;
  strategy_.clear();
  graph_spec_ = spec;
  has_placement_ = false;
  updateBound();
  Q_EMIT graphChanged();
  Q_EMIT placementChanged();
}

void Workbench::loadCluster(const std::string& spec) {
  auto cluster = std::make_shared<const Cluster>(load_cluster(spec));
  cluster_ = std::move(cluster);
  cluster_spec_ = spec;
  has_placement_ = false;
  const bool rewritten = !strategy_.empty();
  if (rewritten) {
    graph_ = base_graph_;
    strategy_.clear();
  }
  updateBound();
  if (rewritten) Q_EMIT graphChanged();
  Q_EMIT clusterChanged();
  Q_EMIT placementChanged();
}

void Workbench::setEvaluator(const std::string& name) {
  EvaluatorRegistry::instance().create(name);  // throws for an unknown name
  evaluator_name_ = name;
}

void Workbench::setPlacement(const Placement& placement, const std::string& method) {
  if (!graph_) throw ConfigError("no graph is open");
  check_placement(*graph_, *cluster_, placement, method);
  auto evaluator = EvaluatorRegistry::instance().create(evaluator_name_);
  Trace trace;
  StepResult result = evaluator->evaluate(*graph_, *cluster_, placement, &trace);
  setPlacement(placement, method, std::move(result), std::move(trace));
}

void Workbench::setPlacement(const Placement& placement, const std::string& method,
                             StepResult result, Trace trace) {
  if (!graph_) throw ConfigError("no graph is open");
  check_placement(*graph_, *cluster_, placement, method);
  undo_.clear();  // a placement from elsewhere (moveOps and undo keep their history)
  placement_ = placement;
  result_ = std::move(result);
  trace_ = std::move(trace);
  critical_path_ = critical_path_from_trace(*graph_, placement_, trace_);
  method_ = method;
  has_placement_ = true;
  Q_EMIT placementChanged();
}

void Workbench::moveOps(const std::vector<int>& ops, int device) {
  if (!graph_ || !has_placement_) throw ConfigError("what if: place the graph first, then move ops");
  std::vector<OpMove> moves;
  for (int op : ops) moves.push_back({op, device});
  Placement edited = placement_;
  apply_moves(*graph_, *cluster_, edited, moves);  // throws DeviceError for a bad op or device
  if (edited == placement_) return;
  UndoEntry before{graph_, cluster_, placement_, method_};
  const std::string from = method_.rfind("hand-edited", 0) == 0 ? method_ : "hand-edited (from " + method_ + ")";
  std::vector<UndoEntry> stack = std::move(undo_);
  setPlacement(edited, from);  // scores it; emits placementChanged
  undo_ = std::move(stack);
  undo_.push_back(std::move(before));
}

std::vector<int> Workbench::fusedGroupOf(int op) {
  if (!graph_ || !cluster_) throw ConfigError("fused group: load a graph and a cluster first");
  if (op < 0 || op >= graph_->num_ops())
    throw DeviceError("fused group: op " + std::to_string(op) + " is not in graph '" + graph_->name() + "'");
#ifdef AWARE_GUI_HAVE_FUSION
  if (fused_graph_ != graph_ || fused_cluster_ != cluster_) {
    FusionResult fusion = fuse_by_comm_ratio(*graph_, *cluster_);
    fused_group_of_ = std::move(fusion.group_of_op);
    fused_ops_ = std::move(fusion.ops_of_group);
    fused_graph_ = graph_;
    fused_cluster_ = cluster_;
  }
  return fused_ops_[static_cast<size_t>(fused_group_of_[static_cast<size_t>(op)])];
#else
  throw ConfigError("fused group: this build has no fusion (agents/fusion)");
#endif
}

bool Workbench::canUndo() const {
  return !undo_.empty() && undo_.back().graph == graph_ && undo_.back().cluster == cluster_;
}

bool Workbench::undo() {
  if (!canUndo()) {
    undo_.clear();  // edits of a graph or cluster no longer shown
    return false;
  }
  UndoEntry entry = std::move(undo_.back());
  undo_.pop_back();
  std::vector<UndoEntry> stack = std::move(undo_);
  setPlacement(entry.placement, entry.method);
  undo_ = std::move(stack);
  return true;
}

void Workbench::clearPlacement() {
  has_placement_ = false;
  trace_.clear();
  critical_path_ = {};
  Q_EMIT placementChanged();
}

void Workbench::setStrategyResult(std::shared_ptr<const OpGraph> graph,
                                  const std::string& strategy, const Placement& placement,
                                  StepResult result, Trace trace) {
  if (!base_graph_) throw ConfigError("no graph is open");
  if (!graph) throw ConfigError("strategy '" + strategy + "' gave no graph");
  check_placement(*graph, *cluster_, placement, strategy);
  graph_ = std::move(graph);
  strategy_ = strategy;
  has_placement_ = false;
  updateBound();
  Q_EMIT graphChanged();
  setPlacement(placement, strategy, std::move(result), std::move(trace));
}

void Workbench::restoreBaseGraph() {
  if (strategy_.empty()) return;
  graph_ = base_graph_;
  strategy_.clear();
  has_placement_ = false;
  updateBound();
  Q_EMIT graphChanged();
  Q_EMIT placementChanged();
}

void Workbench::updateBound() {
  if (!graph_) return;
  const OpCostMatrix costs(*graph_, *cluster_);
  bound_ = lower_bound(*graph_, *cluster_, costs);
  graph_critical_path_ = compute_critical_path(*graph_, costs);
  trace_.clear();
  critical_path_ = {};
}

std::string Workbench::summary() const {
  if (!graph_) return "no graph open";
  int phases[3] = {0, 0, 0};
  double activations = 0;
  for (const Op& op : graph_->ops()) {
    ++phases[static_cast<int>(op.phase)];
    activations += op.total_output_bytes();
  }
  std::ostringstream out;
  char flops[32];
  std::snprintf(flops, sizeof flops, "%.1f GFLOP", graph_->total_flops() / 1e9);
  out << graph_->name() << ": " << graph_->num_ops() << " ops (" << phases[0] << " fwd, "
      << phases[1] << " bwd, " << phases[2] << " upd), " << graph_->num_edges() << " edges · "
      << flops << " · params " << format_bytes(graph_->total_param_bytes(), BytesStyle::kCompact)
      << ", outputs " << format_bytes(activations, BytesStyle::kCompact) << " · on "
      << cluster_->name() << " (" << cluster_->num_devices() << " devices): critical path "
      << format_time_us(bound_.critical_path_us) << " over " << graph_critical_path_.ops.size()
      << " ops, work bound " << format_time_us(bound_.work_us) << ", lower bound "
      << format_time_us(bound_.bound_us());
  if (!strategy_.empty() && base_graph_)
    out << " · rewritten by strategy " << strategy_ << " from " << base_graph_->name() << " ("
        << base_graph_->num_ops() << " ops)";
  return out.str();
}

std::string Workbench::explanation() const {
  if (!graph_ || !has_placement_) return "";
  // The evaluator that scored this placement (it may differ from the one chosen
  // since, when a search was scored on its worker).
  const std::string& scored_by = result_.evaluator.empty() ? evaluator_name_ : result_.evaluator;
  return method_ + " (" + scored_by +
         "): " + explain_step(*graph_, *cluster_, result_, bound_, &critical_path_, &trace_);
}

}  // namespace aware::gui
