// The Aware agent (Zeng et al. 2022, rebuilt from the abstract's three steps; see
// docs/aware.md): the policy acts on the graph coarsened by operator fusion
// (agents/fusion/fusion.h), embeds each fused node with message passing over the
// DAG plus a position-aware P-GNN layer over Bourgain anchor sets
// (agents/fusion/anchor_sets.h), and emits a device for every group at once.
// REINFORCE on the relative step time through the shared trainer. LibTorch
// translation unit.
//
// MDP (one-shot): one episode = one sample of a device per group = one evaluation
// of the expanded (full-graph) placement. The state the network reads is a fixed
// reference placement of the graph (all groups on device 0, or with state=best
// the best placement found so far) and its schedule (start times from the
// evaluator's trace). Independent samples: each episode's return is its own reward
// (ref - step) / ref, with ref the reference placement's step time.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

#include "agents/fusion/anchor_sets.h"
#include "agents/fusion/fusion.h"
#include "agents/rl/agent.h"
#include "agents/rl/aware_net.h"
#include "agents/rl/networks.h"
#include "core/cost_model.h"
#include "core/errors.h"

namespace aware::rl {

using nlohmann::json;

namespace {

// Per-node feature columns before the device one-hot:
// [compute time, output bytes, memory, start time, members (log), decided]; then
// the node's device one-hot (zeros until decided) and every device's load so far.
constexpr int kAwareBaseFeatures = 6;

using aware_net::AnchorTensors;
using aware_net::AwareGraphTensors;
using aware_net::AwareNet;
using aware_net::anchor_tensors;
using aware_net::fixed_count_anchor_sets;
using aware_net::graph_tensors;

struct AwareReplay {
  struct Chunk {
    torch::Tensor features;
    AnchorTensors anchors;
    torch::Tensor rows;             // leader indices decided in this chunk
    std::vector<int64_t> actions;  // one per row
    std::vector<int64_t> kept;     // around > 0: the incumbent's action per row (empty: none yet)
  };
  std::vector<Chunk> chunks;
};

// An episode that made no decision (the budget ran out first).
Episode empty_episode() {
  Episode e;
  e.sequential = false;
  return e;
}

bool on_off(const Options& config, const std::string& key) {
  const std::string v = option_string(config, key, "on");
  if (v == "on" || v == "1" || v == "true") return true;
  if (v == "off" || v == "0" || v == "false") return false;
  throw ConfigError("agent aware: " + key + " must be on or off, got '" + v + "'");
}

}  // namespace

class AwareAgent final : public Agent {
 public:
  AwareAgent(const Options& config, int num_devices) : devices_(num_devices) {
    const std::string who = "agent aware";
    check_options_against(config, aware_agent_options(), who);
    hidden_ = static_cast<int>(option_int(config, "hidden", 32, who));
    rounds_ = static_cast<int>(option_int(config, "rounds", 4, who));
    layers_ = static_cast<int>(option_int(config, "layers", 2, who));
    anchors_ = static_cast<int>(option_int(config, "anchors", 16, who));
    hops_ = static_cast<int>(option_int(config, "hops", 6, who));
    groups_ = static_cast<int>(option_int(config, "groups", 200, who));
    threshold_ = option_double(config, "threshold", 1.0, who);
    anchor_seed_ = static_cast<std::uint64_t>(option_int(config, "anchor_seed", 12345, who));
    position_ = on_off(config, "position");
    fusion_ = on_off(config, "fusion");
    batch_ = on_off(config, "batch");
    norm_ = on_off(config, "norm");
    state_ = option_string(config, "state", "start");
    decode_ = option_string(config, "decode", "argmax");
    if (decode_ != "argmax" && decode_ != "balanced")
      throw ConfigError(who + ": decode must be argmax or balanced, got '" + decode_ + "'");
    steps_ = static_cast<int>(option_int(config, "steps", 8, who));
    bound_ = option_double(config, "bound", 5.0, who);
    explore_ = option_double(config, "explore", 0.0, who);
    around_ = option_double(config, "around", 0.0, who);
    penalty_ = option_double(config, "logit_penalty", 0.0, who);
    scale_ = option_string(config, "scale", "relative");
    if (scale_ != "relative" && scale_ != "seconds")
      throw ConfigError(who + ": scale must be relative or seconds, got '" + scale_ + "'");
    if (steps_ < 1) throw ConfigError(who + ": steps >= 1 is required");
    if (hidden_ < 1 || rounds_ < 0 || layers_ < 1 || anchors_ < 1 || groups_ < 0 || threshold_ <= 0)
      throw ConfigError(who + ": hidden >= 1, rounds >= 0, layers >= 1, anchors >= 1, groups >= 0 "
                              "and threshold > 0 are required");
    if (state_ != "start" && state_ != "best")
      throw ConfigError(who + ": state must be start or best, got '" + state_ + "'");
    if (num_devices < 1) throw ConfigError(who + ": the cluster has no device");
    net_ = AwareNet(feature_dim(), hidden_, rounds_, layers_, anchors_, position_, devices_, norm_);
  }

