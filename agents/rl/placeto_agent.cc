// The Placeto agent (Addanki et al., NeurIPS 2019), reimplemented from the facts
// in docs (shared/reference/placeto.md): a per-node MDP over the graph with a
// message-passing policy. LibTorch translation unit.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <stdexcept>

#include "agents/common/placer_common.h"
#include "agents/rl/agent.h"
#include "agents/rl/networks.h"
#include "agents/rl/step_gradients.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"

namespace aware::rl {

using nlohmann::json;

// ------------------------------------------------------------ agent

namespace {

// Decision steps per episode when chunk=0: ceil(units / kDefaultSteps) ops per
// step. Each step is one full-graph network pass, so an evaluation (evaluate=end:
// one per episode) costs kDefaultSteps passes. 10 rather than our earlier 50:
// on Inception-V3 (k40x4, 100 evaluations, seed 1) both reach the same step time
// (874 vs 876 ms best sampled, same greedy placement) at 33 s instead of 140 s
// and 0.8 instead of 2.9 GB (agents/rl/README.md).
constexpr int kDefaultSteps = 10;


struct PlacetoReplay {
  struct StepInput {
    torch::Tensor features;
    torch::Tensor idx;
    std::vector<int64_t> actions;
  };
  std::vector<StepInput> steps;
};

// Placeto pools every decided op over all the others (the graph's transitive
// closure, dense), so what it holds grows with the square of the graph. Measured
// with `aware search --agent placeto --graph random:10000:1 --cluster
// preset:hgx-h200 --budget-evals 40`: 12.8 GB at its peak (376 s). A graph whose
// estimate passes the limit is refused before anything is built.
constexpr double kBytesPerOpPair = 128;

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

class PlacetoAgent final : public Agent {
 public:
  PlacetoAgent(const Options& config, int num_devices) : devices_(num_devices) {
    check_options_against(config, placeto_agent_options(), "agent placeto");
    hidden_ = static_cast<int>(option_int(config, "hidden", 32, "agent placeto"));
    rounds_ = static_cast<int>(option_int(config, "rounds", 8, "agent placeto"));
    chunk_ = static_cast<int>(option_int(config, "chunk", 0, "agent placeto"));
    start_ = option_string(config, "start", "random");
    order_ = option_string(config, "order", "topo");
    reward_ = option_string(config, "reward", "linear");
    evaluate_ = option_string(config, "evaluate", "end");
    scale_ = option_string(config, "scale", "relative");
    features_ = option_string(config, "features", "ours");
    net_kind_ = option_string(config, "net", "ours");
    if (net_kind_ != "ours" && net_kind_ != "paper")
      throw ConfigError("agent placeto: net must be ours or paper, got '" + net_kind_ + "'");
    pool_ = option_string(config, "pool", "sum");
    if (pool_ != "sum" && pool_ != "mean")
      throw ConfigError("agent placeto: pool must be sum or mean, got '" + pool_ + "'");
    if (scale_ != "relative" && scale_ != "seconds")
      throw ConfigError("agent placeto: scale must be relative or seconds, got '" + scale_ + "'");
    if (features_ != "ours" && features_ != "paper")
      throw ConfigError("agent placeto: features must be ours or paper, got '" + features_ + "'");
    memory_limit_gb_ = option_double(config, "memory_limit_gb", 0, "agent placeto");
    if (!std::isfinite(memory_limit_gb_))
      throw ConfigError("agent placeto: memory_limit_gb must be a number (0: this machine's memory, < 0: no limit)");
    if (hidden_ < 1 || rounds_ < 0 || chunk_ < 0)
      throw ConfigError("agent placeto: hidden >= 1, rounds >= 0 and chunk >= 0 are required");
    if (start_ != "random" && start_ != "fixed" && start_ != "zero" && start_ != "best")
      throw ConfigError("agent placeto: start must be random, fixed, zero or best, got '" + start_ + "'");
    if (order_ != "topo" && order_ != "random")
      throw ConfigError("agent placeto: order must be topo or random, got '" + order_ + "'");
    if (reward_ != "linear" && reward_ != "log" && reward_ != "final")
      throw ConfigError("agent placeto: reward must be final, linear or log, got '" + reward_ + "'");
    if (evaluate_ != "step" && evaluate_ != "end")
      throw ConfigError("agent placeto: evaluate must be step or end, got '" + evaluate_ + "'");
    if (num_devices < 1) throw ConfigError("agent placeto: the cluster has no device");
    if (net_kind_ == "paper")
      net_ = std::make_shared<PlacetoPaperNetImpl>(feature_dim(), rounds_, devices_, pool_ == "mean");
    else
      net_ = std::make_shared<PlacetoNetImpl>(feature_dim(), hidden_, rounds_, devices_, features_ == "ours");
  }

