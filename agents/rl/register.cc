// Registers the learned agents (AgentRegistry) and each as a Placer. No LibTorch
// here: the factories are declared in agent_registry.h.
#include "agents/rl/register.h"

#include <string>

#include "agents/rl/agent_registry.h"
#include "agents/rl/trainer.h"
#include "core/errors.h"
#include "core/op_graph.h"
#include "core/placer.h"

namespace aware {
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
  // budget_episodes=N alone: no evaluation budget (not the placers' default 2,000).
  t.budget_episodes = option_int(context.options, "budget_episodes", 0, owner);
  if (t.budget_episodes < 0) throw ConfigError(owner + ": budget_episodes must not be negative");
  if (t.budget_episodes > 0 && context.budget_evals == 0) t.budget_evals = 0;
  t.seed = context.seed;
  t.progress = context.progress;
  for (const auto& [key, value] : context.options) {
    if (key == "init") t.init_policy = value;
    else if (key == "preset") t.preset = value;
    else if (key == "save_policy") t.save_policy = value;
    else if (key == "resume") t.resume_dir = value;
    else if (key == "curve") t.curve_csv = value;
    else if (key == "algorithm") t.algorithm = value;
    else if (key == "threads") t.threads = static_cast<int>(option_int(context.options, key, 1, owner));
    else if (key == "lr") t.learning_rate = option_double(context.options, key, 0, owner);
    else if (key == "entropy") t.entropy_coef = option_double(context.options, key, -1, owner);
    else if (key == "entropy_end") t.entropy_end = option_double(context.options, key, -1, owner);
    else if (key == "entropy_floor") t.entropy_floor = option_double(context.options, key, -1, owner);
    else if (key == "entropy_floor_until") t.entropy_floor_until = option_double(context.options, key, 0.5, owner);
    else if (key == "entropy_floor_step") t.entropy_floor_step = option_double(context.options, key, 1.0, owner);
    else if (key == "episodes_per_update")
      t.episodes_per_update = static_cast<int>(option_int(context.options, key, 0, owner));
    else if (key == "imitate") t.imitate = value;
    else if (key == "self_imitation") t.self_imitation = option_double(context.options, key, 0, owner);
    else if (key == "self_imitation_cap") t.self_imitation_cap = option_double(context.options, key, 0.9, owner);
    else if (key == "self_imitation_from") t.self_imitation_from = value;
    else if (key == "elite") t.elite = option_double(context.options, key, -1, owner);
    else if (key == "elite_window") t.elite_window = static_cast<int>(option_int(context.options, key, -1, owner));
    else if (key == "elite_weight") t.elite_weight = option_double(context.options, key, 1, owner);
    else if (key == "guide_share") t.guide_share = option_double(context.options, key, -1, owner);
    else if (key == "guide_evals") t.guide_evals = option_int(context.options, key, 0, owner);
    else if (key == "guide_from") t.guide_from = value;
    else if (key == "guide_by") t.guide_by = value;
    else if (key == "imitate_steps")
      t.imitate_steps = static_cast<int>(option_int(context.options, key, 400, owner));
    else if (key == "standardize") {
      if (value != "on" && value != "off") throw ConfigError(owner + ": standardize must be on or off, got '" + value + "'");
      t.standardize_advantages = value == "on" ? 1 : 0;
    } else if (key == "few_shot") t.few_shot = static_cast<int>(option_int(context.options, key, 0, owner));
    else if (key == "zero_shot" || key == "budget_episodes") continue;
    else t.agent_options[key] = value;
  }
  // zero_shot=1 (aware place --policy): no training, the init policy's greedy placement.
  if (option_int(context.options, "zero_shot", 0, owner) != 0) {
    if (t.init_policy.empty()) throw ConfigError(owner + ": zero_shot=1 needs init=POLICY");
    t.budget_evals = 0;
    t.budget_episodes = 0;
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

namespace {
// The trainer's settings a learned method takes besides its agent's options.
std::vector<OptionSpec> trainer_options() {
  using T = OptionSpec::Type;
  return {
      {"preset", T::kString, "default", "the agent's settings: default (ours) or paper (docs/agents.md)"},
      {"init", T::kPath, "", "start from this policy file"},
      {"budget_episodes", T::kInt, "0",
       "complete placements sampled allowed (the equal-episode footing; alone: no evaluation budget)", 0, 1e12},
      {"save_policy", T::kOutputPath, "", "write the trained policy here"},
      {"resume", T::kOutputFolder, "", "checkpoint folder: resume from it, checkpoint into it"},
      {"curve", T::kOutputPath, "", "write the learning curve (CSV) here"},
      {"algorithm", T::kString, "", "reinforce or ppo (default: the preset's)"},
      {"threads", T::kInt, "1", "LibTorch threads", 1, 256},
      {"lr", T::kDouble, "", "learning rate (default: the agent's)", 0, 1e3},
      {"entropy", T::kDouble, "", "entropy bonus (default: the agent's)"},
      {"entropy_end", T::kDouble, "", "entropy schedule: the bonus moves linearly to this over the budget (default: constant)"},
      {"entropy_floor", T::kDouble, "",
       "entropy floor (ours): the bonus weight rises by dual ascent to hold the entropy per decision at this "
       "fraction of the first update's (default: the preset's; 0: off)", 0, 0.999},
      {"entropy_floor_until", T::kDouble, "0.5", "the entropy floor holds until this fraction of the budget", 0, 1},
      {"entropy_floor_step", T::kDouble, "1", "the entropy floor's dual-ascent step", 1e-9, 1e6},
      {"episodes_per_update", T::kInt, "", "episodes per gradient step (default: the agent's)", 0, 100000},
      {"zero_shot", T::kInt, "0", "1: no training, the init policy's greedy placement", 0, 1},
      {"standardize", T::kString, "", "on: each update's advantages zero-mean, unit-std (default: the agent's)"},
      {"few_shot", T::kInt, "0",
       "with zero_shot=1: also K sampled placements of the policy, the best of all (K more evaluations)", 0, 1e8},
      {"imitate", T::kString, "",
       "behaviour cloning first: cheap, PLACER[:N] or a placement file (its evaluations count; aware only)"},
      {"imitate_steps", T::kInt, "400", "at most this many imitation steps", 0, 1e8},
      {"self_imitation", T::kDouble, "",
       "self-imitation: each update also clones the best placement so far, with this weight (aware only; "
       "not the paper's; default: the preset's, 0 but for aware-guided)", 0, 1e6},
      {"self_imitation_cap", T::kDouble, "0.9", "self-imitation stops pulling once the best's actions average this probability", 1e-9, 1},
      {"self_imitation_from", T::kString, "best", "self-imitation clones the best evaluated (best) or the best sampled (samples)"},
      {"elite", T::kDouble, "",
       "cross-entropy step (ours, after Post): each update also clones the fastest fraction of the last "
       "elite_window sampled placements (0: off; aware only; one window a graph; default: the preset's, 0.1 in "
       "aware's default, 0 in its paper preset and in aware-guided)", 0, 1},
      {"elite_window", T::kInt, "", "the elite step's window: the last N sampled placements (default: the preset's, 64)", 1, 1e4},
      {"elite_weight", T::kDouble, "1",
       "the elite step's weight: w x the elite's mean summed -log p, beside the batch's mean of -advantage x log p", 0, 1e6},
  };
}
}  // namespace

void register_rl_agents() {
  struct Builtin {
    const char* name;
    const char* description;
    rl::AgentFactory factory;
    std::vector<OptionSpec> options;
  };
  // The guided hybrid's own settings (agents/rl/guide.h; its defaults are the preset's).
  std::vector<OptionSpec> guided_options = {
      {"guide_share", OptionSpec::Type::kDouble, "", "the local search's share of the wall-clock or evaluations (default 0.5)", 0, 0.999},
      {"guide_by", OptionSpec::Type::kString, "", "the share counts time (default) or evaluations"},
      {"guide_evals", OptionSpec::Type::kInt, "", "evaluations of one refinement (default 500)", 3, 1e9},
      {"guide_from", OptionSpec::Type::kString, "",
       "a refinement starts from the best so far (best, default) or the best sample since the last (proposal)"},
  };
  std::vector<OptionSpec> guided_agent_options = rl::aware_agent_options();
  const Builtin agents[] = {
      {"placeto",
       "Placeto (Addanki et al. 2019): per-node MDP, GNN over parents/children, "
       "ancestor/descendant/parallel pooling",
       rl::placeto_agent_factory(), rl::placeto_agent_options()},
      {"hierarchical",
       "Hierarchical planner (Mirhoseini et al. 2018): feed-forward grouper + seq2seq attention "
       "placer, REINFORCE on -sqrt(step)",
       rl::hierarchical_agent_factory(), rl::hierarchical_agent_options()},
      {"aware",
       "Aware (Zeng et al. 2022): comm/compute-aware fusion, DAG message passing + P-GNN "
       "anchor-set position embedding, one-shot REINFORCE over fused groups",
       rl::aware_agent_factory(), rl::aware_agent_options()},
      {"aware-guided",
       "Aware guided (ours, not a paper's): Aware's policy samples, anneal-graph chains refine the best "
       "placement so far for half the wall-clock, and self-imitation pulls the policy to what they find",
       rl::aware_agent_factory(), guided_agent_options},
  };
  for (const Builtin& a : agents) {
    const bool guided = std::string(a.name) == "aware-guided";
    const std::string description =
        std::string(a.description) +
        (guided ? "; preset: default (docs/agents.md)"
                : "; presets: default (ours), paper (--preset paper; docs/agents.md)");
    rl::AgentRegistry::instance().add(a.name, description, a.options, a.factory);
    std::vector<OptionSpec> placer_options = trainer_options();
    if (guided) placer_options.insert(placer_options.end(), guided_options.begin(), guided_options.end());
    placer_options.insert(placer_options.end(), a.options.begin(), a.options.end());
    const std::string name = a.name;
    PlacerRegistry::instance().add(name, description + " (learned; LibTorch)",
                                   std::move(placer_options),
                                   [name] { return std::make_unique<RlPlacer>(name); });
  }
}

}  // namespace aware