  std::string kind() const override { return "aware"; }
  int feature_dim() const { return kAwareBaseFeatures + 2 * devices_; }

  torch::nn::Module& module() override { return *net_; }

  json header() const override {
    json config = {{"hidden", std::to_string(hidden_)},
                   {"rounds", std::to_string(rounds_)},
                   {"layers", std::to_string(layers_)},
                   {"anchors", std::to_string(anchors_)},
                   {"hops", std::to_string(hops_)},
                   {"position", position_ ? "on" : "off"},
                   {"bound", setting_number(bound_)}};
    // Only when on: a policy file without the key was trained without it.
    if (norm_) config["norm"] = "on";
    return policy_header(devices_, json::array({feature_dim(), anchors_}), config);
  }

  void prepare(const OpGraph& graph, const Cluster& cluster) override {
    FusionOptions fo;
    if (fusion_) {
      fo.target_size = groups_;
      fo.threshold = threshold_;
    } else {
      // Only colocation groups are contracted: the policy sees every other op.
      fo.chain_rule = false;
      fo.comm_rule = false;
      fo.target_size = 0;
    }
    fusion_result_ = fuse_by_comm_ratio(graph, cluster, fo);
    const OpGraph& coarse = fusion_result_.coarse;
    n_ = coarse.num_ops();
    // Static columns (Placeto's three and the fused group's size), each divided by its maximum.
    OpFeatureColumns columns = op_feature_columns(coarse, cluster);
    cost_ = std::move(columns.cost);
    out_size_ = std::move(columns.out_size);
    memory_ = std::move(columns.memory);
    members_.assign(n_, 0);
    for (int i = 0; i < n_; ++i)
      members_[i] = std::log1p(static_cast<double>(fusion_result_.ops_of_group[i].size()));
    normalise_by_max(members_);
    g_ = graph_tensors(coarse);
    stacked_.clear();
    best_sampled_.clear();  // around: the incumbent belongs to the graph
    incumbent_.clear();
    // Nodes sharing a colocation group (left split by fusion) follow their first node.
    leader_of_.assign(n_, 0);
    leaders_.clear();
    std::map<std::string, int> first;
    for (int i = 0; i < n_; ++i) {
      const std::string& group = coarse.op(i).colocation_group;
      auto it = group.empty() ? first.end() : first.find(group);
      if (it != first.end()) {
        leader_of_[i] = leader_of_[it->second];
      } else {
        leader_of_[i] = static_cast<int>(leaders_.size());
        leaders_.push_back(i);
        if (!group.empty()) first[group] = i;
      }
    }
    leader_idx_ = torch::tensor(std::vector<int64_t>(leaders_.begin(), leaders_.end()), torch::kInt64);
    leader_weight_.assign(leaders_.size(), 0.0);
    for (int i = 0; i < n_; ++i) leader_weight_[leader_of_[i]] += cost_[i];
    fixed_anchors_ = anchors_for(anchor_seed_ ^ static_cast<std::uint64_t>(n_));
    current_ = Placement(std::vector<int>(n_, 0));
    current_trace_.clear();
    current_us_ = std::numeric_limits<double>::infinity();
    reference_us_ = 0;
    have_reference_ = false;
  }

  AnchorTensors anchors_for(std::uint64_t seed) const {
    return anchor_tensors(fusion_result_.coarse, fixed_count_anchor_sets(n_, anchors_, seed),
                          anchors_, hops_);
  }

  // Features of every fused node: the schedule of the state (current_trace_), the
  // partial placement `placed` (-1: undecided) and the devices' load so far.
  torch::Tensor features(const std::vector<int>& placed) const {
    const int f = feature_dim();
    torch::Tensor x = torch::zeros({n_, f}, torch::kFloat);
    float* p = x.data_ptr<float>();
    double max_start = 0;
    const bool traced = static_cast<int>(current_trace_.ops.size()) == n_;
    if (traced)
      for (const OpSpan& s : current_trace_.ops) max_start = std::max(max_start, s.start_us);
    for (int i = 0; i < n_; ++i) {
      float* row = p + static_cast<int64_t>(i) * f;
      row[0] = static_cast<float>(cost_[i]);
      row[1] = static_cast<float>(out_size_[i]);
      row[2] = static_cast<float>(memory_[i]);
      row[3] = traced && max_start > 0 ? static_cast<float>(current_trace_.ops[i].start_us / max_start) : 0.0f;
      row[4] = static_cast<float>(members_[i]);
      if (placed[i] >= 0) {
        row[5] = 1.0f;
        row[kAwareBaseFeatures + placed[i]] = 1.0f;
      }
    }
    // Load: the summed compute of the groups on each device / the total.
    std::vector<double> load(devices_, 0);
    double total = 0;
    for (int i = 0; i < n_; ++i) {
      total += cost_[i];
      if (placed[i] >= 0) load[placed[i]] += cost_[i];
    }
    for (int d = 0; d < devices_; ++d)
      x.select(1, kAwareBaseFeatures + devices_ + d).fill_(total > 0 ? load[d] / total : 0.0);
    return x;
  }