  std::string kind() const override { return "placeto"; }
  // [6 base columns] + device one-hot (Placeto) + our deviation, 4 blocks of one
  // column per device (see README): the fraction of the op's already-decided
  // ancestors / descendants / parallel ops on each device, and each device's load
  // (decided ops' cost / all ops' cost). The blocks are filled for the op(s) being
  // decided only; other rows hold zeros there.
  // features=paper: the six base columns and the one-hot alone.
  int feature_dim() const { return kPlacetoBaseFeatures + (features_ == "ours" ? 5 : 1) * devices_; }

  torch::nn::Module& module() override { return *net_; }

  json header() const override {
    // net=paper's width is the feature width, so `hidden` is not part of it; a
    // policy of net=ours keeps the header it had before the option existed.
    if (net_kind_ == "paper")
      return policy_header(devices_, json::array({feature_dim()}),
                           {{"net", net_kind_},
                            {"pool", pool_},
                            {"rounds", std::to_string(rounds_)},
                            {"features", features_}});
    return policy_header(
        devices_, json::array({feature_dim()}),
        {{"hidden", std::to_string(hidden_)}, {"rounds", std::to_string(rounds_)}, {"features", features_}});
  }

  void prepare(const OpGraph& graph, const Cluster& cluster) override {
    const int n = graph.num_ops();
    check_memory(graph);
    n_ = n;
    reward_scale_us_ = 0;  // rewards are relative to this graph's first step time
    fixed_start_ = Placement();
    trace_ = Trace();
    units_ = placing::colocation_units(graph);
    // Static columns, each divided by its maximum.
    OpFeatureColumns columns = op_feature_columns(graph, cluster);
    cost_ = std::move(columns.cost);
    out_size_ = std::move(columns.out_size);
    memory_ = std::move(columns.memory);
    g_ = placeto_graph_tensors(graph);
    replicated_.clear();
    // The MDP visits one op per colocation unit (its first op in topological order).
    topo_rank_ = topological_rank(graph);
    leaders_.clear();
    for (const auto& ops : units_.ops_of_unit) {
      int leader = ops.front();
      for (int op : ops)
        if (topo_rank_[op] < topo_rank_[leader]) leader = op;
      leaders_.push_back(leader);
    }
  }

  const PlacetoGraphTensors& graph_tensors() const { return g_; }

  void check_memory(const OpGraph& graph) const {
    if (memory_limit_gb_ < 0) return;
    const double limit = memory_limit_gb_ > 0 ? memory_limit_gb_ * 1e9 : physical_memory_bytes();
    const double need = kBytesPerOpPair * graph.num_ops() * static_cast<double>(graph.num_ops());
    if (limit <= 0 || need <= limit) return;
    char text[512];
    std::snprintf(text, sizeof text,
                  "agent placeto: graph '%s' has %d ops; Placeto pools each decided op over every other "
                  "op, so training it takes about %.3g GB here (%.0f bytes per pair of ops, measured at "
                  "10,000 ops), over the limit of %.3g GB (%s; --agent-option memory_limit_gb=GB, or -1 "
                  "for none): use aware or hierarchical, which place groups of ops",
                  graph.name().c_str(), graph.num_ops(), need / 1e9, kBytesPerOpPair, limit / 1e9,
                  memory_limit_gb_ > 0 ? "memory_limit_gb" : "this machine's memory");
    throw ConfigError(text);
  }

