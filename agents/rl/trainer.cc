// The shared policy-gradient trainer: the loop, the data-parallel exchange and
// the greedy episode (the loss and one update in trainer_update.cc, checkpoints
// in trainer_checkpoint.cc, behaviour cloning in trainer_imitation.cc; the
// registry, sampling helpers and policy files in agent.cc). Includes LibTorch.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "agents/rl/trainer_impl.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/progress.h"

namespace aware::rl {
namespace detail {

using nlohmann::json;
namespace fs = std::filesystem;

void Trainer::average_gradients() {
  std::vector<float> flat;
  std::vector<torch::Tensor> params = agent_->module().parameters();
  for (torch::Tensor& p : params) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);  // every process sends every gradient
    const torch::Tensor g = p.grad().contiguous().to(torch::kFloat);
    flat.insert(flat.end(), g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
  }
  parallel_->average(flat);
  size_t at = 0;
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : params) {
    const auto n = p.grad().numel();
    p.mutable_grad().copy_(torch::from_blob(flat.data() + at, p.grad().sizes(), torch::kFloat).to(p.grad().dtype()));
    at += static_cast<size_t>(n);
  }
}

std::vector<float> Trainer::flat_parameters() {
  std::vector<float> flat;
  for (const torch::Tensor& p : agent_->module().parameters()) {
    const torch::Tensor t = p.detach().contiguous().to(torch::kFloat);
    flat.insert(flat.end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  }
  return flat;
}

void Trainer::prepare(const OpGraph& graph) {
  const auto t0 = Clock::now();
  agent_->prepare(graph, cluster_);
  profile_.prepare_s += seconds_since(t0);
}

void Trainer::use_graph(size_t index) {
  if (index == current_ && !prepare_next_graph_) return;
  prepare_next_graph_ = false;
  current_ = index;
  env_->set_graph(*graphs_[index]);
  sampled_best_ = Placement();  // per graph, as the env's best
  sampled_best_us_ = std::numeric_limits<double>::infinity();
  prepare(*graphs_[index]);
}

void Trainer::greedy_placement(size_t index, TrainResult& result) {
  torch::NoGradGuard no_grad;
  const OpGraph& graph = *graphs_[index];
  if (index != current_ || graphs_.size() > 1) prepare(graph);
  // Budget 0 / 0: never exhausted; these evaluations are not the training's.
  PlacementEnv env(graph, cluster_, evaluator_, defaults_.penalty, 0, 0, nullptr);
  SampleRng rng(opt_.seed);  // only a random starting placement draws from it
  agent_->run_episode(env, rng, /*greedy=*/true);
  if (env.last_placement().size() != graph.num_ops())
    throw Error("agent '" + name_ + "' played no greedy step on " + graph.name());
  result.greedy = env.last_placement();
  result.greedy_evaluations = env.evaluations();
  // The episode's last evaluation was of this placement: its unpenalised time and
  // feasibility come from there, not from one more evaluation past the budget.
  result.greedy_step_us = env.last_step_us();
  result.greedy_feasible = env.last_feasible();
  if (graphs_.size() > 1 || index != current_) prepare(*graphs_[current_]);
}

double Trainer::fraction_spent() const {
  double f = 0;
  if (env_->budget_evals() > 0) f = std::max(f, double(env_->evaluations()) / env_->budget_evals());
  if (env_->budget_seconds() > 0) f = std::max(f, env_->elapsed_s() / env_->budget_seconds());
  if (opt_.budget_episodes > 0) f = std::max(f, double(counters_.episodes) / double(opt_.budget_episodes));
  return std::min(1.0, f);
}

TrainResult Trainer::run() {
  const auto run_t0 = Clock::now();
  if (opt_.budget_evals < 0 || opt_.budget_seconds < 0 || opt_.budget_episodes < 0)
    throw ConfigError("budgets must not be negative");
  if (opt_.few_shot < 0) throw ConfigError("few_shot must not be negative");
  // A nan or inf setting would train on silently (every comparison with nan is false).
  const std::pair<const char*, double> numbers[] = {{"learning rate (--lr)", opt_.learning_rate},
                                                    {"entropy bonus (--entropy)", opt_.entropy_coef},
                                                    {"entropy end (--entropy-end)", opt_.entropy_end},
                                                    {"--entropy-floor", opt_.entropy_floor},
                                                    {"--entropy-floor-until", opt_.entropy_floor_until},
                                                    {"--entropy-floor-step", opt_.entropy_floor_step},
                                                    {"--checkpoint-every", opt_.checkpoint_every_s},
                                                    {"--budget-seconds", opt_.budget_seconds}};
  for (const auto& [name, value] : numbers)
    if (!std::isfinite(value)) throw ConfigError(std::string(name) + " must be a finite number");
  if (opt_.checkpoint_every_s < 0 || opt_.checkpoint_every_updates < 0)
    throw ConfigError("--checkpoint-every and --checkpoint-every-updates must not be negative");
  const bool zero_shot = opt_.budget_evals == 0 && opt_.budget_seconds == 0 && opt_.budget_episodes == 0;
  if (zero_shot && opt_.init_policy.empty())
    throw ConfigError("training needs a budget: give --budget-evals N, --budget-episodes N and/or "
                      "--budget-seconds S (> 0), or an initial policy to place zero-shot");
  if (graphs_.empty()) throw ConfigError("training needs at least one graph");
  for (const OpGraph* g : graphs_) AWARE_CHECK(g != nullptr, "null graph");
  debug_ = opt_.debug || std::getenv("AWARE_RL_DEBUG") != nullptr;
  if (opt_.threads < 1) throw ConfigError("--threads must be at least 1");
  if (!AgentRegistry::instance().has(name_)) AgentRegistry::instance().create(name_, {}, 1);  // throws listing names
  // The preset's settings (settings.h), the options given winning.
  const bool floor_given = opt_.entropy_floor != -1;
  defaults_ = run_settings(name_, opt_);
  ppo_ = opt_.algorithm == "ppo";
  ppo_epochs_ = defaults_.ppo_epochs;
  ppo_clip_ = defaults_.ppo_clip;
  if (opt_.parallel != nullptr && opt_.parallel->size() > 1) {
    parallel_ = opt_.parallel;
    if (opt_.budget_seconds > 0)
      throw ConfigError("data-parallel training takes an evaluation budget, not --budget-seconds (the "
                        "processes must stop together)");
    if (opt_.budget_evals > 0 && opt_.budget_evals / parallel_->size() < 2)
      throw ConfigError(std::to_string(opt_.budget_evals) + " evaluations split over " +
                        std::to_string(parallel_->size()) + " processes leaves fewer than 2 each");
    if (opt_.budget_episodes > 0 && opt_.budget_episodes < parallel_->size())
      throw ConfigError(std::to_string(opt_.budget_episodes) + " episodes split over " +
                        std::to_string(parallel_->size()) + " processes leaves none to some");
    opt_.budget_episodes = opt_.budget_episodes / parallel_->size() +
                           (parallel_->rank() == 0 ? opt_.budget_episodes % parallel_->size() : 0);
    // Each process its share of the budget (the remainder to rank 0, as when a
    // checkpoint is split anew), so the job spends all of it; outputs are the
    // caller's to give rank 0 alone.
    job_budget_evals_ = opt_.budget_evals;
    opt_.budget_evals = opt_.budget_evals / parallel_->size() +
                        (parallel_->rank() == 0 ? opt_.budget_evals % parallel_->size() : 0);
  }
  torch::set_num_threads(opt_.threads);
#if defined(__GLIBC__)
  // The networks allocate and free tensors of a few MB on every pass; glibc hands
  // such blocks back to the kernel each time (mmap / heap trim), and the page
  // faults of getting them again cost 10-15% of a training run. Keep them.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif

  config_ = opt_.agent_options;
  // A checkpoint decides the network settings; then an initial policy; then the user.
  bool resuming = !opt_.resume_dir.empty() && fs::exists(checkpoint_path());
  // Data-parallel: rank 0's checkpoint, sent to every process as bytes (the
  // others need not see its folder).
  std::string checkpoint_bytes;
  if (parallel_ != nullptr && !opt_.resume_dir.empty()) {
    std::string mine = "0";
    if (parallel_->rank() == 0 && resuming) {
      std::ifstream in(checkpoint_path(), std::ios::binary);
      if (!in) throw ParseError("checkpoint " + checkpoint_path() + " cannot be read");
      mine = "1" + std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    checkpoint_bytes = parallel_->broadcast_text(mine);
    resuming = checkpoint_bytes[0] == '1';
    checkpoint_bytes.erase(0, 1);
  }
  torch::serialize::InputArchive checkpoint;
  json state;
  std::string settings_from;  // the file the network settings came from, if any
  if (resuming) {
    state = read_checkpoint_state(checkpoint, checkpoint_path(),
                                  parallel_ != nullptr ? &checkpoint_bytes : nullptr);
    const json settings = state.value("config", json::object());
    for (const auto& [k, v] : settings.items()) config_[k] = v.get<std::string>();
    // A checkpoint from before the graph normalisation (2026-12-05) ran without it.
    if (agent_network(name_) == "aware" && !settings.contains("norm")) config_["norm"] = "off";
    settings_from = "checkpoint " + checkpoint_path();
  } else if (!opt_.init_policy.empty()) {
    const json header = read_policy_header(opt_.init_policy);
    if (header.value("agent", "") != agent_network(name_))
      throw ConfigError(opt_.init_policy + " holds a policy of agent '" + header.value("agent", "") +
                        "', not '" + agent_network(name_) + "'");
    if (header.value("devices", -1) != cluster_.num_devices())
      throw ConfigError(opt_.init_policy + " holds a policy for " +
                        std::to_string(header.value("devices", -1)) + " devices; this cluster has " +
                        std::to_string(cluster_.num_devices()));
    config_ = merge_policy_config(header, config_, opt_.init_policy);
    settings_from = "policy " + opt_.init_policy;
    // Aware policies from before bounded logits (2026-12-03) were trained unbounded.
    if (agent_network(name_) == "aware" && !header.value("config", json::object()).contains("bound"))
      config_.emplace("bound", "0");
    // ... and those from before the graph normalisation (2026-12-05) without it:
    // the header names norm only when it is on.
    if (agent_network(name_) == "aware" && !header.value("config", json::object()).contains("norm"))
      config_.emplace("norm", "off");
  }
  // The preset's agent options, below the user's and what a checkpoint or a
  // policy file decides (a policy's network shapes are the policy's).
  for (const auto& [key, value] : defaults_.agent_options) config_.emplace(key, value);

  // torch's generator is the process's: trainers on several threads (worker
  // threads) seed it and draw their initial weights one at a time.
  static std::mutex torch_seed_mutex;
  std::unique_lock<std::mutex> seed_lock(torch_seed_mutex);
  torch::manual_seed(opt_.seed);
  try {
    agent_ = AgentRegistry::instance().create(name_, config_, cluster_.num_devices());
  } catch (const std::exception& e) {
    // Settings read from a file are the file's fault: name it (a damaged or
    // foreign file may hold a size no network can be built with).
    if (settings_from.empty()) throw;
    const std::string what = e.what();
    throw ConfigError(settings_from + ": cannot build the network it describes: " +
                      what.substr(0, what.find('\n')));
  }
  seed_lock.unlock();
  prepare(graph_);
  if (!resuming && !opt_.init_policy.empty()) load_policy(*agent_, opt_.init_policy);
  base_lr_ = opt_.learning_rate > 0 ? opt_.learning_rate : defaults_.learning_rate;
  entropy_coef_ = opt_.entropy_coef >= 0 ? opt_.entropy_coef : defaults_.entropy_coef;
  grad_clip_ = opt_.grad_clip > 0 ? opt_.grad_clip : defaults_.grad_clip;
  discount_ = opt_.discount >= 0 ? opt_.discount : defaults_.discount;
  if (discount_ > 1) throw ConfigError("discount must be in [0, 1]");
  standardize_ = opt_.standardize_advantages < 0 ? defaults_.standardize_advantages
                                                 : opt_.standardize_advantages > 0;
  episodes_per_update_ = opt_.episodes_per_update > 0 ? opt_.episodes_per_update : defaults_.episodes_per_update;
  if (parallel_ != nullptr) {
    const int n = parallel_->size();
    episodes_per_update_ = std::max(1, (episodes_per_update_ + n - 1) / n);
    // The same start everywhere (rank 0's weights), then each process samples its own episodes.
    std::vector<float> start = flat_parameters();
    parallel_->broadcast(start);
    size_t at = 0;
    torch::NoGradGuard no_grad;
    for (torch::Tensor& p : agent_->module().parameters()) {
      p.copy_(torch::from_blob(start.data() + at, p.sizes(), torch::kFloat).to(p.dtype()));
      at += static_cast<size_t>(p.numel());
    }
    torch::manual_seed(opt_.seed + 7919ULL * static_cast<std::uint64_t>(parallel_->rank()));
  }
  ema_baselines_.assign(graphs_.size(), EmaBaseline(defaults_.ema_decay));
  if (!std::isnan(defaults_.ema_start))
    for (EmaBaseline& b : ema_baselines_) b.set(defaults_.ema_start, true);
  step_baselines_.assign(graphs_.size(), PerStepMeanBaseline(defaults_.baseline_window));
  adam_ = std::make_unique<torch::optim::Adam>(agent_->module().parameters(),
                                               torch::optim::AdamOptions(base_lr_));
  // The greedy episode after training is part of the budget: one evaluation is
  // kept back for it (single-graph runs with at least two evaluations), so a
  // learned agent and a search given N evaluations really use N each.
  // (Placeto with evaluate=step makes one per step: all of them are kept back.)
  const long long greedy_cost = std::max(1, agent_->greedy_evaluations());
  // Fewer would be overspent: the greedy episode runs whatever the budget left.
  // (A resumed run's budget counts what the checkpoint spent already.)
  if (opt_.greedy_eval && !zero_shot && !resuming && graphs_.size() == 1 && parallel_ == nullptr &&
      opt_.budget_evals > 0 && opt_.budget_evals <= greedy_cost)
    throw ConfigError("--budget-evals " + std::to_string(opt_.budget_evals) + " is below the " +
                      std::to_string(greedy_cost + 1) + " evaluations agent " + name_ +
                      " needs: one sampled episode's and " + std::to_string(greedy_cost) +
                      " for the greedy episode after training");
  reserve_greedy_ = opt_.greedy_eval && !zero_shot && graphs_.size() == 1 && opt_.budget_evals > greedy_cost
                        ? greedy_cost
                        : 0;
  env_ = std::make_unique<PlacementEnv>(graph_, cluster_, evaluator_, defaults_.penalty,
                                        opt_.budget_evals - reserve_greedy_,
                                        opt_.budget_seconds, opt_.progress);
  // Aware's `around` samples around one graph's incumbent; prepare() starts
  // every graph without one, and several graphs re-prepare every update.
  if (graphs_.size() > 1 && config_.count("around") && std::stod(config_.at("around")) > 0)
    throw ConfigError("around (sampling around the incumbent) is for training on one graph");
  if (opt_.elite > 0 && agent_network(name_) != "aware")
    throw ConfigError("elite: agent '" + name_ + "' has no imitation loss (the elite step is for aware)");
  elite_windows_.assign(graphs_.size(), EliteWindow(opt_.elite_window));
  if (opt_.entropy_floor > 0) {
    // Aware's `around` scores its samples as a mixture whose entropy is at most
    // about a tenth of ln D at around=0.97: a floor on it could not be met. A
    // floor the user gave is refused; the preset's yields (off, as `around` was
    // measured), and the result's entropy_floor says 0.
    if (config_.count("around") && std::stod(config_.at("around")) > 0) {
      if (floor_given)
        throw ConfigError("--entropy-floor and around (sampling around the incumbent) cannot be combined: the "
                          "samples' entropy is the mixture's, which the floor cannot raise");
      opt_.entropy_floor = 0;
    }
    // Data-parallel (--workers, --ranks): one controller per process, reading its
    // own share of the batch (entropy_floor.h says why), as the measured runs had.
  }
  entropy_floors_.assign(graphs_.size(),
                         EntropyFloor(opt_.entropy_floor, opt_.entropy_floor_until, opt_.entropy_floor_step));
  if (defaults_.guide_share > 0 && !zero_shot) {
    if (graphs_.size() > 1) throw ConfigError("the guided hybrid (" + name_ + ") trains on one graph");
    guide_ = std::make_unique<Guide>(
        defaults_, opt_.seed + 0x2545F4914F6CDD1DULL * static_cast<std::uint64_t>(parallel_ ? parallel_->rank() + 1 : 0));
  }
  rng_ = SampleRng(parallel_ == nullptr ? opt_.seed
                                        : opt_.seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(parallel_->rank()));

  if (resuming) {
    const std::string path = checkpoint_path();
    try {
      torch::serialize::InputArchive model, optim;
      checkpoint.read("model", model);
      agent_->module().load(model);
      checkpoint.read("optimizer", optim);
      adam_->load(optim);
      counters_.updates = state.at("updates").get<long long>();
      curve_ = curve_from_json(state.at("curve"));
      if (graphs_.size() > 1) {
        std::vector<std::string> names;
        for (const OpGraph* g : graphs_) names.push_back(g->name());
        if (state.value("graphs", json::array()) != json(names))
          throw ConfigError("checkpoint " + path + " was made for other graphs (" +
                            state.value("graphs", json::array()).dump() + ")");
      }
      restore_own_state(state);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      std::string msg = e.what();
      throw ParseError("checkpoint " + path + " is corrupt: " + msg.substr(0, msg.find('\n')));
    }
  }

  // Progress counts against the whole budget (the greedy episode's evaluation
  // included), names the graph being trained on, and shows a best step time only
  // for one graph: across a family the "best" of different graphs is meaningless.
  // The greedy episode's step once it has run: the final report's best is the
  // result's, which is the better of the samples' best and the greedy placement.
  double greedy_best_us = -1;
  const auto report = [&](bool final, long long extra_evaluations) {
    if (opt_.progress == nullptr) return;
    Progress pr;
    pr.task = name_ + " on " + graphs_[current_]->name();
    if (graphs_.size() > 1)
      pr.task += " (graph " + std::to_string(current_ + 1) + " of " + std::to_string(graphs_.size()) + ")";
    // Data-parallel: the job's evaluations against the job's budget.
    pr.done = (parallel_ != nullptr ? job_evaluations_ : env_->evaluations()) + extra_evaluations;
    const long long budget = parallel_ != nullptr ? job_budget_evals_ : opt_.budget_evals;
    pr.total = budget > 0 ? std::max(budget, pr.done) : 0;
    pr.best_step_us =
        graphs_.size() == 1 && env_->best_feasible() ? env_->best_step_us() : -1;
    if (graphs_.size() == 1 && greedy_best_us >= 0 && (pr.best_step_us < 0 || greedy_best_us < pr.best_step_us))
      pr.best_step_us = greedy_best_us;
    pr.elapsed_s = env_->elapsed_s();
    const double f = fraction_spent();
    pr.eta_s = f > 0 ? pr.elapsed_s / f * (1 - f) : -1;
    pr.message = final ? "done" : "update " + std::to_string(counters_.updates);
    if (!final && graphs_.size() == 1 && !curve_.empty()) {
      const CurvePoint& last = curve_.back();
      pr.sample_mean_us = last.mean_step_us;
      pr.sample_min_us = last.min_step_us;
      pr.sample_max_us = last.max_step_us;
      pr.entropy = last.entropy;
    }
    opt_.progress->on_progress(pr);
  };

  // Behaviour cloning first (one graph, a fresh run).
  TrainResult imitation;
  const bool imitating = !opt_.imitate.empty() || opt_.imitate_target.size() > 0;
  if (imitating && !zero_shot) {
    if (graphs_.size() > 1) throw ConfigError("imitate: behaviour cloning is for training on one graph");
    if (!resuming) imitate(imitation);
  }
  double last_checkpoint_s = env_->elapsed_s();
  double last_curve_s = env_->elapsed_s();
  long long last_checkpoint_update = counters_.updates;
  // Data-parallel: the processes train update for update while any of them has
  // budget left (one whose share has run out takes part with no episodes, so the
  // job's budget is spent exactly even when the shares are uneven, as after a
  // resume with another number of processes); one that is cancelled ends them all.
  const auto episodes_left = [&] {
    return opt_.budget_episodes > 0 ? opt_.budget_episodes - counters_.episodes : episodes_per_update_;
  };
  const auto go_on = [&] {
    const bool mine = !env_->exhausted() && episodes_left() > 0;
    if (parallel_ == nullptr) return mine;
    return parallel_->maximum(env_->cancelled() ? 2 : mine ? 1 : 0) == 1;
  };
  while (!zero_shot && go_on()) {
    // Several graphs: one graph per update, in turn.
    use_graph(static_cast<size_t>(counters_.updates % static_cast<long long>(graphs_.size())));
    std::vector<Episode> batch;
    const auto t0 = Clock::now();
    agent_->on_update(counters_.updates);
    // The episode budget's last update plays only what is left (none for a
    // data-parallel process whose share is spent: it takes part with no episodes).
    const int count = static_cast<int>(std::clamp<long long>(episodes_left(), 0, episodes_per_update_));
    for (Episode& ep : agent_->run_episodes(*env_, rng_, count)) {
      ++counters_.episodes;
      if (!ep.steps.empty()) batch.push_back(std::move(ep));
    }
    profile_.episodes_s += seconds_since(t0);
    if (batch.empty() && parallel_ == nullptr) break;
    if (guide_ != nullptr) {
      // The hybrid: the batch's best sample is the refiner's next start; the
      // refinement's find joins the env's best before the update, so this
      // update's self-imitation already pulls towards it.
      const auto tg = Clock::now();
      for (const Episode& ep : batch) guide_->propose(ep.placement, ep.final_step_us);
      guide_->refine(*env_);
      profile_.guide_s += seconds_since(tg);
    }
    const auto t1 = Clock::now();
    update(batch);
    if (parallel_ != nullptr) {
      // A data-parallel run's curve counts the job's evaluations and its best.
      const double job_evaluations = parallel_->sum(static_cast<double>(env_->evaluations()));
      const double job_best = parallel_->minimum(env_->best_penalised_us());
      job_evaluations_ = std::llround(job_evaluations);
      if (!batch.empty()) {
        curve_.back().evaluations = job_evaluations_;
        curve_.back().best_step_us = job_best;
      }
    }
    profile_.update_s += seconds_since(t1);
    report(false, 0);
    if (!opt_.resume_dir.empty()) {
      const bool by_time = opt_.checkpoint_every_s > 0 &&
                           env_->elapsed_s() - last_checkpoint_s >= opt_.checkpoint_every_s;
      const bool by_updates = opt_.checkpoint_every_updates > 0 &&
                              counters_.updates - last_checkpoint_update >= opt_.checkpoint_every_updates;
      bool due = by_time || by_updates;
      // Data-parallel: every process checkpoints together (writing is collective).
      if (parallel_ != nullptr) due = parallel_->maximum(due ? 1 : 0) > 0;
      if (due) {
        write_checkpoint();
        last_checkpoint_s = env_->elapsed_s();
        last_checkpoint_update = counters_.updates;
      }
    }
    // The curve is streamed: rewritten whole (by rename) every few seconds, so a
    // long run can be watched and plotted as it goes.
    if (!opt_.curve_csv.empty() && env_->elapsed_s() - last_curve_s >= opt_.curve_every_s) {
      write_curve_csv(curve_, opt_.curve_csv);
      last_curve_s = env_->elapsed_s();
    }
  }
  if (parallel_ != nullptr) {
    // The policies must still be one: the same gradients, the same steps.
    double sum = 0;
    for (float v : flat_parameters()) sum += static_cast<double>(v) * 1.000001;
    if (parallel_->minimum(sum) != parallel_->maximum(sum))
      throw Error("data-parallel training: the processes' policies diverged");
  }
  if (!opt_.resume_dir.empty()) write_checkpoint();
  if (!opt_.save_policy.empty()) save_policy(*agent_, agent_->module(), opt_.save_policy);
  if (!opt_.curve_csv.empty()) write_curve_csv(curve_, opt_.curve_csv);

  TrainResult result;
  const auto greedy_t0 = Clock::now();
  if (opt_.greedy_eval || zero_shot) greedy_placement(0, result);
  profile_.greedy_s = seconds_since(greedy_t0);
  profile_.simulate_s = env_->simulate_s();
  profile_.features_s = env_->features_s();
  profile_.episode_backward_s = env_->backward_s();
  profile_.total_s = seconds_since(run_t0);
  result.profile = profile_;
  result.imitation_target_us = imitation.imitation_target_us;
  result.imitation_steps = imitation.imitation_steps;
  result.imitation_probability = imitation.imitation_probability;
  result.imitation_accuracy = imitation.imitation_accuracy;
  result.self_imitation_updates = self_imitation_updates_;
  result.self_imitation_probability = self_imitation_probability_;
  result.self_imitation_weight = opt_.self_imitation;
  result.elite_updates = elite_updates_;
  result.elite_probability = elite_probability_;
  result.elite_fraction = opt_.elite;
  result.elite_window = opt_.elite_window;
  result.entropy_floor = opt_.entropy_floor;
  result.entropy_floor_until = opt_.entropy_floor_until;
  if (!entropy_floors_.empty()) {
    result.entropy_floor_start = entropy_floors_.at(current_).start();
    result.entropy_floor_multiplier = entropy_floors_.at(current_).multiplier();
  }
  if (guide_ != nullptr) {
    result.guide_rounds = guide_->rounds();
    result.guide_evaluations = guide_->evaluations();
    result.guide_improvements = guide_->improvements();
  }
  result.imitation_evaluations = imitation.imitation_evaluations;
  if (result.greedy.size() > 0 && result.greedy_feasible) greedy_best_us = result.greedy_step_us;
  report(true, result.greedy_evaluations);
  if (zero_shot) {
    result.best = result.greedy;
    result.best_step_us = result.greedy_step_us;
    result.best_feasible = result.greedy_feasible;
    result.curve = curve_;
    if (opt_.few_shot > 0) {
      // K samples of the policy, outside any budget; the best of them and the greedy one.
      torch::NoGradGuard no_grad;
      PlacementEnv samples(graph_, cluster_, evaluator_, defaults_.penalty, opt_.few_shot, 0, nullptr);
      SampleRng rng(opt_.seed ^ 0x5851F42D4C957F2DULL);
      while (!samples.exhausted()) {
        const long long before = samples.evaluations();
        agent_->run_episodes(samples, rng, opt_.few_shot - static_cast<int>(before));
        if (samples.evaluations() == before) break;
      }
      result.few_shot_evaluations = samples.evaluations();
      result.few_shot_best_us = samples.best_step_us();
      result.evaluations = samples.evaluations();  // the greedy episode's are greedy_evaluations, as without
      if ((samples.best_feasible() && !result.best_feasible) ||
          (samples.best_feasible() == result.best_feasible && samples.best_step_us() < result.best_step_us)) {
        result.best = samples.best_placement();
        result.best_step_us = samples.best_step_us();
        result.best_feasible = samples.best_feasible();
      }
    }
    return result;
  }
  result.best = env_->best_placement();
  result.best_step_us = env_->best_step_us();
  result.best_feasible = env_->best_feasible();
  result.evaluations = env_->evaluations() + result.greedy_evaluations;
  // The trained policy's own placement can beat every sampled one (a policy that
  // has converged samples worse than its mode): the better of the two is returned.
  if (result.greedy.size() == result.best.size() && result.greedy.size() > 0 &&
      ((result.greedy_feasible && !result.best_feasible) ||
       (result.greedy_feasible == result.best_feasible && result.greedy_step_us < result.best_step_us))) {
    result.best = result.greedy;
    result.best_step_us = result.greedy_step_us;
    result.best_feasible = result.greedy_feasible;
    result.best_is_greedy = true;
  }
  result.updates = counters_.updates;
  result.episodes = counters_.episodes;
  result.seconds = env_->elapsed_s();
  result.resumed = resuming;
  for (const torch::Tensor& p : agent_->module().parameters()) result.policy_parameters += p.numel();
  result.episodes_per_update = episodes_per_update_;
  result.cancelled = env_->cancelled();
  result.curve = curve_;
  if (result.best.size() == 0) throw Error("training ended before any evaluation (budget too small?)");
  return result;
}

}  // namespace detail

namespace {
// The agents' boundary: LibTorch's own errors (c10::Error, whose what() carries
// a stack trace of thirty lines) leave as one Error line naming the agent.
template <class Run>
TrainResult torch_errors_as_ours(const std::string& agent, Run run) {
  try {
    return run();
  } catch (const c10::Error& e) {
    throw Error("agent " + agent + ": LibTorch: " + first_line(e.what_without_backtrace()));
  }
}
}  // namespace

TrainResult train_agent(const std::string& agent, const OpGraph& graph, const Cluster& cluster,
                        Evaluator& evaluator, const TrainOptions& options) {
  return torch_errors_as_ours(agent, [&] {
    detail::Trainer trainer(agent, {&graph}, cluster, evaluator, options);
    return trainer.run();
  });
}

TrainResult train_agent_multi(const std::string& agent, const std::vector<const OpGraph*>& graphs,
                              const Cluster& cluster, Evaluator& evaluator,
                              const TrainOptions& options) {
  if (graphs.empty()) throw ConfigError("train_agent_multi needs at least one graph");
  return torch_errors_as_ours(agent, [&] {
    detail::Trainer trainer(agent, graphs, cluster, evaluator, options);
    return trainer.run();
  });
}

}  // namespace aware::rl