  // Coarse start times from a fine trace: a fused node starts with its first member.
  Trace coarse_trace(const Trace& fine) const {
    Trace t;
    if (fine.ops.empty()) return t;
    t.ops.resize(n_);
    for (int g = 0; g < n_; ++g) {
      double start = std::numeric_limits<double>::infinity(), end = 0;
      for (int op : fusion_result_.ops_of_group[g])
        if (op < static_cast<int>(fine.ops.size())) {
          start = std::min(start, fine.ops[op].start_us);
          end = std::max(end, fine.ops[op].end_us);
        }
      t.ops[g] = {g, -1, std::isfinite(start) ? start : 0, end};
    }
    return t;
  }

  // Raw (unsquashed) logits of the leaders `rows` (indices into leaders_) [rows x D].
  torch::Tensor raw_logits(const torch::Tensor& x, const AnchorTensors& anchors, const torch::Tensor& rows) {
    return gather_rows(net_->forward(x, g_, anchors), leader_idx_.index_select(0, rows));
  }

  // bound=C > 0 (ours): logits C·tanh(x / C), within ±C, so no device's
  // probability falls below e^(-2C) times another's (Hierarchical bounds its
  // logits the same way, C·tanh(x/T)); near 0 the map is the identity.
  torch::Tensor squash(const torch::Tensor& l) const {
    return bound_ > 0 ? bound_ * torch::tanh(l / bound_) : l;
  }

  // logit_penalty=λ > 0 (ours): λ times the mean over each row's raw logits of
  // max(0, |x| - C)², C the bound (every |x| when unbounded), summed over the
  // decisions as the log-probabilities are; 0 when off. Without it the raw logits
  // grow far past the bound's knee (Adam keeps stepping on the tanh's vanishing
  // gradient), tie at ±C and stop all learning (about 600 were measured on GNMT
  // with eight K40s; docs/results/agents-fidelity.md). The hinge costs nothing
  // within ±C, so it does not pull the policy toward uniform there (a penalty on
  // every logit did, on GNMT with four K40s); past C its pull is linear in the
  // excess and never vanishes, so the raw logits settle just past the knee and a
  // converged group can still change its mind. The idea is the logit (z-)loss of
  // Chowdhery et al. 2022 (PaLM) and Zoph et al. 2022 (ST-MoE), which penalise
  // log Z; here each logit past the bound.
  torch::Tensor logit_penalty(const torch::Tensor& raw) const {
    if (penalty_ <= 0) return torch::zeros({});
    const torch::Tensor excess = bound_ > 0 ? torch::relu(raw.abs() - bound_) : raw;
    return penalty_ * excess.pow(2).mean(1).sum();
  }

  AnchorTensors episode_anchors(SampleRng& rng, bool greedy) const {
    if (greedy || !position_) return fixed_anchors_;
    // P-GNN re-samples the anchor sets every forward pass in training.
    const std::uint64_t seed = (static_cast<std::uint64_t>(rng.below(1 << 30)) << 30) ^
                               static_cast<std::uint64_t>(rng.below(1 << 30));
    return anchors_for(seed);
  }

  // The reference state (every group on device 0) and its schedule, evaluated
  // once per graph.
  void ensure_reference(PlacementEnv& env) {
    if (have_reference_) return;
    Trace fine;
    const double us = env.evaluate(expand_placement(fusion_result_, current_), &fine);
    current_trace_ = coarse_trace(fine);
    current_us_ = us;
    if (reference_us_ <= 0) reference_us_ = std::max(1.0, us);
    have_reference_ = true;
  }

  Episode run_episode(PlacementEnv& env, SampleRng& rng, bool greedy) override {
    if (env.exhausted()) return empty_episode();
    ensure_reference(env);
    if (env.exhausted()) return empty_episode();
    return play(env, rng, greedy);
  }

