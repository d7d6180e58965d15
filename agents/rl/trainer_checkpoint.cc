// The trainer's checkpoints (trainer_impl.h): what each process writes and reads
// back, collective under data-parallel training. Includes LibTorch.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "agents/rl/trainer_impl.h"
#include "core/errors.h"

namespace aware::rl::detail {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int kCheckpointVersion = 1;

double json_number(const json& j, const char* key) {
  // JSON has no infinity: a best of +inf is stored as null.
  return j.at(key).is_null() ? std::numeric_limits<double>::infinity() : j.at(key).get<double>();
}

}  // namespace

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
  // The preset decides the trainer's settings: resuming under another would
  // continue a different run.
  if (!state.contains("preset") || !state.at("preset").is_string())
    throw ConfigError("checkpoint " + path + " was made before the agents' presets (2026-12-03), under "
                      "other training settings: resume it with that build, or start afresh");
  const std::string preset = state.at("preset").get<std::string>();
  if (preset != defaults_.preset)
    throw ConfigError("checkpoint " + path + " was made with --preset " + preset + ", this run has --preset " +
                      defaults_.preset);
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
  if (sampled_best_.size() > 0)
    own["sampled_best"] = {{"placement", sampled_best_.device_of_op}, {"penalised_us", sampled_best_us_}};
  if (self_imitation_updates_ > 0) own["self_imitation_updates"] = self_imitation_updates_;
  if (opt_.elite > 0) {
    json windows = json::array();
    for (const EliteWindow& w : elite_windows_) windows.push_back(w.state());
    own["elite_windows"] = windows;
  }
  if (elite_updates_ > 0) own["elite_updates"] = elite_updates_;
  if (opt_.entropy_floor > 0) {
    json floors = json::array();
    for (const EntropyFloor& f : entropy_floors_) floors.push_back(f.state());
    own["entropy_floors"] = floors;
  }
  if (guide_ != nullptr) own["guide"] = json::parse(guide_->state());
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
  state["preset"] = defaults_.preset;
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
  // The agent's per-graph state (reward scale, the state its features read)
  // belongs to the graph trained last. With one graph it goes on from there.
  // With several, every update of a run that never stopped begins on a newly
  // prepared graph, so the resumed run prepares its first one afresh instead.
  if (graphs_.size() == 1) {
    agent_->load_extra_state(own.at("extra"));
  } else {
    prepare_next_graph_ = true;
  }
  self_imitation_updates_ = own.value("self_imitation_updates", 0LL);
  // The elite step's windows, one a graph (this process's samples; with
  // another process count, those of the process whose state this one takes).
  // Checkpoints written before 2026-12-07 hold one graph's, as "elite_window".
  if (own.contains("elite_windows")) {
    const json& windows = own.at("elite_windows");
    if (windows.size() != elite_windows_.size())
      throw ConfigError("checkpoint holds elite windows for " + std::to_string(windows.size()) +
                        " graphs, this run trains on " + std::to_string(elite_windows_.size()));
    for (size_t g = 0; g < elite_windows_.size(); ++g) elite_windows_[g].restore(windows.at(g));
  } else if (own.contains("elite_window") && elite_windows_.size() == 1) {
    elite_windows_[0].restore(own.at("elite_window"));
  }
  elite_updates_ = own.value("elite_updates", 0LL);
  // The entropy floor's controllers (a checkpoint without them: the floor was
  // off in the run that wrote it, and starts afresh here). The same number of
  // processes: each its own; another: each graph's mean over the checkpoint's
  // processes (EntropyFloor::mean_state).
  if (opt_.entropy_floor > 0 && own.contains("entropy_floors")) {
    for (const json& part : parts) {
      const size_t n = part.contains("entropy_floors") ? part.at("entropy_floors").size() : 0;
      if (n != entropy_floors_.size())
        throw ConfigError("checkpoint holds entropy floors for " + std::to_string(n) +
                          " graphs, this run trains on " + std::to_string(entropy_floors_.size()));
    }
    for (size_t g = 0; g < entropy_floors_.size(); ++g) {
      if (same) {
        entropy_floors_[g].restore(own.at("entropy_floors").at(g));
      } else {
        std::vector<json> states;
        for (const json& part : parts) states.push_back(part.at("entropy_floors").at(g));
        entropy_floors_[g].restore(EntropyFloor::mean_state(states));
      }
    }
  }
  // The hybrid's refinements so far (its share is kept against the evaluations
  // restored; with another process count, this process's part of the old one's).
  if (guide_ != nullptr && own.contains("guide")) guide_->restore(own.at("guide").dump());
  if (own.contains("sampled_best")) {
    sampled_best_ = Placement(own.at("sampled_best").at("placement").get<std::vector<int>>());
    sampled_best_us_ = own.at("sampled_best").at("penalised_us").get<double>();
  }
}

}  // namespace aware::rl::detail
