// The learned agents as Placers. Torch-free: it only calls rl::train_agent.
#include "agents/rl/register.h"

#include <string>

#include "agents/rl/trainer.h"
#include "core/errors.h"
#include "core/op_graph.h"
#include "core/placer.h"

namespace aware {
namespace rl {
void register_aware_agent();  // aware_agent.cc
}
namespace {

constexpr long long kDefaultBudgetEvals = 2000;

// Trainer settings carried in PlaceContext::options; everything else goes to the agent.
rl::TrainOptions train_options_from_context(const PlaceContext& context, const std::string& owner) {
  rl::TrainOptions t;
  t.budget_evals = context.budget_evals > 0 ? context.budget_evals
                   : context.budget_seconds > 0 ? 0
                                                : kDefaultBudgetEvals;
  if (context.budget_evals < 0 || context.budget_seconds < 0)
    throw ConfigError(owner + ": budgets must not be negative");
  t.budget_seconds = context.budget_seconds;
  t.seed = context.seed;
  t.progress = context.progress;
  for (const auto& [key, value] : context.options) {
    if (key == "init") t.init_policy = value;
    else if (key == "save_policy") t.save_policy = value;
    else if (key == "resume") t.resume_dir = value;
    else if (key == "curve") t.curve_csv = value;
    else if (key == "algorithm") t.algorithm = value;
    else if (key == "threads") t.threads = static_cast<int>(option_int(context.options, key, 1, owner));
    else if (key == "lr") t.learning_rate = option_double(context.options, key, 0, owner);
    else if (key == "entropy") t.entropy_coef = option_double(context.options, key, -1, owner);
    else if (key == "episodes_per_update")
      t.episodes_per_update = static_cast<int>(option_int(context.options, key, 0, owner));
    else if (key == "zero_shot") continue;
    else t.agent_options[key] = value;
  }
  // zero_shot=1 (aware place --policy): no training, the init policy's greedy placement.
  if (option_int(context.options, "zero_shot", 0, owner) != 0) {
    if (t.init_policy.empty()) throw ConfigError(owner + ": zero_shot=1 needs init=POLICY");
    t.budget_evals = 0;
    t.budget_seconds = 0;
  }
  return t;
}

class RlPlacer final : public Placer {
 public:
  explicit RlPlacer(std::string agent) : agent_(std::move(agent)) {}
  std::string name() const override { return agent_; }
  bool needs_evaluator() const override { return true; }
  Placement place(const OpGraph& graph, const Cluster& cluster, const PlaceContext& context) override {
    if (context.evaluator == nullptr) throw ConfigError("method '" + agent_ + "' needs an evaluator");
    const rl::TrainOptions options = train_options_from_context(context, "method " + agent_);
    return rl::train_agent(agent_, graph, cluster, *context.evaluator, options).best;
  }

 private:
  std::string agent_;
};

}  // namespace

void register_rl_agents() {
  rl::register_aware_agent();
  for (const std::string& name : rl::rl_agent_names())
    PlacerRegistry::instance().add(name, rl::rl_agent_description(name) + " (learned; LibTorch)",
                                   [name] { return std::make_unique<RlPlacer>(name); });
}

}  // namespace aware