  // An update's episodes, each with its own sampling stream drawn from `rng`. With
  // batch=on (and the fixed reference state, state=start) they are played in
  // lockstep: every decision step runs one forward pass over the episodes' graphs
  // stacked, and the update one backward pass over them. The streams make the
  // episodes the same as those played one by one (batch=off), up to the float
  // rounding of the stacked matrix products.
  std::vector<Episode> run_episodes(PlacementEnv& env, SampleRng& rng, int count) override {
    std::vector<Episode> out;
    if (env.exhausted() || count < 1) return out;
    ensure_reference(env);
    if (env.exhausted()) {
      out.push_back(empty_episode());
      return out;
    }
    // around > 0: this update's episodes sample around the best placement of
    // the updates before it (not of this one, so that batched and one-by-one
    // play sample the same episodes).
    incumbent_ = best_sampled_;
    std::vector<SampleRng> streams;
    for (int e = 0; e < count; ++e) streams.emplace_back(rng.next());
    if (!batch_ || state_ == "best") {
      // state=best: an episode's better placement becomes the next one's state,
      // so the episodes cannot be played together.
      for (int e = 0; e < count && !env.exhausted(); ++e) out.push_back(play(env, streams[e], false));
      return out;
    }
    // One evaluation per episode: no more episodes than evaluations left.
    if (env.budget_evals() > 0)
      streams.resize(static_cast<size_t>(std::min<long long>(count, env.budget_evals() - env.evaluations())));
    return play_together(env, streams);
  }

  // Leaders decide in `steps` chunks in topological order (coarse ids are
  // topological); each chunk sees the devices and loads chosen before it, so
  // groups can coordinate (independent per-group samples cannot break the
  // symmetry between identical groups). One evaluation per episode.
  Episode play(PlacementEnv& env, SampleRng& rng, bool greedy) {
    Episode ep;
    ep.sequential = false;
    auto replay = std::make_shared<AwareReplay>();
    const int leaders = static_cast<int>(leaders_.size());
    const int chunk = std::max(1, (leaders + steps_ - 1) / steps_);
    std::vector<int> placed(n_, -1);
    BalancedDecode balanced;
    torch::Tensor log_prob = torch::zeros({}), entropy = torch::zeros({}), penalty = torch::zeros({});
    std::vector<torch::Tensor> per_decision;
    for (int begin = 0; begin < leaders; begin += chunk) {
      const int end = std::min(leaders, begin + chunk);
      const torch::Tensor rows = torch::arange(begin, end, torch::kInt64);
      torch::Tensor x;
      AnchorTensors anchors;
      {
        FeatureTimer timer(env);
        x = features(placed);
        anchors = episode_anchors(rng, greedy);
      }
      const torch::Tensor raw = raw_logits(x, anchors, rows);
      const torch::Tensor l = squash(raw);
      penalty = penalty + logit_penalty(raw);
      const std::vector<int64_t> kept = greedy ? std::vector<int64_t>() : kept_rows(begin, end);
      const std::vector<int64_t> actions = greedy && decode_ == "balanced"
                                               ? balanced_chunk(l, begin, end, balanced)
                                               : sample_rows(l, rng, greedy, explore_, kept, around_);
      const CategoricalTerms terms = categorical_terms(l, actions, explore_, kept, around_);
      log_prob = log_prob + terms.log_prob;
      entropy = entropy + terms.entropy;
      per_decision.push_back(terms.log_probs);
      place_chunk(placed, begin, end, actions);
      replay->chunks.push_back({x, anchors, rows, actions, kept});
    }
    return finish(env, placed, log_prob, entropy, penalty, torch::cat(per_decision), replay, !greedy);
  }

  // play() for several episodes at once, in lockstep; stops evaluating (and drops
  // the rest) when the env runs out, as one-by-one play would not have started them.
  std::vector<Episode> play_together(PlacementEnv& env, std::vector<SampleRng>& streams) {
    const int copies = static_cast<int>(streams.size());
    const int leaders = static_cast<int>(leaders_.size());
    const int chunk = std::max(1, (leaders + steps_ - 1) / steps_);
    std::vector<std::vector<int>> placed(copies, std::vector<int>(n_, -1));
    std::vector<std::shared_ptr<AwareReplay>> replays;
    std::vector<torch::Tensor> log_prob(copies, torch::zeros({})), entropy(copies, torch::zeros({})),
        penalty(copies, torch::zeros({}));
    std::vector<std::vector<torch::Tensor>> per_decision(copies);
    for (int e = 0; e < copies; ++e) replays.push_back(std::make_shared<AwareReplay>());
    const AwareGraphTensors& g = stacked_graph(copies);
    const torch::Tensor offsets = torch::arange(copies, torch::kInt64).mul_(n_).unsqueeze(1);
    for (int begin = 0; begin < leaders; begin += chunk) {
      const int end = std::min(leaders, begin + chunk);
      const torch::Tensor rows = torch::arange(begin, end, torch::kInt64);
      std::vector<torch::Tensor> xs, scores, ids;
      AnchorTensors all;
      {
        FeatureTimer timer(env);
        for (int e = 0; e < copies; ++e) {
          const torch::Tensor x = features(placed[e]);
          const AnchorTensors a = episode_anchors(streams[e], false);
          AWARE_CHECK(e == 0 || torch::equal(a.mask, all.mask), "aware: anchor masks differ between episodes");
          all.mask = a.mask;
          xs.push_back(x);
          scores.push_back(a.score);
          ids.push_back(a.anchor + static_cast<int64_t>(e) * n_);
          replays[e]->chunks.push_back({x, a, rows, {}, kept_rows(begin, end)});
        }
        all.score = torch::cat(scores);
        all.anchor = torch::cat(ids);
      }
      const torch::Tensor picked = (offsets + leader_idx_.index_select(0, rows).unsqueeze(0)).reshape({-1});
      const torch::Tensor raw = gather_rows(net_->forward(torch::cat(xs), g, all, copies), picked);
      const torch::Tensor l = squash(raw);
      const int64_t r = end - begin;
      for (int e = 0; e < copies; ++e) {
        const torch::Tensor mine = l.narrow(0, e * r, r);
        penalty[e] = penalty[e] + logit_penalty(raw.narrow(0, e * r, r));
        const std::vector<int64_t>& kept = replays[e]->chunks.back().kept;
        const std::vector<int64_t> actions = sample_rows(mine, streams[e], false, explore_, kept, around_);
        const CategoricalTerms terms = categorical_terms(mine, actions, explore_, kept, around_);
        log_prob[e] = log_prob[e] + terms.log_prob;
        entropy[e] = entropy[e] + terms.entropy;
        per_decision[e].push_back(terms.log_probs);
        place_chunk(placed[e], begin, end, actions);
        replays[e]->chunks.back().actions = actions;
      }
    }
    std::vector<Episode> out;
    for (int e = 0; e < copies && !env.exhausted(); ++e)
      out.push_back(
          finish(env, placed[e], log_prob[e], entropy[e], penalty[e], torch::cat(per_decision[e]), replays[e]));
    return out;
  }