  // Features of every op for a step deciding ops `current` (in `unit` terms).
  torch::Tensor features(const Placement& placement, const std::vector<char>& visited,
                         const std::vector<int>& current, const Trace& trace) const {
    const int f = feature_dim();
    torch::Tensor x = torch::zeros({n_, f}, torch::kFloat);
    float* p = x.data_ptr<float>();
    double ref_start = 0;
    for (int op : current) ref_start += trace.ops.empty() ? 0 : trace.ops[op].start_us;
    if (!current.empty()) ref_start /= current.size();
    std::vector<double> rel(n_, 0);
    if (static_cast<int>(trace.ops.size()) == n_)
      for (int i = 0; i < n_; ++i) rel[i] = trace.ops[i].start_us - ref_start;
    const std::vector<float> start_column = placeto_start_column(rel, features_ == "paper");
    for (int i = 0; i < n_; ++i) {
      float* row = p + static_cast<int64_t>(i) * f;
      row[0] = static_cast<float>(cost_[i]);
      row[1] = static_cast<float>(out_size_[i]);
      row[2] = visited[i] ? 1.0f : 0.0f;
      row[3] = 0.0f;
      row[4] = start_column[i];
      row[5] = static_cast<float>(memory_[i]);
      row[kPlacetoBaseFeatures + placement[i]] = 1.0f;
    }
    for (int op : current) p[static_cast<int64_t>(op) * f + 3] = 1.0f;
    if (features_ != "ours") return x;
    // Deviation: relational columns for the op(s) being decided.
    const int D = devices_;
    std::vector<double> load(D, 0.0);
    double total = 0;
    for (int i = 0; i < n_; ++i) {
      total += cost_[i];
      if (visited[i]) load[placement[i]] += cost_[i];
    }
    auto anc = g_.ancestors.accessor<bool, 2>();
    auto desc = g_.descendants.accessor<bool, 2>();
    std::vector<double> a(D), d(D), q(D);
    for (int op : current) {
      std::fill(a.begin(), a.end(), 0.0);
      std::fill(d.begin(), d.end(), 0.0);
      std::fill(q.begin(), q.end(), 0.0);
      double na = 0, nd = 0, nq = 0;
      for (int j = 0; j < n_; ++j) {
        if (j == op || !visited[j]) continue;
        if (anc[op][j]) {
          a[placement[j]] += 1;
          na += 1;
        } else if (desc[op][j]) {
          d[placement[j]] += 1;
          nd += 1;
        } else {
          q[placement[j]] += 1;
          nq += 1;
        }
      }
      float* row = p + static_cast<int64_t>(op) * f + kPlacetoBaseFeatures + D;
      for (int k = 0; k < D; ++k) {
        row[k] = static_cast<float>(na > 0 ? a[k] / na : 0.0);
        row[D + k] = static_cast<float>(nd > 0 ? d[k] / nd : 0.0);
        row[2 * D + k] = static_cast<float>(nq > 0 ? q[k] / nq : 0.0);
        row[3 * D + k] = static_cast<float>(total > 0 ? load[k] / total : 0.0);
      }
    }
    return x;
  }

  // reward=linear: the step's gain, relative to the graph's first step time
  // (scale=relative, ours) or in seconds (scale=seconds, Placeto's code:
  // progressive_placer.py, runtimes in seconds); reward=log: the gain in log time.
  double reward(double before_us, double after_us) const {
    if (reward_ == "log") return std::log(before_us) - std::log(after_us);
    return (before_us - after_us) / scale_us();
  }
  double scale_us() const { return scale_ == "seconds" ? 1e6 : reward_scale_us_; }

