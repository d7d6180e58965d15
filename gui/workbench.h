// Workbench: what the window is looking at — the graph, the cluster, the
// placement and its simulated step — loaded and scored through the same
// registries and loaders as the CLI. Lives on the GUI thread; not thread-safe.
// Every loader leaves the state unchanged when it throws.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <QObject>

#include "core/cluster.h"
#include "core/evaluator.h"
#include "core/graph_algorithms.h"
#include "core/op_graph.h"
#include "core/placement.h"
#include "gui/trace_analysis.h"

namespace aware::gui {

// "random:N[:SEED[:WIDTH]]" -> random_layered_dag (the GUI's stress graphs);
// anything else -> aware::load_graph ("zoo:NAME", "family:F:SEED", a JSON file).
// Throws aware::Error with the CLI's message.
OpGraph load_gui_graph(const std::string& spec);

// The most ops the GUI opens. Measured (docs/gui.md): random:200000:1 opens in
// 2.3 s, a 200,000-op chain in 3.3 s and 2.1 GB; a 10^6-op chain ran past 60 s and
// 8.7 GB. load_gui_graph refuses a larger graph with ConfigError (random:N before
// building it, others once read); the CLI reads up to 10^6.
constexpr int kMaxGuiOps = 200000;

class Workbench : public QObject {
  Q_OBJECT

 public:
  explicit Workbench(QObject* parent = nullptr);

  // Throw aware::Error (what() is the CLI's one-line message); on a throw
  // nothing changes. A new graph or cluster drops the placement.
  void loadGraph(const std::string& spec);
  void loadCluster(const std::string& spec);
  // EvaluatorRegistry name used to score placements; throws ConfigError if unknown.
  void setEvaluator(const std::string& name);
  // Checks and scores `placement` (with a trace) on this thread. Throws on a
  // placement that does not fit the graph or cluster.
  void setPlacement(const Placement& placement, const std::string& method);
  // Takes `placement` with the `result` and `trace` that evaluatorName() gave it
  // elsewhere (a worker thread: a measured step takes seconds). Checks the
  // placement; throws, changing nothing, when it does not fit.
  void setPlacement(const Placement& placement, const std::string& method, StepResult result,
                    Trace trace);
  void clearPlacement();

  // What if: puts `ops` on `device` and scores the edited placement at once
  // (the analytic simulator takes well under a millisecond on the zoo), keeping
  // the placement before for undo(). The method becomes "hand-edited (from
  // METHOD)". Throws, changing nothing, without a placement or for an op or a
  // device out of range; moving ops that are already there changes nothing.
  void moveOps(const std::vector<int>& ops, int device);
  // Whether undo() has a placement of the graph and cluster shown now.
  bool canUndo() const;
  // Back to the placement before the last moveOps(); false when there is none.
  bool undo();
  int undoDepth() const { return static_cast<int>(undo_.size()); }
  // The ops fused with `op` by Aware's fusion (fuse_by_comm_ratio, default
  // options, as `aware fuse` makes them) for the graph and cluster shown,
  // ascending; computed once per graph and cluster. Just {op} for an op fused
  // with nothing. Throws ConfigError in a build without fusion or without a
  // graph, DeviceError for an op out of range.
  std::vector<int> fusedGroupOf(int op);
  // How many groups that fusion made (0 before fusedGroupOf was first called).
  int fusedGroupCount() const { return static_cast<int>(fused_ops_.size()); }
  // Shows a strategy's rewritten step in place of the loaded graph: `graph` (the
  // rewrite of baseGraph()) becomes graph(), with its placement and the result and
  // trace evaluatorName() gave it. `strategy` is the canonical spec; it is the
  // placement's method too. Throws, changing nothing, when the placement does not
  // fit. Emits graphChanged then placementChanged.
  void setStrategyResult(std::shared_ptr<const OpGraph> graph, const std::string& strategy,
                         const Placement& placement, StepResult result, Trace trace);
  // Back to the loaded graph, unplaced, when a strategy's rewrite is shown (else
  // nothing happens). Loading a cluster does this too: a rewrite is per cluster.
  void restoreBaseGraph();

  bool hasGraph() const { return graph_ != nullptr; }
  bool hasPlacement() const { return has_placement_; }
  // What is shown and placed: the loaded graph, or a strategy's rewrite of it.
  std::shared_ptr<const OpGraph> graphPtr() const { return graph_; }
  // The graph as loaded (what placers and strategies start from).
  std::shared_ptr<const OpGraph> baseGraphPtr() const { return base_graph_; }
  // The canonical spec of the strategy whose rewrite is shown; empty for none.
  const std::string& strategy() const { return strategy_; }
  std::shared_ptr<const Cluster> clusterPtr() const { return cluster_; }
  const OpGraph& graph() const { return *graph_; }
  const Cluster& cluster() const { return *cluster_; }
  const std::string& graphSpec() const { return graph_spec_; }
  const std::string& clusterSpec() const { return cluster_spec_; }
  const std::string& evaluatorName() const { return evaluator_name_; }
  const std::string& method() const { return method_; }
  const Placement& placement() const { return placement_; }
  const StepResult& result() const { return result_; }
  const Trace& trace() const { return trace_; }
  const TraceCriticalPath& criticalPath() const { return critical_path_; }
  const LowerBound& lowerBound() const { return bound_; }
  double graphLoadSeconds() const { return graph_load_s_; }

  // Size, FLOPs, memory, critical path and lower bound, one line.
  std::string summary() const;
  // Why the current placement is fast or slow (empty without a placement).
  std::string explanation() const;

 Q_SIGNALS:
  void graphChanged();
  void clusterChanged();
  void placementChanged();

 private:
  void updateBound();

  std::shared_ptr<const OpGraph> graph_;
  std::shared_ptr<const OpGraph> base_graph_;
  std::string strategy_;
  std::shared_ptr<const Cluster> cluster_;
  std::string graph_spec_, cluster_spec_, evaluator_name_ = "analytic", method_;
  bool has_placement_ = false;
  Placement placement_;
  StepResult result_;
  Trace trace_;
  TraceCriticalPath critical_path_;
  LowerBound bound_;
  CriticalPath graph_critical_path_;
  double graph_load_s_ = 0;
  // Placements before each hand edit, newest last, with what they placed.
  struct UndoEntry {
    std::shared_ptr<const OpGraph> graph;
    std::shared_ptr<const Cluster> cluster;
    Placement placement;
    std::string method;
  };
  std::vector<UndoEntry> undo_;
  // fusedGroupOf's cache and the graph and cluster it was made for
  // (held, so that a new graph cannot reuse the address of the one cached).
  std::shared_ptr<const OpGraph> fused_graph_;
  std::shared_ptr<const Cluster> fused_cluster_;
  std::vector<int> fused_group_of_;
  std::vector<std::vector<int>> fused_ops_;
};

}  // namespace aware::gui
