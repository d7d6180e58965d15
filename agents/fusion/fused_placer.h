// FusedPlacer: fuse the graph (fuse_by_comm_ratio), run an inner placer on the
// coarse graph (its evaluator calls score the coarse graph), expand the coarse
// placement back to every op.
#pragma once

#include <memory>
#include <string>

#include "core/placer.h"

namespace aware {

// Options (PlaceContext::options): the fusion.* keys of fusion_options_from(),
// and fusion.score = coarse (default: the inner placer's evaluator calls score
// the fused graph) or fine (each call expands the placement and scores the full
// graph: the search space of the fused graph without its cost distortion). Every
// other key is passed to the inner placer unchanged. A context.start
// placement is coarsened (majority device per node) for the inner placer. When
// the expanded placement breaks the static memory rule or the evaluator finds it
// infeasible, the baseline memory fallback is tried (as every baseline does).
// Not thread-safe (one instance per thread, like every placer).
class FusedPlacer final : public Placer {
 public:
  // `inner` is a PlacerRegistry name ("heft", "anneal", ...); created per call.
  explicit FusedPlacer(std::string inner);
  std::string name() const override { return "fused-" + inner_; }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& context) override;
  bool needs_evaluator() const override;

 private:
  std::string inner_;
};

std::unique_ptr<Placer> make_fused_placer(const std::string& inner);

}  // namespace aware
