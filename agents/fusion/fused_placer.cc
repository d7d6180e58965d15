#include "agents/fusion/fused_placer.h"

#include <utility>

#include "agents/common/placer_common.h"
#include "agents/fusion/fusion.h"
#include "core/cluster.h"
#include "core/errors.h"
#include "core/op_graph.h"

namespace aware {
namespace {

// Scores placements of the fused graph by expanding them onto the full graph.
class ExpandingEvaluator final : public Evaluator {
 public:
  ExpandingEvaluator(const Evaluator& fine, const OpGraph& graph, const FusionResult& fusion)
      : fine_(fine.clone()), graph_(graph), fusion_(fusion) {}
  std::string name() const override { return fine_->name(); }
  std::string describe() const override {
    return fine_->describe() + ", fused placements expanded";
  }
  std::unique_ptr<Evaluator> clone() const override {
    return std::make_unique<ExpandingEvaluator>(*fine_, graph_, fusion_);
  }

 protected:
  // A fused placement's step is the expanded placement's step on the full graph;
  // its ops are not the coarse graph's, so it is not reported to the observer.
  StepResult run_step(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                      StepObserver* observer) override {
    if (&graph != &fusion_.coarse) return run_inner_step(*fine_, graph, cluster, placement, observer);
    return fine_->evaluate(graph_, cluster, expand_placement(fusion_, placement), nullptr);
  }
  // A move of fused nodes is the move of their members on the full graph, so the
  // fine evaluator can reuse its step of the expanded previous placement.
  StepResult run_move(const OpGraph& graph, const Cluster& cluster, const Placement& prev,
                      const std::vector<OpMove>& moves) override {
    if (&graph != &fusion_.coarse) return Evaluator::run_move(graph, cluster, prev, moves);
    std::vector<OpMove> fine_moves;
    for (const OpMove& m : moves) {
      if (m.op < 0 || m.op >= fusion_.coarse.num_ops()) return Evaluator::run_move(graph, cluster, prev, moves);
      for (int op : fusion_.ops_of_group[m.op]) fine_moves.push_back({op, m.device});
    }
    return fine_->evaluate_move(graph_, cluster, expand_placement(fusion_, prev), fine_moves);
  }

 private:
  std::unique_ptr<Evaluator> fine_;
  const OpGraph& graph_;
  const FusionResult& fusion_;
};

}  // namespace

FusedPlacer::FusedPlacer(std::string inner) : inner_(std::move(inner)) {}

bool FusedPlacer::needs_evaluator() const {
  return PlacerRegistry::instance().create(inner_)->needs_evaluator();
}

Placement FusedPlacer::place(const OpGraph& graph, const Cluster& cluster,
                             const PlaceContext& context) {
  const FusionOptions fusion_options = fusion_options_from(context.options, name());
  std::unique_ptr<Placer> inner = PlacerRegistry::instance().create(inner_);
  const FusionResult fusion = fuse_by_comm_ratio(graph, cluster, fusion_options);

  const std::string score = option_string(context.options, "fusion.score", "coarse");
  if (score != "coarse" && score != "fine")
    throw ConfigError(name() + ": fusion.score must be coarse or fine, got '" + score + "'");
  std::unique_ptr<Evaluator> expanding;
  PlaceContext inner_context = context;
  if (score == "fine" && context.evaluator != nullptr) {
    expanding = std::make_unique<ExpandingEvaluator>(*context.evaluator, graph, fusion);
    inner_context.evaluator = expanding.get();
  }
  inner_context.options.clear();
  for (const auto& [key, value] : context.options)
    if (key.rfind("fusion.", 0) != 0) inner_context.options[key] = value;
  // The exact placer would coarsen a large fused graph once more (its coarse=auto);
  // on the fused graph it solves that graph itself unless asked otherwise.
  if (inner_ == "milp" && inner_context.options.count("coarse") == 0) inner_context.options["coarse"] = "none";
  Placement coarse_start;
  if (context.start != nullptr) {
    check_placement(graph, cluster, *context.start, "start placement");
    coarse_start = coarsen_placement(fusion, *context.start);
    inner_context.start = &coarse_start;
  }
  const Placement coarse = inner->place(fusion.coarse, cluster, inner_context);
  check_placement(fusion.coarse, cluster, coarse, "placer '" + inner_ + "' on the fused graph");
  Placement fine = expand_placement(fusion, coarse);
  return placing::with_memory_fallback(graph, cluster, std::move(fine), context.evaluator);
}

std::unique_ptr<Placer> make_fused_placer(const std::string& inner) {
  return std::make_unique<FusedPlacer>(inner);
}

}  // namespace aware