  Episode run_episode(PlacementEnv& env, SampleRng& rng, bool greedy) override {
    Episode ep;
    ep.sequential = true;
    auto replay = std::make_shared<PlacetoReplay>();
    const int units = static_cast<int>(leaders_.size());
    if (env.exhausted()) return ep;
    // Starting placement.
    Placement placement(std::vector<int>(n_, 0));
    if (start_ == "random") {
      // A new random start every episode (Placeto's --vary-init-state).
      for (int u = 0; u < units; ++u) {
        const int d = rng.below(devices_);
        for (int op : units_.ops_of_unit[u]) placement[op] = d;
      }
    } else if (start_ == "fixed") {
      // One random start for the whole run (Placeto's default,
      // progressive_placer.py:163,186-187), drawn from the run's stream at the
      // graph's first episode and kept (checkpointed with the agent's state).
      if (fixed_start_.size() != n_) {
        SampleRng draw(rng.next());
        fixed_start_ = Placement(std::vector<int>(n_, 0));
        for (int u = 0; u < units; ++u) {
          const int d = draw.below(devices_);
          for (int op : units_.ops_of_unit[u]) fixed_start_[op] = d;
        }
      }
      placement = fixed_start_;
    } else if (start_ == "best" && env.best_placement().size() == n_) {
      placement = env.best_placement();
    }
    std::vector<int> order(units);
    std::iota(order.begin(), order.end(), 0);
    if (order_ == "random") {
      for (int i = units - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    } else {
      std::sort(order.begin(), order.end(),
                [&](int a, int b) { return topo_rank_[leaders_[a]] < topo_rank_[leaders_[b]]; });
    }
    // evaluate=step (the paper): the start and every step are simulated, each step
    // rewarded with its improvement. evaluate=end (our default): one simulation per
    // episode, of its final placement (the start only on the graph's first
    // episode, for the reward scale); the start-time column then comes from the
    // last simulated trace. See README.
    const bool per_step = evaluate_ == "step";
    Trace& trace = trace_;
    double runtime = 0;
    if (per_step || reward_scale_us_ <= 0 || static_cast<int>(trace.ops.size()) != n_)
      runtime = env.evaluate(placement, &trace);
    if (reward_scale_us_ <= 0) reward_scale_us_ = std::max(1.0, runtime);
    const int chunk = chunk_ > 0 ? chunk_ : std::max(1, (units + kDefaultSteps - 1) / kDefaultSteps);
    std::vector<char> visited(n_, 0);
    // How the episode's log-probabilities are scored (see score_steps and
    // StepGradients): one decision per step in training takes each step's
    // gradient as it is played, as Placeto's own code does; greedy or no-grad
    // play keeps the sampling pass's values; otherwise one batched replay.
    const bool stepwise = !greedy && chunk == 1 && torch::GradMode::is_enabled();
    const bool values_only = greedy || !torch::GradMode::is_enabled();
    StepGradients grads;
    if (stepwise) grads.start(net_->parameters(), units);
    std::vector<float> value_lp, value_ent;
    std::vector<std::vector<float>> value_decisions;
    bool simulated_end = false;  // the last step's placement was simulated
    for (int begin = 0; begin < units && !env.exhausted(); begin += chunk) {
      const int end = std::min(units, begin + chunk);
      std::vector<int> current;
      std::vector<int64_t> idx;
      for (int k = begin; k < end; ++k) {
        current.push_back(leaders_[order[k]]);
        idx.push_back(leaders_[order[k]]);
      }
      torch::Tensor x;
      {
        FeatureTimer timer(env);
        x = features(placement, visited, current, trace);
      }
      torch::Tensor idx_t = torch::tensor(idx, torch::kInt64);
      std::vector<int64_t> actions;
      if (stepwise) {
        const torch::Tensor logits = net_->forward(x, g_, idx_t);
        actions = sample_rows(logits.detach(), rng, greedy);
        grads.add(env, logits, actions);
      } else {
        // Sampling needs no gradient: the log-probabilities are recomputed for the
        // whole episode in one batched pass at the end (score_steps), or taken
        // from this pass when no gradient is wanted.
        torch::NoGradGuard no_grad;
        const torch::Tensor logits = net_->forward(x, g_, idx_t);
        actions = sample_rows(logits, rng, greedy);
        if (values_only) {
          const torch::Tensor logp = torch::log_softmax(logits, 1);
          const torch::Tensor chosen =
              logp.gather(1, torch::tensor(actions, torch::kInt64).unsqueeze(1)).squeeze(1).contiguous();
          value_decisions.emplace_back(chosen.data_ptr<float>(), chosen.data_ptr<float>() + chosen.numel());
          value_lp.push_back(chosen.sum().item<float>());
          value_ent.push_back((-(logp.exp() * logp).sum()).item<float>());
        }
      }
      for (int k = begin; k < end; ++k) {
        for (int op : units_.ops_of_unit[order[k]]) {
          placement[op] = static_cast<int>(actions[k - begin]);
          visited[op] = 1;
        }
      }
      const bool last = end >= units;
      if (!per_step && !last) {
        Step s;
        s.decisions = end - begin;
        s.reward = 0.0;
        ep.steps.push_back(s);
        replay->steps.push_back({x, idx_t, actions});
        continue;
      }
      if (env.exhausted()) {  // the wall-clock budget ran out mid-episode: nothing to learn
        Episode cut;
        cut.sequential = true;
        return cut;
      }
      const double after = env.evaluate(placement, &trace);
      Step s;
      s.decisions = end - begin;
      // reward=final: every op is re-decided in an episode, so the placement it
      // ends with is the policy's alone; each step is credited with the final
      // (negated, scaled) step time. This is Placeto's reward-to-go minus the
      // state-dependent baseline rt_before(step), which removes the variance the
      // starting placement and earlier steps add (see README).
      s.reward = (reward_ == "final" || !per_step) ? 0.0 : reward(runtime, after);
      ep.steps.push_back(s);
      replay->steps.push_back({x, idx_t, actions});
      runtime = after;
      simulated_end = last;
    }
    if (!per_step && !simulated_end) {
      // evaluate=end and the budget ran out before the last step: its placement
      // was never simulated, so there is nothing to learn (as above).
      Episode cut;
      cut.sequential = true;
      return cut;
    }
    if ((reward_ == "final" || !per_step) && !ep.steps.empty())
      ep.steps.back().reward = -runtime / scale_us();
    ep.final_step_us = runtime;
    ep.replay = replay;
    if (stepwise) {
      grads.finish(ep);
    } else if (values_only) {
      for (size_t i = 0; i < ep.steps.size(); ++i) {
        ep.steps[i].log_prob = torch::tensor(value_lp[i]);
        ep.steps[i].entropy = torch::tensor(value_ent[i]);
        ep.steps[i].decision_log_probs = torch::tensor(value_decisions[i]);
      }
    } else {
      score_steps(ep);
    }
    return ep;
  }

  void replay(Episode& episode) override { score_steps(episode); }

  int greedy_evaluations() const override {
    // evaluate=step: the start, then every step; evaluate=end: the end (the start
    // was simulated in training).
    const int units = static_cast<int>(leaders_.size());
    const int chunk = chunk_ > 0 ? chunk_ : std::max(1, (units + kDefaultSteps - 1) / kDefaultSteps);
    if (evaluate_ == "step") return 1 + (units + chunk - 1) / chunk;
    return 1;
  }

  // Log-probabilities and entropies of an episode's recorded decisions, all steps
  // in one batched forward pass (with gradient when grad mode is on): the states'
  // graphs are stacked as disjoint copies, so the message passing, the pooling
  // and the head each run once per episode instead of once per step.
  void score_steps(Episode& episode) {
    auto* r = static_cast<PlacetoReplay*>(episode.replay.get());
    AWARE_CHECK(r != nullptr && r->steps.size() == episode.steps.size(), "placeto replay missing");
    const int S = static_cast<int>(r->steps.size());
    if (S == 0) return;
    std::vector<torch::Tensor> xs, idx;
    std::vector<int64_t> actions, step_of;
    for (int i = 0; i < S; ++i) {
      const auto& in = r->steps[i];
      xs.push_back(in.features);
      idx.push_back(in.idx);
      actions.insert(actions.end(), in.actions.begin(), in.actions.end());
      step_of.insert(step_of.end(), in.actions.size(), i);
    }
    auto it = replicated_.find(S);
    if (it == replicated_.end()) it = replicated_.emplace(S, replicate_dag(g_, S)).first;
    const torch::Tensor logits = net_->forward_batch(torch::cat(xs), g_, it->second, idx);
    const torch::Tensor logp = torch::log_softmax(logits, 1);
    const torch::Tensor chosen =
        logp.gather(1, torch::tensor(actions, torch::kInt64).unsqueeze(1)).squeeze(1);
    const torch::Tensor row_entropy = -(logp.exp() * logp).sum(1);
    const torch::Tensor step_idx = torch::tensor(step_of, torch::kInt64);
    const torch::Tensor lp = torch::zeros({S}).index_add(0, step_idx, chosen);
    const torch::Tensor ent = torch::zeros({S}).index_add(0, step_idx, row_entropy);
    int64_t at = 0;
    for (int i = 0; i < S; ++i) {
      episode.steps[i].log_prob = lp[i];
      episode.steps[i].entropy = ent[i];
      const int64_t k = static_cast<int64_t>(r->steps[i].actions.size());
      episode.steps[i].decision_log_probs = chosen.narrow(0, at, k);
      at += k;
    }
  }

  // The reward scale, and the start times of the last simulated trace (the
  // start-time column of evaluate=end's features): without them a resumed run
  // would simulate its start placement again, one evaluation more than the run
  // that never stopped.
  json extra_state() const override {
    json extra = {{"reward_scale_us", reward_scale_us_}};
    if (fixed_start_.size() == n_ && n_ > 0) extra["fixed_start"] = fixed_start_.device_of_op;
    if (static_cast<int>(trace_.ops.size()) == n_) {
      std::vector<double> starts;
      for (const OpSpan& s : trace_.ops) starts.push_back(s.start_us);
      extra["trace_starts"] = starts;
    }
    return extra;
  }
  void load_extra_state(const json& state) override {
    reward_scale_us_ = state.value("reward_scale_us", 0.0);
    if (state.contains("fixed_start")) {
      auto start = state.at("fixed_start").get<std::vector<int>>();
      if (static_cast<int>(start.size()) != n_)
        throw std::invalid_argument("its Placeto start placement has " + std::to_string(start.size()) +
                                    " ops, the graph " + std::to_string(n_));
      for (int d : start)
        if (d < 0 || d >= devices_) throw std::invalid_argument("its Placeto start names device " + std::to_string(d));
      fixed_start_ = Placement(std::move(start));
    }
    if (state.contains("trace_starts")) {
      const auto starts = state.at("trace_starts").get<std::vector<double>>();
      // Not an aware::Error: the trainer names the checkpoint file around it.
      if (static_cast<int>(starts.size()) != n_)
        throw std::invalid_argument("its Placeto trace has " + std::to_string(starts.size()) + " ops, the graph " +
                                    std::to_string(n_));
      trace_ = Trace();
      for (int op = 0; op < n_; ++op) trace_.ops.push_back(OpSpan{op, -1, starts[op], 0});
    }
  }

 private:
  int devices_;
  int hidden_ = 32, rounds_ = 8, chunk_ = 0;
  double memory_limit_gb_ = 0;
  std::string start_, order_, reward_, evaluate_, scale_ = "relative", features_ = "ours", net_kind_ = "ours",
              pool_ = "sum";
  Placement fixed_start_;  // start=fixed: the run's one start placement
  Trace trace_;
  std::shared_ptr<PlacetoPolicyImpl> net_;
  int n_ = 0;
  placing::Units units_;
  std::vector<int> leaders_;
  std::vector<int> topo_rank_;
  std::vector<double> cost_, out_size_, memory_;
  PlacetoGraphTensors g_;
  std::map<int, DagEdgeTensors> replicated_;  // g_'s edges stacked S times, by S
  double reward_scale_us_ = 0;
};

}  // namespace

std::vector<OptionSpec> placeto_agent_options() {
  using T = OptionSpec::Type;
  return {
      {"hidden", T::kInt, "32", "embedding width (net=ours; net=paper's is the feature width)", 1, 4096},
      {"rounds", T::kInt, "8", "message-passing rounds", 0, 64},
      {"chunk", T::kInt, "0", "ops decided per step; 0: ceil(units/10), at most 10 steps", 0, 1e9},
      {"start", T::kString, "random",
       "episode start: random (a new one each episode), fixed (one random start per run, the paper's), zero or best"},
      {"order", T::kString, "topo", "decision order: topo or random"},
      {"reward", T::kString, "linear", "per-step reward: linear, log or final"},
      {"evaluate", T::kString, "end", "simulate at the episode's end, or every step"},
      {"scale", T::kString, "relative", "reward unit: relative (to the graph's first step time) or seconds"},
      {"features", T::kString, "ours",
       "ours (decided-neighbour and load columns, raw-feature skip path) or paper (Placeto's columns alone)"},
      {"net", T::kString, "ours",
       "ours (one layer a round, mean aggregation, fixed width) or paper (Placeto's code: FNNs, sums, "
       "the feature width; docs/agents.md)"},
      {"pool", T::kString, "sum",
       "net=paper: pooling over ancestors / descendants / parallel ops as a sum (Placeto's code's default) or "
       "a mean (its --normalize-aggs)"},
      {"memory_limit_gb", T::kDouble, "0",
       "refuse graphs whose estimated training memory (128 bytes per pair of ops) passes this; "
       "0: this machine's memory, < 0: no limit"},
  };
}

std::unique_ptr<Agent> make_placeto_agent(const Options& config, int num_devices) {
  return std::make_unique<PlacetoAgent>(config, num_devices);
}

}  // namespace aware::rl
