// Behaviour cloning before training (TrainOptions::imitate; trainer_impl.h):
// finding the target placement and the imitation steps; and self-imitation
// during it (TrainOptions::self_imitation): the job's best placement and its
// term of an update's loss. Includes LibTorch.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>

#include "agents/common/placer_common.h"
#include "agents/rl/trainer_impl.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/placer.h"
#include "core/progress.h"

namespace aware::rl::detail {

using nlohmann::json;
namespace fs = std::filesystem;

Placement Trainer::imitation_target(TrainResult& result) {
  if (opt_.imitate_target.size() > 0) {
    check_placement(graph_, cluster_, opt_.imitate_target, "imitation target");
    return opt_.imitate_target;
  }
  const std::string& spec = opt_.imitate;
  const long long before = env_->evaluations();
  Placement target;
  if (spec == "cheap") {
    PlaceContext cheap;
    cheap.evaluator = &evaluator_;
    cheap.seed = opt_.seed;
    double best = std::numeric_limits<double>::infinity();
    // By name through the registry: the agents do not link the placers' library.
    for (const std::string& name : placing::cheap_placer_names()) {
      if (!PlacerRegistry::instance().has(name)) continue;
      const Placement p = PlacerRegistry::instance().create(name)->place(graph_, cluster_, cheap);
      const double us = env_->evaluate(p);
      if (us < best) {
        best = us;
        target = p;
      }
    }
    if (target.size() == 0)
      throw ConfigError("imitate: cheap needs the one-pass placers (m-etf, heft, ...), none of which is registered");
  } else if (fs::exists(spec)) {
    target = read_placement_file(spec, graph_, cluster_);
    env_->evaluate(target);
  } else {
    const size_t colon = spec.find(':');
    const std::string name = spec.substr(0, colon);
    if (!PlacerRegistry::instance().has(name))
      throw ConfigError("imitate: '" + spec + "' is neither cheap, a placer (" + name +
                        " is not registered) nor a placement file");
    PlaceContext context;
    context.evaluator = &evaluator_;
    context.seed = opt_.seed;
    DoneCounter counter;
    context.progress = &counter;
    if (colon != std::string::npos) {
      try {
        context.budget_evals = std::stoll(spec.substr(colon + 1));
      } catch (const std::exception&) {
        throw ConfigError("imitate: '" + spec + "': the evaluations after ':' must be a number");
      }
    } else {
      context.budget_evals = std::max(1LL, opt_.budget_evals / 10);
    }
    if (context.budget_evals < 1) throw ConfigError("imitate: '" + spec + "' needs at least one evaluation");
    std::unique_ptr<Placer> placer = PlacerRegistry::instance().create(name);
    if (!placer->needs_evaluator()) context.budget_evals = 0;
    target = placer->place(graph_, cluster_, context);
    env_->count_external(counter.done);
    env_->evaluate(target);
  }
  result.imitation_evaluations = env_->evaluations() - before;
  return target;
}

void Trainer::imitate(TrainResult& result) {
  const auto t0 = Clock::now();
  // Data-parallel: rank 0 finds the target (its evaluations are its own) and
  // sends it; every process clones it with its own anchor draws, the gradients
  // averaged, so the weights stay one.
  Placement target;
  if (parallel_ == nullptr || parallel_->rank() == 0) target = imitation_target(result);
  if (parallel_ != nullptr) {
    // The target's evaluations are the job's: each process is charged its share
    // (the remainder to rank 0, as the budget is split).
    const std::string sent = parallel_->broadcast_text(
        json{{"target", target.device_of_op}, {"evaluations", result.imitation_evaluations}}.dump());
    const json got = json::parse(sent);
    target = Placement(got.at("target").get<std::vector<int>>());
    const long long total = got.at("evaluations").get<long long>(), n = parallel_->size();
    const long long share = total / n + (parallel_->rank() == 0 ? total % n : 0);
    env_->count_external(parallel_->rank() == 0 ? share - total : share);
    result.imitation_evaluations = total;
  }
  bool over = env_->exhausted();
  if (parallel_ != nullptr) over = parallel_->maximum(over ? 1 : 0) > 0;
  if (over)
    throw ConfigError("imitate: finding the target (" + opt_.imitate + ") took " +
                      std::to_string(result.imitation_evaluations) + " evaluations, all of the budget (" +
                      std::to_string(opt_.budget_evals * (parallel_ != nullptr ? parallel_->size() : 1)) +
                      "): raise the budget or imitate something cheaper");
  {
    PlacementEnv probe(graph_, cluster_, evaluator_, defaults_.penalty, 0, 0, nullptr);
    probe.evaluate(target);
    result.imitation_target_us = probe.last_step_us();
  }
  torch::optim::Adam adam(agent_->module().parameters(), torch::optim::AdamOptions(base_lr_));
  for (int step = 0; step < opt_.imitate_steps; ++step) {
    adam.zero_grad();
    const ImitationTerms terms = agent_->imitation_loss(target, rng_);
    terms.loss.backward();
    if (parallel_ != nullptr) average_gradients();
    torch::nn::utils::clip_grad_norm_(agent_->module().parameters(), grad_clip_);
    adam.step();
    result.imitation_steps = step + 1;
    result.imitation_probability = terms.mean_probability;
    result.imitation_accuracy = terms.accuracy;
    double reached = terms.mean_probability >= opt_.imitate_probability ? 1 : 0;
    if (parallel_ != nullptr) reached = parallel_->minimum(reached);
    if (reached > 0) break;
  }
  profile_.imitate_s = seconds_since(t0);
}

Placement Trainer::self_imitation_target(const std::vector<Episode>& episodes) {
  const bool sampled = opt_.self_imitation_from == "samples";
  if (sampled)
    for (const Episode& ep : episodes)
      if (ep.placement.size() > 0 && ep.final_step_us < sampled_best_us_) {
        sampled_best_us_ = ep.final_step_us;
        sampled_best_ = ep.placement;
      }
  const bool have = sampled ? sampled_best_.size() > 0 : env_->best_feasible();
  const Placement& own = sampled ? sampled_best_ : env_->best_placement();
  if (parallel_ == nullptr) return have ? own : Placement();
  // The job's best: every process's best placement to rank 0, which picks the
  // fastest (the lowest rank on ties) and sends it to all.
  const json mine = have ? json{{"us", sampled ? sampled_best_us_ : env_->best_penalised_us()},
                                {"placement", own.device_of_op}}
                         : json::object();
  std::string pick = "{}";
  const std::vector<std::string> all = parallel_->gather_text(mine.dump());
  if (parallel_->rank() == 0) {
    double best = std::numeric_limits<double>::infinity();
    for (const std::string& text : all) {
      const json j = json::parse(text);
      if (j.contains("us") && j.at("us").get<double>() < best) {
        best = j.at("us").get<double>();
        pick = j.at("placement").dump();
      }
    }
  }
  const json got = json::parse(parallel_->broadcast_text(pick));
  return got.is_array() ? Placement(got.get<std::vector<int>>()) : Placement();
}

torch::Tensor Trainer::self_imitation_loss(const Placement& target, bool& used) {
  ImitationTerms terms;
  try {
    terms = agent_->imitation_loss(target, rng_);
  } catch (const ConfigError&) {
    throw ConfigError("self-imitation: agent '" + name_ + "' has no imitation loss (--self-imitation is for aware)");
  }
  self_imitation_probability_ = terms.mean_probability;
  double below = terms.mean_probability < opt_.self_imitation_cap ? 1 : 0;
  if (parallel_ != nullptr) below = parallel_->maximum(below);  // every process adds it, or none
  if (below == 0) return torch::zeros({});
  used = true;
  // On the policy-gradient term's scale: the target's log-probability summed
  // over its decisions, as an episode's is. That term is the mean over the
  // update's episodes of -advantage x log p, so at weight 1 the target weighs as
  // a whole batch would whose every episode had advantage 1.
  return opt_.self_imitation * static_cast<double>(std::max(1, terms.decisions)) * terms.loss;
}

torch::Tensor Trainer::elite_loss() {
  const std::vector<const Placement*> elite = elite_window().elite(opt_.elite);
  if (elite.empty()) return torch::zeros({});
  torch::Tensor sum = torch::zeros({});
  double probability = 0;
  for (const Placement* target : elite) {
    ImitationTerms terms;
    try {
      terms = agent_->imitation_loss(*target, rng_);
    } catch (const ConfigError&) {
      throw ConfigError("elite: agent '" + name_ + "' has no imitation loss (the elite step is for aware)");
    }
    // Each member summed over its decisions, as an episode's log-probability
    // (and self-imitation's target) is. The policy-gradient term is the mean
    // over the update's n episodes of -advantage x log p, so the elite weighs
    // as a whole batch would whose every episode had advantage elite_weight.
    sum = sum + static_cast<double>(std::max(1, terms.decisions)) * terms.loss;
    probability += terms.mean_probability;
  }
  elite_probability_ = probability / static_cast<double>(elite.size());
  return (opt_.elite_weight / static_cast<double>(elite.size())) * sum;
}

}  // namespace aware::rl::detail
