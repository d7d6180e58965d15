// The shared policy-gradient trainer and its checkpoints (the registry, sampling
// helpers and policy files are in agent.cc). Includes LibTorch.
#include <algorithm>
#include <limits>
#include <cmath>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "agents/rl/agent.h"
#include "agents/rl/trainer.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/placer.h"
#include "core/progress.h"

namespace aware::rl {

using nlohmann::json;
namespace fs = std::filesystem;

// ------------------------------------------------------------ the trainer

namespace {

constexpr int kCheckpointVersion = 1;

struct Counters {
  long long updates = 0;
  long long episodes = 0;
};

json curve_to_json(const std::vector<CurvePoint>& curve) {
  json out = json::array();
  for (const auto& p : curve) {
    // The graph (pre-training tags each point; "" otherwise), then the spread.
    out.push_back({p.evaluations, p.seconds, p.mean_step_us, p.best_step_us, p.entropy, p.loss, p.graph,
                   p.min_step_us, p.max_step_us});
  }
  return out;
}

std::vector<CurvePoint> curve_from_json(const json& j) {
  std::vector<CurvePoint> out;
  // JSON has no infinity: a penalised step of +inf is stored as null.
  const auto number = [](const json& v) {
    return v.is_null() ? std::numeric_limits<double>::infinity() : v.get<double>();
  };
  for (const auto& r : j) {
    CurvePoint p;
    p.evaluations = r.at(0).get<long long>();
    p.seconds = r.at(1).get<double>();
    p.mean_step_us = number(r.at(2));
    p.best_step_us = number(r.at(3));
    p.entropy = r.at(4).get<double>();
    p.loss = r.at(5).get<double>();
    if (r.size() > 6) p.graph = r.at(6).get<std::string>();
    // Checkpoints written before the spread was kept: the mean stands in for it.
    p.min_step_us = r.size() > 8 ? number(r.at(7)) : p.mean_step_us;
    p.max_step_us = r.size() > 8 ? number(r.at(8)) : p.mean_step_us;
    out.push_back(std::move(p));
  }
  return out;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double json_number(const json& j, const char* key) {
  // JSON has no infinity: a best of +inf is stored as null.
  return j.at(key).is_null() ? std::numeric_limits<double>::infinity() : j.at(key).get<double>();
}

class Trainer {
 public:
  Trainer(std::string agent_name, std::vector<const OpGraph*> graphs, const Cluster& cluster,
          Evaluator& evaluator, const TrainOptions& options)
      : name_(std::move(agent_name)), graphs_(std::move(graphs)), graph_(*graphs_.at(0)),
        cluster_(cluster), evaluator_(evaluator), opt_(options) {}

  TrainResult run();

 private:
  std::string checkpoint_path() const { return (fs::path(opt_.resume_dir) / "checkpoint.pt").string(); }
  // Collective in data-parallel training (rank 0 writes every process's state).
  void write_checkpoint();
  // This process's own part of a checkpoint: evaluations, episodes, sampling
  // RNG, best, baselines, the agent's extra state.
  json own_state() const;
  // Restores this process's part from a checkpoint's `state` (any process count).
  void restore_own_state(const json& state);
  // `bytes`: the file as read by rank 0 (data-parallel); null: read `path` here.
  json read_checkpoint_state(torch::serialize::InputArchive& archive, const std::string& path,
                             const std::string* bytes);
  void update(std::vector<Episode>& episodes);
  double fraction_spent() const;
  // Makes graphs_[index] the one the env and the agent play.
  void use_graph(size_t index);
  // One greedy episode on graphs_[index], outside the budget.
  void greedy_placement(size_t index, TrainResult& result);

  std::string name_;
  std::vector<const OpGraph*> graphs_;
  const OpGraph& graph_;  // graphs_[0]: what single-graph checkpoints record
  const Cluster& cluster_;
  Evaluator& evaluator_;
  TrainOptions opt_;
  Options config_;
  std::unique_ptr<Agent> agent_;
  AgentDefaults defaults_;
  std::unique_ptr<torch::optim::Adam> adam_;
  std::unique_ptr<PlacementEnv> env_;
  SampleRng rng_;
  // Per graph (index as graphs_); single-graph runs use [0].
  std::vector<PerStepMeanBaseline> step_baselines_;
  std::vector<EmaBaseline> ema_baselines_;
  size_t current_ = 0;
  Counters counters_;
  std::vector<CurvePoint> curve_;
  double base_lr_ = 1e-3, entropy_coef_ = 0.01, grad_clip_ = 1.0, discount_ = 1.0;
  bool standardize_ = false;
  int episodes_per_update_ = 1;
  bool ppo_ = false;
  bool debug_ = false;
  long long reserve_greedy_ = 0;  // evaluations of the budget kept for the greedy episode
  long long job_budget_evals_ = 0, job_evaluations_ = 0;  // data-parallel: the whole job's
  TrainProfile profile_;
  // Behaviour cloning before training (TrainOptions::imitate), into `result`.
  void imitate(TrainResult& result);
  Placement imitation_target(TrainResult& result);
  // agent_->prepare, timed.
  void prepare(const OpGraph& graph);
  ParallelTraining* parallel_ = nullptr;  // data-parallel over processes; null: alone
  // Data-parallel: the gradients' mean over the processes, in place.
  void average_gradients();
  // Data-parallel: the parameters flattened (for the start's broadcast and the end's check).
  std::vector<float> flat_parameters();
};

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
  if (index == current_) return;
  current_ = index;
  env_->set_graph(*graphs_[index]);
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
  return std::min(1.0, f);
}

void Trainer::update(std::vector<Episode>& episodes) {
  // The learning rate follows the budget spent: the job's in data-parallel
  // training (the processes' shares may run out unevenly), so that every
  // process takes the same step.
  const double spent = parallel_ != nullptr ? parallel_->maximum(fraction_spent()) : fraction_spent();
  for (auto& group : adam_->param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options())
        .lr(agent_->learning_rate(base_lr_, counters_.updates, spent));
  if (episodes.empty()) {
    // Data-parallel only: this process's share ran out of budget before the
    // others'; it still takes part in the step, with no gradient of its own.
    AWARE_CHECK(parallel_ != nullptr, "an update of no episodes");
    for (int epoch = 0; epoch < (ppo_ ? std::max(1, opt_.ppo_epochs) : 1); ++epoch) {
      adam_->zero_grad();
      average_gradients();
      torch::nn::utils::clip_grad_norm_(agent_->module().parameters(), grad_clip_);
      adam_->step();
    }
    ++counters_.updates;
    return;
  }
  // Returns and advantages (constants), per episode and step.
  std::vector<std::vector<double>> advantages;
  double mean_step = 0;
  double min_step = std::numeric_limits<double>::infinity(), max_step = -min_step;
  for (auto& ep : episodes) {
    min_step = std::min(min_step, ep.final_step_us);
    max_step = std::max(max_step, ep.final_step_us);
    std::vector<double> rewards;
    for (const auto& s : ep.steps) rewards.push_back(s.reward);
    std::vector<double> returns = ep.sequential ? reward_to_go(rewards, discount_) : rewards;
    std::vector<double> adv(returns.size());
    if (defaults_.baseline == BaselineKind::kPerStepMean) {
      PerStepMeanBaseline& baseline = step_baselines_[current_];
      const std::vector<double> b = baseline.values(static_cast<int>(returns.size()));
      for (size_t i = 0; i < returns.size(); ++i) adv[i] = returns[i] - b[i];
      baseline.add(returns);
    } else {
      EmaBaseline& baseline = ema_baselines_[current_];
      for (size_t i = 0; i < returns.size(); ++i) adv[i] = returns[i] - baseline.advance(returns[i]);
    }
    advantages.push_back(std::move(adv));
    mean_step += ep.final_step_us / episodes.size();
  }
  if (standardize_) {
    // Zero mean, unit standard deviation over the batch's steps: the update's
    // size then no longer depends on the reward's scale (which differs between
    // graphs and shrinks as the policy converges), only on the ranking inside
    // the batch. A batch of identical advantages carries no signal: all zero.
    double sum = 0, sum_sq = 0, count = 0;
    for (const auto& adv : advantages)
      for (double a : adv) {
        sum += a;
        sum_sq += a * a;
        ++count;
      }
    const double mean = count > 0 ? sum / count : 0;
    const double var = count > 1 ? std::max(0.0, sum_sq / count - mean * mean) : 0;
    const double sd = std::sqrt(var);
    for (auto& adv : advantages)
      for (double& a : adv) a = sd > 1e-12 ? (a - mean) / sd : 0.0;
  }

  auto compute_loss = [&](bool ratio_clip, const std::vector<std::vector<torch::Tensor>>* old,
                          double* entropy_out) {
    torch::Tensor pg = torch::zeros({});
    torch::Tensor entropy = torch::zeros({});
    double decisions = 0;
    for (size_t e = 0; e < episodes.size(); ++e) {
      for (size_t i = 0; i < episodes[e].steps.size(); ++i) {
        const Step& s = episodes[e].steps[i];
        const double a = advantages[e][i];
        if (!ratio_clip) {
          pg = pg - a * s.log_prob;
        } else {
          const torch::Tensor ratio = torch::exp(s.log_prob - (*old)[e][i]);
          const torch::Tensor clipped = torch::clamp(ratio, 1 - opt_.ppo_clip, 1 + opt_.ppo_clip);
          pg = pg - torch::min(ratio * a, clipped * a);
        }
        entropy = entropy + s.entropy;
        decisions += s.decisions;
      }
    }
    const torch::Tensor mean_entropy = entropy / std::max(1.0, decisions);
    *entropy_out = mean_entropy.item<double>();
    return pg / static_cast<double>(episodes.size()) - entropy_coef_ * mean_entropy;
  };

  double entropy = 0;
  double loss_value = 0;
  auto step = [&](const torch::Tensor& loss) {
    adam_->zero_grad();
    const auto t0 = Clock::now();
    loss.backward();
    profile_.backward_s += seconds_since(t0);
    if (parallel_ != nullptr) average_gradients();  // before the clip: the clip of the mean
    torch::nn::utils::clip_grad_norm_(agent_->module().parameters(), grad_clip_);
    adam_->step();
    loss_value = loss.item<double>();
  };
  if (!ppo_) {
    step(compute_loss(false, nullptr, &entropy));
  } else {
    std::vector<std::vector<torch::Tensor>> old;
    for (const auto& ep : episodes) {
      old.emplace_back();
      for (const auto& s : ep.steps) old.back().push_back(s.log_prob.detach());
    }
    for (int epoch = 0; epoch < std::max(1, opt_.ppo_epochs); ++epoch) {
      if (epoch > 0)
        for (auto& ep : episodes) agent_->replay(ep);
      step(compute_loss(true, &old, &entropy));
    }
  }
  ++counters_.updates;
  CurvePoint p;
  p.evaluations = env_->evaluations();
  p.seconds = env_->elapsed_s();
  p.mean_step_us = mean_step;
  p.min_step_us = min_step;
  p.max_step_us = max_step;
  p.best_step_us = env_->best_penalised_us();
  p.entropy = entropy;
  p.loss = loss_value;
  if (graphs_.size() > 1) p.graph = graphs_[current_]->name();
  curve_.push_back(p);
  if (debug_) {
    double norm = 0;
    {
      torch::NoGradGuard no_grad;
      for (const auto& t : agent_->module().parameters()) norm += t.abs().sum().item<double>();
    }
    std::fprintf(stderr,
                 "%s update %lld%s%s: evals %lld mean %.1f best %.1f entropy %.4f loss %.4f "
                 "|params| %.4f\n",
                 name_.c_str(), counters_.updates, p.graph.empty() ? "" : " on ", p.graph.c_str(),
                 p.evaluations, p.mean_step_us, p.best_step_us, p.entropy, p.loss, norm);
  }
}

json Trainer::read_checkpoint_state(torch::serialize::InputArchive& archive, const std::string& path,
                                   const std::string* bytes) {
  if (bytes != nullptr)
    load_archive_bytes(archive, *bytes, path, "checkpoint");
  else
    load_archive(archive, path, "checkpoint");
  const json state = parse_header(ivalue_string(archive, "state", path), path);
  using F = HeaderField;
  check_header_fields(state, path,
                      {{"format", F::kString},
                       {"version", F::kInteger},
                       {"agent", F::kString},
                       {"devices", F::kInteger},
                       {"graph", F::kString},
                       {"graph_ops", F::kInteger},
                       {"config", F::kObject}});
  const json config = state.value("config", json::object());
  for (const auto& [key, value] : config.items()) {
    if (!value.is_string())
      throw ParseError(path + ": checkpoint setting '" + key + "' must be a string");
  }
  if (state.value("format", "") != "aware-rl-checkpoint" || state.value("version", 0) != kCheckpointVersion)
    throw ParseError(path + " is not an aware checkpoint of version " + std::to_string(kCheckpointVersion));
  if (state.value("agent", "") != name_)
    throw ConfigError("checkpoint " + path + " belongs to agent '" + state.value("agent", "") +
                      "', not '" + name_ + "'");
  if (state.value("devices", -1) != cluster_.num_devices() ||
      state.value("graph_ops", -1) != graph_.num_ops())
    throw ConfigError("checkpoint " + path + " was made for graph '" + state.value("graph", "") +
                      "' (" + std::to_string(state.value("graph_ops", -1)) + " ops) on " +
                      std::to_string(state.value("devices", -1)) + " devices; this run has '" +
                      graph_.name() + "' (" + std::to_string(graph_.num_ops()) + " ops) on " +
                      std::to_string(cluster_.num_devices()));
  return state;
}

json Trainer::own_state() const {
  auto finite = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json own;
  own["evaluations"] = env_->evaluations();
  own["episodes"] = counters_.episodes;
  own["rng"] = std::to_string(rng_.state());
  own["best"] = env_->best_placement().device_of_op;
  own["best_penalised_us"] = finite(env_->best_penalised_us());
  own["best_step_us"] = finite(env_->best_step_us());
  own["best_feasible"] = env_->best_feasible();
  json histories = json::array(), emas = json::array();
  for (size_t g = 0; g < graphs_.size(); ++g) {
    histories.push_back(step_baselines_[g].history());
    emas.push_back({ema_baselines_[g].value(), ema_baselines_[g].initialised()});
  }
  own["baseline_histories"] = histories;
  own["emas"] = emas;
  own["extra"] = agent_->extra_state();
  return own;
}

void Trainer::write_checkpoint() {
  const json own = own_state();
  json ranks = json::array();
  if (parallel_ != nullptr) {
    for (const std::string& text : parallel_->gather_text(own.dump())) ranks.push_back(json::parse(text));
    if (parallel_->rank() != 0) return;
  }
  json state = own;  // alone: this process's state; data-parallel: rank 0's, with the job's below
  state["format"] = "aware-rl-checkpoint";
  state["version"] = kCheckpointVersion;
  state["agent"] = name_;
  state["devices"] = cluster_.num_devices();
  state["graph"] = graph_.name();
  state["graph_ops"] = graph_.num_ops();
  state["config"] = config_;
  state["seed"] = opt_.seed;
  state["seconds"] = env_->elapsed_s();
  state["updates"] = counters_.updates;
  state["curve"] = curve_to_json(curve_);
  if (graphs_.size() > 1) {
    json names = json::array();
    for (const OpGraph* g : graphs_) names.push_back(g->name());
    state["graphs"] = names;
  }
  if (parallel_ != nullptr) {
    // The job's evaluations, episodes and best at the top (what a run with
    // another number of processes resumes from), each process's own state in "ranks".
    long long evaluations = 0, episodes = 0;
    size_t best = 0;
    const auto better = [](const json& a, const json& b) {
      if (a.at("best_feasible").get<bool>() != b.at("best_feasible").get<bool>())
        return a.at("best_feasible").get<bool>();
      return json_number(a, "best_penalised_us") < json_number(b, "best_penalised_us");
    };
    for (size_t r = 0; r < ranks.size(); ++r) {
      evaluations += ranks[r].at("evaluations").get<long long>();
      episodes += ranks[r].at("episodes").get<long long>();
      if (better(ranks[r], ranks[best])) best = r;
    }
    state["evaluations"] = evaluations;
    state["episodes"] = episodes;
    for (const char* key : {"best", "best_penalised_us", "best_step_us", "best_feasible"})
      state[key] = ranks[best].at(key);
    state["processes"] = static_cast<int>(ranks.size());
    state["ranks"] = ranks;
  }
  torch::serialize::OutputArchive archive;
  archive.write("state", c10::IValue(state.dump()));
  torch::serialize::OutputArchive model;
  agent_->module().save(model);
  archive.write("model", model);
  torch::serialize::OutputArchive optim;
  adam_->save(optim);
  archive.write("optimizer", optim);
  save_archive_atomic(archive, checkpoint_path());
  if (!opt_.curve_csv.empty()) write_curve_csv(curve_, opt_.curve_csv);
  if (opt_.verbose)
    std::fprintf(stderr, "\ncheckpoint: %lld evaluations, %lld updates -> %s\n",
                 state.at("evaluations").get<long long>(), counters_.updates, checkpoint_path().c_str());
}

void Trainer::restore_own_state(const json& state) {
  // Each process's own part: "ranks" (data-parallel checkpoints) or the top
  // level (one process; older checkpoints keep one graph's baselines as
  // "baseline_history" / "ema").
  std::vector<json> parts;
  if (state.contains("ranks")) {
    for (const json& r : state.at("ranks")) parts.push_back(r);
  } else {
    json top = state;
    if (!top.contains("baseline_histories")) {
      top["baseline_histories"] = json::array({state.at("baseline_history")});
      top["emas"] = json::array({state.at("ema")});
    }
    parts.push_back(std::move(top));
  }
  if (parts.empty()) throw ParseError("checkpoint " + checkpoint_path() + " holds no process states");
  const int processes = parallel_ != nullptr ? parallel_->size() : 1;
  const int rank = parallel_ != nullptr ? parallel_->rank() : 0;
  const json& own = parts[static_cast<size_t>(rank) % parts.size()];
  const bool same = static_cast<int>(parts.size()) == processes;
  // The same number of processes: each takes its own state back. Another: the
  // job's evaluations and episodes are split anew (the remainder to rank 0),
  // every process starts from the job's best, and samples with a seed of its
  // own drawn from the run's seed, its rank and the updates done.
  const json& from = same ? own : state;
  const auto share = [&](long long total) {
    return same ? total : total / processes + (rank == 0 ? total % processes : 0);
  };
  const long long evaluations = share(from.at("evaluations").get<long long>());
  counters_.episodes = share(from.at("episodes").get<long long>());
  env_->restore(evaluations, state.at("seconds").get<double>(),
                Placement(from.at("best").get<std::vector<int>>()), json_number(from, "best_penalised_us"),
                json_number(from, "best_step_us"), from.at("best_feasible").get<bool>());
  if (same) {
    rng_.set_state(std::stoull(own.at("rng").get<std::string>()));
  } else {
    rng_ = SampleRng(opt_.seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(rank) +
                     0xBF58476D1CE4E5B9ULL * static_cast<std::uint64_t>(counters_.updates + 1));
  }
  for (size_t g = 0; g < graphs_.size(); ++g) {
    step_baselines_[g].set_history(own.at("baseline_histories").at(g).get<std::vector<std::vector<double>>>());
    const json& ema = own.at("emas").at(g);
    ema_baselines_[g].set(ema.at(0).get<double>(), ema.at(1).get<bool>());
  }
  agent_->load_extra_state(own.at("extra"));
}

namespace {
// The cheap one-shot placers whose best "imitate=cheap" takes (seed_search's list).
const char* const kCheapPlacers[] = {"m-etf", "heft", "m-sct", "expert", "m-topo", "single", "round-robin"};

// Counts a search placer's evaluations (its last progress report).
class LastDone final : public ProgressObserver {
 public:
  void on_progress(const Progress& p) override { done = std::max(done, p.done); }
  long long done = 0;
};
}  // namespace

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
    for (const char* name : kCheapPlacers) {
      const Placement p = PlacerRegistry::instance().create(name)->place(graph_, cluster_, cheap);
      const double us = env_->evaluate(p);
      if (us < best) {
        best = us;
        target = p;
      }
    }
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
    LastDone counter;
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

TrainResult Trainer::run() {
  const auto run_t0 = Clock::now();
  if (opt_.budget_evals < 0 || opt_.budget_seconds < 0) throw ConfigError("budgets must not be negative");
  if (opt_.few_shot < 0) throw ConfigError("few_shot must not be negative");
  const bool zero_shot = opt_.budget_evals == 0 && opt_.budget_seconds == 0;
  if (zero_shot && opt_.init_policy.empty())
    throw ConfigError("training needs a budget: give --budget-evals N and/or --budget-seconds S (> 0), "
                      "or an initial policy to place zero-shot");
  if (graphs_.empty()) throw ConfigError("training needs at least one graph");
  for (const OpGraph* g : graphs_) AWARE_CHECK(g != nullptr, "null graph");
  debug_ = opt_.debug || std::getenv("AWARE_RL_DEBUG") != nullptr;
  if (opt_.threads < 1) throw ConfigError("--threads must be at least 1");
  if (opt_.algorithm.empty()) opt_.algorithm = "reinforce";
  if (opt_.algorithm != "reinforce" && opt_.algorithm != "ppo")
    throw ConfigError("algorithm must be reinforce or ppo, got '" + opt_.algorithm + "'");
  ppo_ = opt_.algorithm == "ppo";
  if (opt_.parallel != nullptr && opt_.parallel->size() > 1) {
    parallel_ = opt_.parallel;
    if (opt_.budget_seconds > 0)
      throw ConfigError("data-parallel training takes an evaluation budget, not --budget-seconds (the "
                        "processes must stop together)");
    if (opt_.budget_evals / parallel_->size() < 2)
      throw ConfigError(std::to_string(opt_.budget_evals) + " evaluations split over " +
                        std::to_string(parallel_->size()) + " processes leaves fewer than 2 each");
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
  if (!AgentRegistry::instance().has(name_)) AgentRegistry::instance().create(name_, {}, 1);  // throws listing names

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
    settings_from = "checkpoint " + checkpoint_path();
  } else if (!opt_.init_policy.empty()) {
    const json header = read_policy_header(opt_.init_policy);
    if (header.value("agent", "") != name_)
      throw ConfigError(opt_.init_policy + " holds a policy of agent '" + header.value("agent", "") +
                        "', not '" + name_ + "'");
    if (header.value("devices", -1) != cluster_.num_devices())
      throw ConfigError(opt_.init_policy + " holds a policy for " +
                        std::to_string(header.value("devices", -1)) + " devices; this cluster has " +
                        std::to_string(cluster_.num_devices()));
    config_ = merge_policy_config(header, config_, opt_.init_policy);
    settings_from = "policy " + opt_.init_policy;
  }

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
  defaults_ = agent_->defaults();
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
  step_baselines_.assign(graphs_.size(), PerStepMeanBaseline());
  ema_baselines_.assign(graphs_.size(), EmaBaseline(defaults_.ema_decay));
  adam_ = std::make_unique<torch::optim::Adam>(agent_->module().parameters(),
                                               torch::optim::AdamOptions(base_lr_));
  // The greedy episode after training is part of the budget: one evaluation is
  // kept back for it (single-graph runs with at least two evaluations), so a
  // learned agent and a search given N evaluations really use N each.
  // (Placeto with evaluate=step makes one per step: all of them are kept back.)
  const long long greedy_cost = std::max(1, agent_->greedy_evaluations());
  reserve_greedy_ = opt_.greedy_eval && !zero_shot && graphs_.size() == 1 && opt_.budget_evals > greedy_cost
                        ? greedy_cost
                        : 0;
  env_ = std::make_unique<PlacementEnv>(graph_, cluster_, evaluator_, defaults_.penalty,
                                        opt_.budget_evals - reserve_greedy_,
                                        opt_.budget_seconds, opt_.progress);
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
  const auto go_on = [&] {
    const bool mine = !env_->exhausted();
    if (parallel_ == nullptr) return mine;
    return parallel_->maximum(env_->cancelled() ? 2 : mine ? 1 : 0) == 1;
  };
  while (!zero_shot && go_on()) {
    // Several graphs: one graph per update, in turn.
    use_graph(static_cast<size_t>(counters_.updates % static_cast<long long>(graphs_.size())));
    std::vector<Episode> batch;
    const auto t0 = Clock::now();
    for (Episode& ep : agent_->run_episodes(*env_, rng_, episodes_per_update_)) {
      ++counters_.episodes;
      if (!ep.steps.empty()) batch.push_back(std::move(ep));
    }
    profile_.episodes_s += seconds_since(t0);
    if (batch.empty() && parallel_ == nullptr) break;
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
  profile_.total_s = seconds_since(run_t0);
  result.profile = profile_;
  result.imitation_target_us = imitation.imitation_target_us;
  result.imitation_steps = imitation.imitation_steps;
  result.imitation_probability = imitation.imitation_probability;
  result.imitation_accuracy = imitation.imitation_accuracy;
  result.imitation_evaluations = imitation.imitation_evaluations;
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

}  // namespace

TrainResult train_agent(const std::string& agent, const OpGraph& graph, const Cluster& cluster,
                        Evaluator& evaluator, const TrainOptions& options) {
  Trainer trainer(agent, {&graph}, cluster, evaluator, options);
  return trainer.run();
}

TrainResult train_agent_multi(const std::string& agent, const std::vector<const OpGraph*>& graphs,
                              const Cluster& cluster, Evaluator& evaluator,
                              const TrainOptions& options) {
  if (graphs.empty()) throw ConfigError("train_agent_multi needs at least one graph");
  Trainer trainer(agent, graphs, cluster, evaluator, options);
  return trainer.run();
}

}  // namespace aware::rl
