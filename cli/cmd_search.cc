// aware search: train a learned agent (placeto, hierarchical, ...) on one graph
// and write the best placement it found, its learning curve, checkpoints and
// the trained policy. Torch-free: it talks to agents/rl through trainer.h.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "agents/rl/settings.h"
#include "agents/rl/thread_training.h"
#include "agents/rl/trainer.h"
#include "cli/cli_common.h"
#include "cli/cli_mpi.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/progress.h"
#include "core/search_exchange.h"
#include "datasets/families.h"
#include "datasets/load.h"

namespace aware::cli {
namespace {

#ifdef AWARE_HAVE_MPI
// Under mpirun: data-parallel training, one share of every update's episodes
// per rank; rank 0 alone reports and writes (the policy, the curve, progress).
// Returns the job, or null for a plain run.
MpiJob* train_across_ranks(rl::TrainOptions& t) {
  MpiJob* job = mpi_job();
  if (job == nullptr || job->size() < 2) return nullptr;
  t.parallel = &job->training();
  if (job->rank() != 0) {
    t.progress = nullptr;
    t.curve_csv.clear();
    t.save_policy.clear();
  }
  return job;
}
#endif

// What `search` and `pretrain` share: the evaluator, the agent, the budget and
// the trainer settings, with the same flags.
struct TrainArgs {
  std::string agent;
  std::string preset;  // "" = default
  std::string cluster = "preset:k40x4";
  EvaluatorChoice evaluator;  // --evaluator, --mode, --option
  std::vector<std::string> agent_options;
  long long budget_evals = 0;
  long long budget_episodes = 0;
  double budget_seconds = 0;
  long long seed = 1;
  int threads = 1;
  int workers = 1;
  std::string imitate;
  int imitate_steps = 400;
  double self_imitation = -1;  // < 0: the preset's
  double self_imitation_cap = 0.9;
  std::string self_imitation_from = "best";
  double elite = -1;        // < 0: the preset's
  int elite_window = -1;    // < 0: the preset's
  double elite_weight = 1;
  double guide_share = -1;     // < 0: the preset's (aware-guided)
  std::string guide_by;        // "": the preset's
  long long guide_evals = 0;   // 0: the preset's
  std::string guide_from;      // "": the preset's
  int few_shot = 0;
  int episodes_per_update = 0;  // 0: the preset's
  std::string standardize;  // "", on, off
  double lr = 0;
  double entropy = -1;
  double entropy_end = -1;
  double entropy_floor = -1;  // < 0: the preset's
  double entropy_floor_until = 0.5;
  double entropy_floor_step = 1.0;
  std::string init;
  std::string save_policy;
  std::string curve;
  std::string resume;
  double checkpoint_every_s = 30;
  long long checkpoint_every_updates = 0;
  bool json = false;
};

struct SearchArgs : TrainArgs {
  std::string graph;
  std::string algorithm;  // "": the preset's
  std::string out;
};

struct BenchAgentArgs : TrainArgs {
  std::string graph;
  std::string algorithm;  // "": the preset's
  std::string out = "bench-agent.json";
};

struct PretrainArgs : TrainArgs {
  std::string family;
  int count = 32;
};

rl::TrainOptions shared_train_options(const TrainArgs& a) {
  rl::TrainOptions t;
  t.budget_evals = a.budget_evals;
  t.budget_episodes = a.budget_episodes;
  t.budget_seconds = a.budget_seconds;
  t.seed = static_cast<std::uint64_t>(a.seed);
  t.preset = a.preset;
  t.threads = a.threads;
  t.learning_rate = a.lr;
  t.entropy_coef = a.entropy;
  t.entropy_end = a.entropy_end;
  t.entropy_floor = a.entropy_floor;
  t.entropy_floor_until = a.entropy_floor_until;
  t.entropy_floor_step = a.entropy_floor_step;
  t.init_policy = a.init;
  t.save_policy = a.save_policy;
  t.curve_csv = a.curve;
  t.agent_options = parse_kv(a.agent_options, "--agent-option");
  t.imitate = a.imitate;
  t.imitate_steps = a.imitate_steps;
  t.self_imitation = a.self_imitation;
  t.self_imitation_cap = a.self_imitation_cap;
  t.self_imitation_from = a.self_imitation_from;
  t.elite = a.elite;
  t.elite_window = a.elite_window;
  t.elite_weight = a.elite_weight;
  t.guide_share = a.guide_share;
  t.guide_evals = a.guide_evals;
  t.guide_by = a.guide_by;
  t.guide_from = a.guide_from;
  t.few_shot = a.few_shot;
  t.episodes_per_update = a.episodes_per_update;
  if (!a.standardize.empty()) t.standardize_advantages = a.standardize == "on" ? 1 : 0;
  t.resume_dir = a.resume;
  t.checkpoint_every_s = a.checkpoint_every_s;
  t.checkpoint_every_updates = a.checkpoint_every_updates;
  return t;
}

// What a one-graph training command sets up before it trains: the graph, the
// cluster, the evaluator, progress on stderr and the trainer's options.
struct TrainSetup {
  TrainSetup(const std::string& graph_spec, const TrainArgs& a, const std::string& algorithm)
      : graph(load_graph(graph_spec)),
        cluster(load_cluster(a.cluster)),
        evaluator(make_evaluator(a.evaluator)),
        options(shared_train_options(a)) {
    options.algorithm = algorithm;
    options.progress = &progress;
  }
  OpGraph graph;
  Cluster cluster;
  std::unique_ptr<Evaluator> evaluator;
  StderrProgress progress;
  rl::TrainOptions options;
};

// What `search`, `pretrain` and `bench agent` check before any work: counts that
// must not be negative, and a --resume that names a folder (or nothing yet).
void check_train_args(const TrainArgs& a) {
  if (a.checkpoint_every_s < 0) throw ConfigError("--checkpoint-every must not be negative (seconds)");
  if (a.checkpoint_every_updates < 0) throw ConfigError("--checkpoint-every-updates must not be negative");
  if (a.imitate_steps < 0) throw ConfigError("--imitate-steps must not be negative");
  if (a.few_shot < 0) throw ConfigError("--few-shot must not be negative");
  if (a.threads < 1) throw ConfigError("--threads must be at least 1");
  if (a.workers < 1) throw ConfigError("--workers must be at least 1");
  if (!a.resume.empty()) {
    std::error_code ec;
    if (std::filesystem::exists(a.resume, ec) && !std::filesystem::is_directory(a.resume, ec))
      throw ConfigError("--resume " + a.resume + ": is a file, not a folder (the checkpoint folder)");
    create_output_folder(a.resume, "--resume", a.resume);
  }
}

// The agents' options, named from their registered option lists (a new option is listed).
std::string agent_options_help() {
  std::string text = "Agent option KEY=VALUE (repeatable):";
  const char* sep = " ";
  for (const RegistryInfo& agent : rl::rl_agent_entries()) {
    text += sep + agent.name;
    for (size_t i = 0; i < agent.options.size(); ++i) text += (i == 0 ? " " : ", ") + agent.options[i].name;
    sep = "; ";
  }
  return text + " (aware list agents: their meanings)";
}

// The flags of TrainArgs (the budget's and the curve's help differ per command).
void add_train_options(CLI::App* c, TrainArgs& a,
                       const std::string& budget_help, const std::string& curve_help) {
  c->add_option("--agent", a.agent, registered_names_help("Agent", rl::rl_agent_names(), "agents"))->required();
  c->add_option("--preset", a.preset,
                "The agent's settings: default (ours) or paper (as its paper and code define it; "
                "docs/agents.md tabulates both)")
      ->check(CLI::IsMember({"default", "paper"}));
  c->add_option("--cluster", a.cluster, "preset:NAME or a cluster file")->capture_default_str();
  add_evaluator_options(c, a.evaluator);
  c->add_option("--agent-option", a.agent_options, agent_options_help());
  c->add_option("--budget-evals", a.budget_evals, budget_help);
  c->add_option("--budget-episodes", a.budget_episodes,
                "Complete placements sampled (episodes) allowed: the equal-episode footing (a Placeto "
                "episode evaluates once per node, an Aware one once)")
      ->check(whole_range(0, 1000000000000LL));
  c->add_option("--budget-seconds", a.budget_seconds, "Wall-clock seconds allowed");
  c->add_option("--seed", a.seed, "Seed (weights and sampling)")->capture_default_str();
  c->add_option("--threads", a.threads, "torch::set_num_threads")->capture_default_str();
  c->add_option("--workers", a.workers,
                "Data-parallel training on N threads (each plays its share of every update's "
                "episodes on its own evaluator clone; gradients averaged); an evaluation budget only")
      ->capture_default_str();
  c->add_option("--imitate", a.imitate,
                "Behaviour cloning first: the policy learns to reproduce this placement before "
                "reinforcement learning: cheap (the best cheap placer), PLACER[:N] (e.g. anneal-graph:500) "
                "or a placement file; its evaluations count against the budget (aware only)");
  c->add_option("--imitate-steps", a.imitate_steps, "At most this many imitation steps")->capture_default_str();
  c->add_option("--self-imitation", a.self_imitation,
                "Self-imitation: every update also clones the best placement found so far, with this "
                "weight (0: off, the papers'; aware only; default: the preset's, 0 but for aware-guided's 1)")
      ->check(number_range(0.0, 1e6));
  c->add_option("--self-imitation-cap", a.self_imitation_cap,
                "Self-imitation pulls only while the policy gives the best placement's actions a mean "
                "probability below this")
      ->check(number_range(1e-9, 1.0))
      ->capture_default_str();
  c->add_option("--self-imitation-from", a.self_imitation_from,
                "Self-imitation clones the best placement evaluated (best: the agent's reference state "
                "included) or the best the policy sampled (samples)")
      ->check(CLI::IsMember({"best", "samples"}))
      ->capture_default_str();
  c->add_option("--elite", a.elite,
                "Cross-entropy step (ours, after Post, NeurIPS 2018): every update also clones the fastest "
                "fraction of the last --elite-window sampled placements (0: off, the papers'; aware only; "
                "default: the preset's, 0.1 in aware's default, 0 in its paper preset and in aware-guided)")
      ->check(number_range(0.0, 1.0));
  c->add_option("--elite-window", a.elite_window,
                "The elite step's window: the last N sampled placements (default: the preset's, 64)")
      ->check(CLI::Range(1, 10000));
  c->add_option("--elite-weight", a.elite_weight,
                "The elite step's weight: w x the elite's mean summed -log p, beside the policy-gradient term's "
                "mean over the update's episodes of -advantage x log p")
      ->check(number_range(0.0, 1e6))
      ->capture_default_str();
  c->add_option("--guide-share", a.guide_share,
                "aware-guided: the local search's share of the wall-clock or of the evaluations (--guide-by; "
                "default: the preset's, 0.5)")
      ->check(number_range(0.0, 0.999));
  c->add_option("--guide-by", a.guide_by, "aware-guided: the share counts time (the preset's) or evaluations")
      ->check(CLI::IsMember({"time", "evaluations"}));
  c->add_option("--guide-evals", a.guide_evals,
                "aware-guided: evaluations of one refinement (default: the preset's, 500)")
      ->check(whole_range(3, 1000000000));
  c->add_option("--guide-from", a.guide_from,
                "aware-guided: a refinement starts from the best placement so far (best, the preset's) or "
                "from the best sample since the last refinement (proposal)")
      ->check(CLI::IsMember({"proposal", "best"}));
  c->add_option("--standardize-advantages", a.standardize,
                "on: each update's advantages zero-mean, unit-std (default: the agent's, off for all three)")
      ->check(CLI::IsMember({"on", "off"}));
  c->add_option("--episodes-per-update", a.episodes_per_update,
                "Episodes sampled per policy update (0: the preset's; docs/agents.md)")
      ->check(whole_range(0, 100000));
  c->add_option("--few-shot", a.few_shot,
                "Zero-shot (--init alone): also K sampled placements of the policy, the best of all "
                "(K more evaluations)")
      ->capture_default_str();
  c->add_option("--lr", a.lr, "Adam learning rate (0: the agent's default)")
      ->check(number_range(0.0, 1e3));
  c->add_option("--entropy", a.entropy, "Entropy bonus weight (< 0: the agent's default)");
  c->add_option("--entropy-end", a.entropy_end,
                "Entropy schedule: the bonus weight moves linearly from --entropy (or the agent's default) "
                "to this over the budget (< 0: constant; not the papers')");
  c->add_option("--entropy-floor", a.entropy_floor,
                "Entropy floor (ours; agents/rl/entropy_floor.h): the bonus weight rises by dual ascent to hold "
                "the entropy per decision at this fraction of the first update's (default: the preset's, 0 in every "
                "preset; 0: off)")
      ->check(number_range(0.0, 0.999));
  c->add_option("--entropy-floor-until", a.entropy_floor_until,
                "The entropy floor holds until this fraction of the budget is spent")
      ->check(number_range(0.0, 1.0))
      ->capture_default_str();
  c->add_option("--entropy-floor-step", a.entropy_floor_step, "The entropy floor's dual-ascent step")
      ->check(number_range(1e-9, 1e6))
      ->capture_default_str();
  c->add_option("--init", a.init, "Start from this policy file");
  c->add_option("--curve", a.curve, curve_help);
  c->add_option("--resume", a.resume,
                "Checkpoint directory: resume from it when it holds a checkpoint, checkpoint into it");
  c->add_option("--checkpoint-every", a.checkpoint_every_s, "Checkpoint every S seconds")
      ->capture_default_str();
  c->add_option("--checkpoint-every-updates", a.checkpoint_every_updates,
                "Also checkpoint every N policy updates (0: off)");
  c->add_flag("--json", a.json, "Print one JSON object");
}

// The elite step's and the entropy floor's blocks of a result, when they ran
// (the preset's or the user's), for `search` and `pretrain` alike. The floor's
// controller is one per process and per graph: the figures are process 0's
// (data-parallel) and one graph's (pre-training; the trainer's graph at the end).
void add_elite_and_floor(nlohmann::json& out, const rl::TrainResult& r, const TrainArgs& a, bool parallel,
                         size_t graphs) {
  if (r.elite_fraction > 0)
    out["elite"] = {{"fraction", r.elite_fraction},
                    {"window", r.elite_window},
                    {"weight", a.elite_weight},
                    {"updates", r.elite_updates},
                    {"probability", r.elite_probability}};
  if (r.entropy_floor > 0) {
    out["entropy_floor"] = {{"fraction", r.entropy_floor},
                            {"until", r.entropy_floor_until},
                            {"step", a.entropy_floor_step},
                            {"start_entropy", r.entropy_floor_start},
                            {"multiplier", r.entropy_floor_multiplier}};
    std::string of;
    if (parallel) of = "process 0";
    if (graphs > 1)
      of += std::string(of.empty() ? "" : ", ") + "one graph of " + std::to_string(graphs) + " (each has its own)";
    if (!of.empty()) out["entropy_floor"]["controller_of"] = of;
  }
}

void run_search(const SearchArgs& a) {
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  if (a.budget_evals < 0 || a.budget_seconds < 0) throw ConfigError("budgets must not be negative");
  if (a.budget_evals == 0 && a.budget_seconds == 0 && a.budget_episodes == 0 && a.init.empty())
    throw ConfigError("search needs a budget: --budget-evals N, --budget-episodes N and/or --budget-seconds S (> 0), "
                      "or --init POLICY alone to place zero-shot with its greedy policy");
  rl::rl_agent_description(a.agent);  // unknown agent -> ConfigError before any work
  check_train_args(a);
  // Unwritable outputs fail now, not after the training.
  prepare_output_path(a.out, "-o");
  prepare_output_path(a.curve, "--curve");
  prepare_output_path(a.save_policy, "--save-policy");
  const auto in = std::make_unique<TrainSetup>(a.graph, a, a.algorithm);
  const OpGraph& graph = in->graph;
  const Cluster& cluster = in->cluster;
  Evaluator* evaluator = in->evaluator.get();
  StderrProgress& progress = in->progress;
  rl::TrainOptions& t = in->options;
  int ranks = 1;
#ifdef AWARE_HAVE_MPI
  MpiJob* job = train_across_ranks(t);
  if (job != nullptr) ranks = job->size();
#endif
#ifdef AWARE_HAVE_MPI
  if (job != nullptr && a.workers > 1)
    throw ConfigError("--workers is for one process: under mpirun the ranks are the workers");
#endif
  rl::TrainResult r = rl::train_agent_workers(a.agent, graph, cluster, *evaluator, t, a.workers);
#ifdef AWARE_HAVE_MPI
  if (job != nullptr) {
    // The best any rank sampled (each sampled its own episodes), and the job's evaluations.
    ChainBest mine;
    mine.feasible = r.best_feasible;
    mine.step_us = r.best_step_us;
    mine.placement = r.best;
    const ChainMeeting met = job->exchange().meet(mine);
    r.best = met.best.placement;
    r.best_step_us = met.best.step_us;
    r.best_feasible = met.best.feasible;
    r.evaluations = static_cast<long long>(t.parallel->sum(static_cast<double>(r.evaluations)) + 0.5);
    r.episodes = static_cast<long long>(t.parallel->sum(static_cast<double>(r.episodes)) + 0.5);
    if (job->rank() != 0) return;
  }
#endif
  progress.finish();

  check_placement(graph, cluster, r.best, "agent '" + a.agent + "'");
  // Scored once more outside the budget, for the report (same evaluator).
  const StepResult result = evaluator->evaluate(graph, cluster, r.best);
  const LowerBound bound = lower_bound(graph, cluster);
  if (!a.out.empty()) write_placement_file(graph, cluster, r.best, a.out);
  if (a.json) {
    nlohmann::json out = step_result_json(result, cluster, bound);
    out["agent"] = a.agent;
    out["preset"] = a.preset.empty() ? "default" : a.preset;
    out["graph"] = graph.name();
    out["cluster"] = cluster.name();
    out["seed"] = a.seed;
    out["evaluations"] = r.evaluations;
    out["ranks"] = ranks;
    out["workers"] = a.workers;
    out["updates"] = r.updates;
    out["episodes"] = r.episodes;
    out["episodes_per_update"] = r.episodes_per_update * ranks;  // workers: already the job's
    out["policy_parameters"] = r.policy_parameters;
    out["train_seconds"] = r.seconds;
    out["resumed"] = r.resumed;
    out["zero_shot"] = a.budget_evals == 0 && a.budget_seconds == 0 && a.budget_episodes == 0;
    if (a.budget_episodes > 0) out["budget_episodes"] = a.budget_episodes;
    if (r.greedy.size() > 0) out["greedy_step_us"] = r.greedy_step_us;
    out["best_is_greedy"] = r.best_is_greedy;
    if (a.few_shot > 0) {
      out["few_shot"] = a.few_shot;
      out["few_shot_best_us"] = r.few_shot_best_us;
      out["few_shot_evaluations"] = r.few_shot_evaluations;
    }
    if (!a.imitate.empty())
      out["imitation"] = {{"target", a.imitate},
                          {"target_step_us", r.imitation_target_us},
                          {"evaluations", r.imitation_evaluations},
                          {"steps", r.imitation_steps},
                          {"probability", r.imitation_probability},
                          {"accuracy", r.imitation_accuracy}};
    if (r.guide_rounds > 0 || a.agent == "aware-guided")
      out["guide"] = {{"rounds", r.guide_rounds},
                      {"evaluations", r.guide_evaluations},
                      {"improvements", r.guide_improvements}};
    if (r.self_imitation_weight > 0)
      out["self_imitation"] = {{"weight", r.self_imitation_weight},
                               {"cap", a.self_imitation_cap},
                               {"from", a.self_imitation_from},
                               {"updates", r.self_imitation_updates},
                               {"probability", r.self_imitation_probability}};
    add_elite_and_floor(out, r, a, a.workers > 1 || ranks > 1, 1);
    out["cancelled"] = r.cancelled;
    if (!a.out.empty()) out["placement_file"] = a.out;
    if (!a.curve.empty()) out["curve_file"] = a.curve;
    if (!a.save_policy.empty()) out["policy_file"] = a.save_policy;
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::printf("agent          %s on %s (%d ops) / %s (%d devices)\n", a.agent.c_str(),
              graph.name().c_str(), graph.num_ops(), cluster.name().c_str(), cluster.num_devices());
  std::printf("trained        %lld evaluations, %lld updates, %lld episodes, %.2f s%s\n",
              r.evaluations, r.updates, r.episodes, r.seconds, r.resumed ? " (resumed)" : "");
  std::printf("evaluator      %s\n", evaluator->describe().c_str());
  if (r.greedy.size() > 0)
    std::printf("greedy policy  %s (argmax episode after training)%s\n", format_ms(r.greedy_step_us).c_str(),
                a.budget_evals == 0 && a.budget_seconds == 0 && a.budget_episodes == 0 ? " [zero-shot]"
                : r.best_is_greedy                            ? " [better than every sample: the result]"
                                                              : "");
  print_step_result(result, cluster, bound);
  if (!a.out.empty()) std::printf("placement      %s\n", a.out.c_str());
  if (!a.curve.empty()) std::printf("curve          %s\n", a.curve.c_str());
  if (!a.save_policy.empty()) std::printf("policy         %s\n", a.save_policy.c_str());
  if (!a.resume.empty()) std::printf("checkpoint     %s/checkpoint.pt\n", a.resume.c_str());
}

// One policy trained across the training split of a graph family.
void run_pretrain(const PretrainArgs& a) {
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  if (a.count < 1) throw ConfigError("--count must be at least 1");
  if (a.budget_evals < 0 || a.budget_seconds < 0) throw ConfigError("budgets must not be negative");
  if (a.budget_evals == 0 && a.budget_seconds == 0 && a.budget_episodes == 0)
    throw ConfigError("pretrain needs a budget: --budget-evals N, --budget-episodes N and/or --budget-seconds S (> 0)");
  rl::rl_agent_description(a.agent);
  check_train_args(a);
  prepare_output_path(a.curve, "--curve");
  prepare_output_path(a.save_policy, "--save-policy");
  const FamilySplit split = family_split(a.count);
  if (split.train.empty()) throw ConfigError("--count " + std::to_string(a.count) + " leaves no training graph");
  std::vector<OpGraph> graphs;
  for (std::uint64_t seed : split.train) graphs.push_back(build_family_graph(a.family, seed));
  std::vector<const OpGraph*> pointers;
  for (const OpGraph& g : graphs) pointers.push_back(&g);
  const Cluster cluster = load_cluster(a.cluster);
  std::unique_ptr<Evaluator> evaluator = make_evaluator(a.evaluator);
  rl::TrainOptions t = shared_train_options(a);
  StderrProgress progress;
  t.progress = &progress;
#ifdef AWARE_HAVE_MPI
  MpiJob* job = train_across_ranks(t);
#endif
  if (a.workers != 1) throw ConfigError("pretrain runs on one worker (--workers 1); use mpirun for more");
  rl::TrainResult r = rl::train_agent_multi(a.agent, pointers, cluster, *evaluator, t);
#ifdef AWARE_HAVE_MPI
  if (job != nullptr) {
    r.evaluations = static_cast<long long>(t.parallel->sum(static_cast<double>(r.evaluations)) + 0.5);
    r.greedy_evaluations = static_cast<long long>(t.parallel->sum(static_cast<double>(r.greedy_evaluations)) + 0.5);
    if (job->rank() != 0) return;
  }
#endif
  progress.finish();
  if (a.json) {
    nlohmann::json graph_names = nlohmann::json::array();
    for (const OpGraph& g : graphs) graph_names.push_back(g.name());
    nlohmann::json out = {{"agent", a.agent},
                          {"family", a.family},
                          {"graphs", graph_names},
                          {"cluster", cluster.name()},
                          {"evaluations", r.evaluations - r.greedy_evaluations},
                          {"greedy_evaluations", r.greedy_evaluations},
                          {"updates", r.updates},
                          {"episodes", r.episodes},
                          {"seconds", r.seconds},
                          {"policy_file", a.save_policy}};
    if (r.greedy.size() > 0) {
      out["greedy_graph"] = graphs.front().name();
      out["greedy_step_time_us"] = r.greedy_step_us;
    }
#ifdef AWARE_HAVE_MPI
    const bool parallel = job != nullptr && job->size() > 1;
#else
    const bool parallel = false;
#endif
    add_elite_and_floor(out, r, a, parallel, graphs.size());
    if (!a.curve.empty()) out["curve_file"] = a.curve;
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::printf("pretrained     %s on %zu %s graphs (training split of %d) / %s (%d devices)\n",
              a.agent.c_str(), graphs.size(), a.family.c_str(), a.count, cluster.name().c_str(),
              cluster.num_devices());
  // Pre-training's budget is the training's; the greedy episode on the first graph
  // (a report, not training) comes on top and is said so.
  std::printf("trained        %lld evaluations (+%lld for the greedy episode), %lld updates, %lld "
              "episodes, %.2f s\n",
              r.evaluations - r.greedy_evaluations, r.greedy_evaluations, r.updates, r.episodes,
              r.seconds);
  if (r.greedy.size() > 0)
    std::printf("greedy policy  %s on %s\n", format_ms(r.greedy_step_us).c_str(),
              graphs.front().name().c_str());
  std::printf("policy         %s\n", a.save_policy.c_str());
  if (!a.curve.empty()) std::printf("curve          %s\n", a.curve.c_str());
}

// aware bench agent: one training run, and where its time went.
void run_bench_agent(const BenchAgentArgs& a) {
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  if (a.budget_evals <= 0 && a.budget_episodes <= 0)
    throw ConfigError("bench agent needs --budget-evals N or --budget-episodes N (> 0)");
  rl::rl_agent_description(a.agent);
  check_train_args(a);
  prepare_output_path(a.out, "-o");
  const auto in = std::make_unique<TrainSetup>(a.graph, a, a.algorithm);
  const rl::TrainResult r = rl::train_agent_workers(a.agent, in->graph, in->cluster, *in->evaluator, in->options, a.workers);
  in->progress.finish();
  const OpGraph& graph = in->graph;
  const Cluster& cluster = in->cluster;
  const Evaluator* evaluator = in->evaluator.get();
  const rl::TrainProfile& p = r.profile;  // worker 0's
  const double other =
      std::max(0.0, p.total_s - p.prepare_s - p.episodes_s - p.update_s - p.greedy_s - p.imitate_s - p.guide_s);
  const double per_s = p.total_s > 0 ? static_cast<double>(r.evaluations) / p.total_s : 0;
  const std::vector<std::pair<std::string, double>> parts = {
      {"prepare", p.prepare_s},         {"features", p.features_s},
      {"forward", p.forward_s()},       {"simulate", p.simulate_s},
      {"backward", p.backward_s + p.episode_backward_s}, {"optimizer", std::max(0.0, p.update_s - p.backward_s)},
      {"greedy", p.greedy_s},           {"imitate", p.imitate_s},
      {"guide", p.guide_s},             {"other", other}};
  nlohmann::json split = nlohmann::json::object();
  for (const auto& [name, sec] : parts) split[name] = sec;
  nlohmann::json out = {{"agent", a.agent},
                        {"graph", graph.name()},
                        {"ops", graph.num_ops()},
                        {"cluster", cluster.name()},
                        {"evaluator", evaluator->describe()},
                        {"agent_options", a.agent_options},
                        {"preset", a.preset.empty() ? "default" : a.preset},
                        {"algorithm", a.algorithm.empty() ? rl::agent_settings(a.agent, a.preset).algorithm : a.algorithm},
                        {"seed", a.seed},
                        {"threads", a.threads},
                        {"workers", a.workers},
                        {"evaluations", r.evaluations},
                        {"updates", r.updates},
                        {"episodes", r.episodes},
                        {"policy_parameters", r.policy_parameters},
                        {"seconds", p.total_s},
                        {"evaluations_per_s", per_s},
                        {"best_step_us", r.best_step_us},
                        {"split_seconds", split},  // worker 0's
                        {"split_evaluations", std::llround(static_cast<double>(r.evaluations) / std::max(1, a.workers))}};
  write_text_file_atomic(a.out, out.dump(1) + "\n");
  if (a.json) {
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::printf("%s on %s (%d ops) / %s, %s\n", a.agent.c_str(), graph.name().c_str(), graph.num_ops(),
              cluster.name().c_str(), evaluator->describe().c_str());
  std::printf("%lld evaluations, %lld updates, %lld episodes in %.2f s: %.1f evaluations/s (best %s)\n",
              r.evaluations, r.updates, r.episodes, p.total_s, per_s, format_ms(r.best_step_us).c_str());
  // With workers, the split is worker 0's, per evaluation of its own share.
  const double own = static_cast<double>(r.evaluations) / std::max(1, a.workers);
  if (a.workers > 1) std::printf("worker 0 of %d:\n", a.workers);
  for (const auto& [name, sec] : parts)
    std::printf("  %-10s %8.3f s %5.1f%%  %8.2f ms per evaluation\n", name.c_str(), sec,
                p.total_s > 0 ? 100 * sec / p.total_s : 0, own > 0 ? 1e3 * sec / own : 0);
  std::printf("wrote %s\n", a.out.c_str());
}

}  // namespace

void add_search_commands(CLI::App& app) {
  auto args = std::make_shared<SearchArgs>();
  CLI::App* s = app.add_subcommand("search", "Train a learned placement agent on one graph");
  s->add_option("--graph", args->graph, graph_spec_help())->required();
  add_train_options(s, *args,
                    "Simulator evaluations allowed (the final greedy episode's included)",
                    "Write the learning curve CSV here");
  s->add_option("--algorithm", args->algorithm, "reinforce or ppo (default: the preset's)")
      ->check(CLI::IsMember({"reinforce", "ppo"}));
  s->add_option("--save-policy", args->save_policy, "Write the trained policy here");
  s->add_option("-o,--output", args->out, "Write the best placement JSON here");
  s->callback([args] { run_search(*args); });

  auto pa = std::make_shared<PretrainArgs>();
  CLI::App* p = app.add_subcommand(
      "pretrain", "Train one policy across a graph family's training split (for zero-shot placement)");
  p->add_option("--family", pa->family, "Graph family: cifar10, ptb or nmt")->required();
  p->add_option("--count", pa->count, "Family size; seeds 1..count, every fourth held out")
      ->capture_default_str();
  add_train_options(p, *pa, "Simulator evaluations, all graphs together",
                    "Learning curve CSV (with a graph column)");
  p->add_option("--save-policy", pa->save_policy, "Write the trained policy here")->required();
  p->callback([pa] { run_pretrain(*pa); });

  // Under `aware bench` (added before this), where the evaluators' benchmarks are.
  CLI::App* bench = app.get_subcommand("bench");
  auto ba = std::make_shared<BenchAgentArgs>();
  CLI::App* b = bench->add_subcommand(
      "agent", "One learned agent's training: evaluations per second, and where the time goes");
  b->add_option("--graph", ba->graph, graph_spec_help())->required();
  add_train_options(b, *ba, "Evaluations to train for (required)", "Write the learning curve CSV here");
  b->add_option("--algorithm", ba->algorithm, "reinforce or ppo (default: the preset's)")
      ->check(CLI::IsMember({"reinforce", "ppo"}));
  b->add_option("-o,--output", ba->out, "Write the figures here as JSON")->capture_default_str();
  b->callback([ba] { run_bench_agent(*ba); });
}

}  // namespace aware::cli