  // Behaviour cloning: the target's coarse placement (each fused node on the
  // device most of its ops are on, ties to the lowest id), decided chunk by chunk
  // as play() decides, every chunk seeing the target's devices for the chunks
  // before it; all chunks in one stacked forward pass.
  ImitationTerms imitation_loss(const Placement& target, SampleRng& rng) override {
    AWARE_CHECK(target.size() == static_cast<int>(fusion_result_.group_of_op.size()),
                "aware: imitation target of another graph");
    std::vector<int> coarse(n_, 0), count(devices_, 0);
    for (int g = 0; g < n_; ++g) {
      std::fill(count.begin(), count.end(), 0);
      for (int op : fusion_result_.ops_of_group[g]) ++count[target[op]];
      coarse[g] = static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
    }
    const int leaders = static_cast<int>(leaders_.size());
    const int chunk = std::max(1, (leaders + steps_ - 1) / steps_);
    std::vector<torch::Tensor> xs, scores, ids, picked;
    std::vector<int64_t> actions;
    AnchorTensors all;
    int copies = 0;
    for (int begin = 0; begin < leaders; begin += chunk, ++copies) {
      const int end = std::min(leaders, begin + chunk);
      std::vector<int> placed(n_, -1);
      for (int i = 0; i < n_; ++i)
        if (leader_of_[i] < begin) placed[i] = coarse[leaders_[leader_of_[i]]];
      const AnchorTensors a = episode_anchors(rng, false);
      all.mask = a.mask;
      xs.push_back(features(placed));
      scores.push_back(a.score);
      ids.push_back(a.anchor + static_cast<int64_t>(copies) * n_);
      picked.push_back(leader_idx_.slice(0, begin, end) + static_cast<int64_t>(copies) * n_);
      for (int k = begin; k < end; ++k) actions.push_back(coarse[leaders_[k]]);
    }
    all.score = torch::cat(scores);
    all.anchor = torch::cat(ids);
    const torch::Tensor logits =
        squash(gather_rows(net_->forward(torch::cat(xs), stacked_graph(copies), all, copies), torch::cat(picked)));
    const torch::Tensor want = torch::tensor(actions, torch::kInt64);
    const torch::Tensor chosen = torch::log_softmax(logits, 1).gather(1, want.unsqueeze(1)).squeeze(1);
    ImitationTerms out;
    out.loss = -chosen.mean();
    out.mean_probability = chosen.detach().exp().mean().item<double>();
    out.accuracy = logits.detach().argmax(1).eq(want).to(torch::kFloat).mean().item<double>();
    out.decisions = static_cast<int>(actions.size());
    return out;
  }

  // decode=balanced (the greedy episode only): the chunk's leaders by load-aware
  // rounding of the policy's probabilities over the episode so far (balanced_rows),
  // each leader weighing the summed compute of the nodes that follow it.
  std::vector<int64_t> balanced_chunk(const torch::Tensor& logits, int begin, int end, BalancedDecode& state) const {
    const torch::Tensor probs = torch::softmax(logits.detach(), 1).contiguous().to(torch::kFloat);
    const float* p = probs.data_ptr<float>();
    const std::vector<float> flat(p, p + probs.numel());
    return balanced_rows(flat, devices_, std::vector<double>(leader_weight_.begin() + begin, leader_weight_.begin() + end),
                         state);
  }

  // around > 0: the incumbent's actions for the leaders begin..end-1 (empty
  // before the first update, or when off).
  std::vector<int64_t> kept_rows(int begin, int end) const {
    if (around_ <= 0 || incumbent_.empty()) return {};
    return std::vector<int64_t>(incumbent_.begin() + begin, incumbent_.begin() + end);
  }

  // Every node of the leaders begin..end-1 takes its leader's action.
  void place_chunk(std::vector<int>& placed, int begin, int end, const std::vector<int64_t>& actions) const {
    for (int i = 0; i < n_; ++i)
      if (leader_of_[i] >= begin && leader_of_[i] < end) placed[i] = static_cast<int>(actions[leader_of_[i] - begin]);
  }

  // Evaluates an episode's placement and makes its one step.
  // `sampled`: false for the greedy decode, which is not a sample to search around.
  Episode finish(PlacementEnv& env, const std::vector<int>& placed, const torch::Tensor& log_prob,
                 const torch::Tensor& entropy, const torch::Tensor& penalty,
                 const torch::Tensor& decision_log_probs, std::shared_ptr<AwareReplay> replay, bool sampled = true) {
    const Placement coarse{std::vector<int>(placed)};
    Trace fine;
    const double us = env.evaluate(expand_placement(fusion_result_, coarse), &fine);
    if (around_ > 0 && sampled && (best_sampled_.empty() || us < best_sampled_us_)) {
      best_sampled_.resize(leaders_.size());
      for (size_t k = 0; k < leaders_.size(); ++k) best_sampled_[k] = placed[leaders_[k]];
      best_sampled_us_ = us;
    }
    if (state_ == "best" && us < current_us_) {
      current_ = coarse;
      current_trace_ = coarse_trace(fine);
      current_us_ = us;
    }
    Episode ep;
    ep.sequential = false;
    Step s;
    s.log_prob = log_prob;
    s.entropy = entropy;
    s.decisions = static_cast<int>(leaders_.size());
    s.decision_log_probs = decision_log_probs;
    if (penalty_ > 0) s.penalty = penalty;
    // scale=relative (ours): the gain over the reference state, as a fraction of
    // its step; scale=seconds (Placeto's unit): the gain in seconds.
    s.reward = scale_ == "seconds" ? (reference_us_ - us) / 1e6 : (reference_us_ - us) / reference_us_;
    ep.steps.push_back(s);
    ep.final_step_us = us;
    ep.placement = env.last_placement();
    ep.replay = std::move(replay);
    return ep;
  }

  // The coarse DAG repeated `copies` times as disjoint copies (cached per count).
  const AwareGraphTensors& stacked_graph(int copies) {
    auto it = stacked_.find(copies);
    if (it == stacked_.end()) it = stacked_.emplace(copies, replicate_dag(g_, copies)).first;
    return it->second;
  }

  void replay(Episode& episode) override {
    auto* r = static_cast<AwareReplay*>(episode.replay.get());
    AWARE_CHECK(r != nullptr && episode.steps.size() == 1, "aware replay missing");
    torch::Tensor log_prob = torch::zeros({}), entropy = torch::zeros({}), penalty = torch::zeros({});
    std::vector<torch::Tensor> per_decision;
    for (const auto& c : r->chunks) {
      const torch::Tensor raw = raw_logits(c.features, c.anchors, c.rows);
      const CategoricalTerms t = categorical_terms(squash(raw), c.actions, explore_, c.kept, around_);
      penalty = penalty + logit_penalty(raw);
      log_prob = log_prob + t.log_prob;
      entropy = entropy + t.entropy;
      per_decision.push_back(t.log_probs);
    }
    episode.steps[0].log_prob = log_prob;
    episode.steps[0].entropy = entropy;
    episode.steps[0].decision_log_probs = torch::cat(per_decision);
    if (penalty_ > 0) episode.steps[0].penalty = penalty;
  }

  // Every episode's replay at once: chunk by chunk, one forward pass over the
  // episodes' graphs stacked as disjoint copies (as play_together samples them).
  void replay_all(std::vector<Episode>& episodes) override {
    const int copies = static_cast<int>(episodes.size());
    std::vector<AwareReplay*> r(copies);
    size_t chunks = 0;
    for (int e = 0; e < copies; ++e) {
      r[e] = static_cast<AwareReplay*>(episodes[e].replay.get());
      AWARE_CHECK(r[e] != nullptr && episodes[e].steps.size() == 1, "aware replay missing");
      if (e == 0) chunks = r[e]->chunks.size();
      if (r[e]->chunks.size() != chunks) return Agent::replay_all(episodes);  // not played together
    }
    if (copies < 2) return Agent::replay_all(episodes);
    const AwareGraphTensors& g = stacked_graph(copies);
    std::vector<torch::Tensor> log_prob(copies, torch::zeros({})), entropy(copies, torch::zeros({})),
        penalty(copies, torch::zeros({}));
    std::vector<std::vector<torch::Tensor>> per_decision(copies);
    for (size_t k = 0; k < chunks; ++k) {
      std::vector<torch::Tensor> xs, scores, ids, picked;
      AnchorTensors all;
      for (int e = 0; e < copies; ++e) {
        const AwareReplay::Chunk& c = r[e]->chunks[k];
        if (e > 0 && !torch::equal(c.anchors.mask, all.mask)) return Agent::replay_all(episodes);
        all.mask = c.anchors.mask;
        xs.push_back(c.features);
        scores.push_back(c.anchors.score);
        ids.push_back(c.anchors.anchor + static_cast<int64_t>(e) * n_);
        picked.push_back(leader_idx_.index_select(0, c.rows) + static_cast<int64_t>(e) * n_);
      }
      all.score = torch::cat(scores);
      all.anchor = torch::cat(ids);
      const torch::Tensor raw = gather_rows(net_->forward(torch::cat(xs), g, all, copies), torch::cat(picked));
      const torch::Tensor l = squash(raw);
      int64_t at = 0;
      for (int e = 0; e < copies; ++e) {
        const AwareReplay::Chunk& c = r[e]->chunks[k];
        const int64_t rows = c.rows.size(0);
        const CategoricalTerms t = categorical_terms(l.narrow(0, at, rows), c.actions, explore_, c.kept, around_);
        penalty[e] = penalty[e] + logit_penalty(raw.narrow(0, at, rows));
        at += rows;
        log_prob[e] = log_prob[e] + t.log_prob;
        entropy[e] = entropy[e] + t.entropy;
        per_decision[e].push_back(t.log_probs);
      }
    }
    for (int e = 0; e < copies; ++e) {
      episodes[e].steps[0].log_prob = log_prob[e];
      episodes[e].steps[0].entropy = entropy[e];
      episodes[e].steps[0].decision_log_probs = torch::cat(per_decision[e]);
      if (penalty_ > 0) episodes[e].steps[0].penalty = penalty[e];
    }
  }

  // The reward scale, and the state the features read (its placement, step and
  // start times), so that a resumed run neither evaluates the reference again
  // nor starts state=best over: it goes on as the run that never stopped.
  json extra_state() const override {
    json extra = {{"reward_scale_us", reference_us_}};
    if (!best_sampled_.empty()) extra["around"] = {{"actions", best_sampled_}, {"step_us", best_sampled_us_}};
    if (have_reference_) {
      std::vector<double> starts;
      for (const OpSpan& s : current_trace_.ops) starts.push_back(s.start_us);
      extra["state"] = {{"placement", current_.device_of_op}, {"step_us", current_us_}, {"starts", starts}};
    }
    return extra;
  }
  void load_extra_state(const json& state) override {
    reference_us_ = state.value("reward_scale_us", 0.0);
    if (state.contains("around")) {
      auto actions = state.at("around").at("actions").get<std::vector<int64_t>>();
      if (actions.size() != leaders_.size())
        throw std::invalid_argument("its Aware incumbent has " + std::to_string(actions.size()) +
                                    " decisions, the fused graph " + std::to_string(leaders_.size()));
      for (int64_t d : actions)
        if (d < 0 || d >= devices_) throw std::invalid_argument("its Aware incumbent names device " + std::to_string(d));
      best_sampled_ = std::move(actions);
      best_sampled_us_ = state.at("around").at("step_us").get<double>();
    }
    if (!state.contains("state")) return;
    const json& st = state.at("state");
    auto placement = st.at("placement").get<std::vector<int>>();
    const auto starts = st.at("starts").get<std::vector<double>>();
    if (static_cast<int>(placement.size()) != n_ || (!starts.empty() && static_cast<int>(starts.size()) != n_))
      // Not an aware::Error: the trainer names the checkpoint file around it.
      throw std::invalid_argument("its Aware state has " + std::to_string(placement.size()) +
                                  " groups, the fused graph " + std::to_string(n_));
    for (int d : placement)
      if (d < 0 || d >= devices_) throw std::invalid_argument("its Aware state names device " + std::to_string(d));
    current_ = Placement(std::move(placement));
    current_us_ = st.at("step_us").get<double>();
    current_trace_.clear();
    for (int g = 0; g < static_cast<int>(starts.size()); ++g) current_trace_.ops.push_back(OpSpan{g, current_[g], starts[g], 0});
    have_reference_ = true;
  }

  // For tests: logits of every fused node [n x D] under the given anchor sets.
  torch::Tensor node_logits(const AnchorSets& sets) {
    return net_->forward(features(std::vector<int>(n_, -1)), g_,
                         anchor_tensors(fusion_result_.coarse, sets, anchors_, hops_));
  }
  const FusionResult& fusion() const { return fusion_result_; }

 private:
  int devices_;
  int hidden_ = 32, rounds_ = 4, layers_ = 2, anchors_ = 16, hops_ = 6, groups_ = 200, steps_ = 8;
  double threshold_ = 1.0;
  double bound_ = 5.0, explore_ = 0.0, penalty_ = 0.0, around_ = 0.0;
  std::string scale_ = "relative";
  std::uint64_t anchor_seed_ = 12345;
  bool position_ = true, fusion_ = true, batch_ = true, norm_ = false;
  std::string state_;
  AwareNet net_{nullptr};
  FusionResult fusion_result_;
  int n_ = 0;
  std::vector<double> cost_, out_size_, memory_, members_;
  AwareGraphTensors g_;
  std::map<int, AwareGraphTensors> stacked_;  // g_ in disjoint copies, by count
  std::vector<int> leader_of_, leaders_;
  std::vector<double> leader_weight_;  // per leader: the summed compute (cost_) of its nodes
  std::string decode_ = "argmax";
  torch::Tensor leader_idx_;
  AnchorTensors fixed_anchors_;
  Placement current_;
  Trace current_trace_;
  double current_us_ = 0, reference_us_ = 0;
  bool have_reference_ = false;
  // around > 0: the best placement the policy has sampled (one action per
  // leader) and its step, and the one this update samples around.
  std::vector<int64_t> best_sampled_, incumbent_;
  double best_sampled_us_ = 0;
};

std::vector<OptionSpec> aware_agent_options() {
  using T = OptionSpec::Type;
  return {
      {"hidden", T::kInt, "32", "embedding width", 1, 4096},
      {"rounds", T::kInt, "4", "DAG message-passing rounds", 0, 64},
      {"layers", T::kInt, "2", "P-GNN layers", 1, 64},
      {"anchors", T::kInt, "16", "P-GNN anchor sets", 1, 1024},
      {"hops", T::kInt, "6", "P-GNN distance cut-off (hops)", 0, 1e6},
      {"position", T::kString, "on", "position-aware features: on or off"},
      {"fusion", T::kString, "on", "comm/compute-aware fusion: on or off"},
      {"groups", T::kInt, "200", "fusion target size", 0, 1e7},
      {"threshold", T::kDouble, "1", "fusion comm/compute threshold", 1e-12, 1e12},
      {"state", T::kString, "start", "reference state: start or best"},
      {"anchor_seed", T::kInt, "12345", "seed of the anchor sets", 0},
      {"steps", T::kInt, "8", "decision steps per episode", 1, 10000},
      {"batch", T::kString, "on", "play an update's episodes together through batched passes: on or off (the same episodes)"},
      {"norm", T::kString, "off",
       "graph normalisation of the structure embedding over the graph's nodes (ours): on or off"},
      {"bound", T::kDouble, "5", "logits squashed to C*tanh(x/C) (ours; 0: unbounded, the paper preset)", 0, 1e6},
      {"logit_penalty", T::kDouble, "0",
       "logit penalty: lambda * mean of max(0, |x| - C)^2 over each group's raw logits x, C the bound, "
       "added to the loss (ours; keeps the bound's tanh from saturating; 0: none)",
       0, 1e6},
      {"explore", T::kDouble, "0",
       "exploration floor: sample from (1-e) policy + e uniform (ours, an option; 0: none)", 0, 0.5},
      {"around", T::kDouble, "0",
       "sampling around the incumbent: each decision keeps the device of the best placement sampled in the "
       "updates before with this probability, else samples the policy, and is scored as that mixture (ours, "
       "an option, one graph only; 0: none)",
       0, 0.99},
      {"scale", T::kString, "relative", "reward unit: relative (gain / reference step) or seconds"},
      {"decode", T::kString, "argmax",
       "the greedy placement (zero-shot, and after training): argmax (the paper's: each group's most likely "
       "device) or balanced (load-aware: each device takes about the load the policy expects of it)"},
  };
}

std::unique_ptr<Agent> make_aware_agent(const Options& config, int num_devices) {
  return std::make_unique<AwareAgent>(config, num_devices);
}

// Test hooks (declared in tests/rl/aware_agent_test.cc): the prepared agent's
// per-node logits under given anchor sets, and its fused graph.
torch::Tensor aware_node_logits(Agent& agent, const AnchorSets& sets) {
  auto* a = dynamic_cast<AwareAgent*>(&agent);
  if (a == nullptr) throw ConfigError("not an aware agent");
  return a->node_logits(sets);
}
const FusionResult& aware_fusion_result(Agent& agent) {
  auto* a = dynamic_cast<AwareAgent*>(&agent);
  if (a == nullptr) throw ConfigError("not an aware agent");
  return a->fusion();
}

}  // namespace aware::rl
