// The Hierarchical planner (Mirhoseini et al., ICLR 2018), reimplemented from the
// facts in shared/reference/hierarchical-and-aware.md: a feed-forward grouper
// and a sequence-to-sequence placer trained jointly with REINFORCE on
// -sqrt(step time). LibTorch translation unit.
#include <algorithm>
#include <cmath>

#include "agents/common/placer_common.h"
#include "agents/rl/agent.h"
#include "agents/rl/networks.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"

namespace aware::rl {

using nlohmann::json;

// ------------------------------------------------------------ networks

GrouperImpl::GrouperImpl(int feature_dim, int hidden, int groups, bool linear) : linear_(linear) {
  l1_ = register_module("l1", torch::nn::Linear(torch::nn::LinearOptions(feature_dim, hidden).bias(!linear)));
  l2_ = register_module("l2", torch::nn::Linear(torch::nn::LinearOptions(hidden, groups).bias(!linear)));
  if (linear) {
    torch::NoGradGuard no_grad;
    torch::nn::init::xavier_uniform_(l1_->weight);
    torch::nn::init::xavier_uniform_(l2_->weight);
  }
}

torch::Tensor GrouperImpl::forward(const torch::Tensor& op_features) {
  return linear_ ? l2_(l1_(op_features)) : l2_(torch::relu(l1_(op_features)));
}

GroupPlacerImpl::GroupPlacerImpl(int embedding_dim, int hidden, int num_devices,
                                 double tanh_constant, double temperature)
    : hidden_(hidden), devices_(num_devices), tanh_constant_(tanh_constant), temperature_(temperature) {
  encoder_ = register_module(
      "encoder", torch::nn::LSTM(torch::nn::LSTMOptions(embedding_dim, hidden).bidirectional(true).batch_first(true)));
  device_embedding_ = register_module("device_embedding", torch::nn::Embedding(num_devices + 1, hidden));
  decoder_ = register_module("decoder", torch::nn::LSTMCell(hidden + 2 * hidden, hidden));
  attn_enc_ = register_module("attn_enc", torch::nn::Linear(2 * hidden, hidden));
  attn_dec_ = register_module("attn_dec", torch::nn::Linear(hidden, hidden));
  attn_v_ = register_module("attn_v", torch::nn::Linear(hidden, 1));
  out_ = register_module("out", torch::nn::Linear(3 * hidden, num_devices));
}

torch::Tensor logit_noise(const torch::Tensor& logits, double factor, SampleRng& rng, bool per_row) {
  torch::Tensor eps = torch::empty(logits.sizes(), torch::kFloat);
  float* e = eps.data_ptr<float>();
  for (int64_t k = 0; k < eps.numel(); ++k) {
    // Box-Muller from our own stream (checkpointable; never torch's generator).
    const double u1 = std::max(1e-300, rng.unit()), u2 = rng.unit();
    e[k] = static_cast<float>(std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2));
  }
  // The scale is a function of the logits, as the controller's is (its std is a
  // tensor, norm(logits) / sqrt(size)), so the loss's gradient passes through it
  // too; 1e-12 keeps the square root's gradient finite at all-zero logits.
  const torch::Tensor square = logits.pow(2);
  const torch::Tensor rms = (per_row ? square.mean(-1, true) : square.mean()).add(1e-12).sqrt();
  return eps.to(logits.dtype()) * (factor * rms);
}

namespace {

// One decoder step's end, the same for both placers: C·tanh(x / T) (Mirhoseini et
// al. 2018, and hierarchical_controller.py: the temperature inside the squash, so
// the logits stay within ±C), the logit noise while sampling (:908-918: after the
// squash, std = noise × each sample's root mean square), then each row's device
// (forced, sampled or greedy), written into out.actions[.][t]. Returns the logits
// the devices were drawn from; `chosen` gets the devices.
torch::Tensor finish_step(torch::Tensor raw, double tanh_constant, double temperature, SampleRng* rng,
                          bool greedy, const std::vector<std::vector<int64_t>>* forced, double noise,
                          double explore, int64_t t, DecodeResult& out, std::vector<int64_t>& chosen) {
  torch::Tensor logits = tanh_constant * torch::tanh(raw / temperature);
  if (noise > 0 && rng != nullptr && forced == nullptr && !greedy)
    logits = logits + logit_noise(logits, noise, *rng, /*per_row=*/true);
  const int64_t batch = logits.size(0);
  chosen.assign(batch, 0);
  if (forced != nullptr) {
    for (int64_t b = 0; b < batch; ++b) chosen[b] = (*forced)[b][t];
  } else {
    AWARE_CHECK(rng != nullptr || greedy, "decode needs an rng to sample");
    SampleRng dummy(0);
    chosen = sample_rows(logits, rng != nullptr ? *rng : dummy, greedy, explore);
  }
  for (int64_t b = 0; b < batch; ++b) out.actions[b][t] = chosen[b];
  return logits;
}

}  // namespace

DecodeResult GroupPlacerImpl::decode(const torch::Tensor& embeddings, SampleRng* rng, bool greedy,
                                     const std::vector<std::vector<int64_t>>* forced, double noise,
                                     double explore) {
  const int64_t batch = embeddings.size(0);
  const int64_t groups = embeddings.size(1);
  const auto encoded = encoder_->forward(embeddings);
  const torch::Tensor enc = std::get<0>(encoded);           // [B x G x 2H]
  const torch::Tensor enc_proj = attn_enc_(enc);            // [B x G x H]
  torch::Tensor h = torch::zeros({batch, hidden_});
  torch::Tensor c = torch::zeros({batch, hidden_});
  torch::Tensor prev = torch::full({batch}, devices_, torch::kInt64);
  DecodeResult out;
  out.actions.assign(batch, std::vector<int64_t>(groups, 0));
  std::vector<torch::Tensor> step_logits;
  for (int64_t t = 0; t < groups; ++t) {
    const torch::Tensor input = torch::cat({device_embedding_(prev), enc.select(1, t)}, 1);
    std::tie(h, c) = decoder_->forward(input, std::make_tuple(h, c));
    const torch::Tensor score = attn_v_(torch::tanh(enc_proj + attn_dec_(h).unsqueeze(1))).squeeze(2);
    const torch::Tensor weights = torch::softmax(score, 1);
    const torch::Tensor context = (weights.unsqueeze(2) * enc).sum(1);
    std::vector<int64_t> chosen;
    step_logits.push_back(finish_step(out_(torch::cat({h, context}, 1)), tanh_constant_, temperature_, rng, greedy,
                                      forced, noise, explore, t, out, chosen));
    prev = torch::tensor(chosen, torch::kInt64);
  }
  out.logits = torch::stack(step_logits, 1);
  return out;
}

GroupPlacerPaperImpl::GroupPlacerPaperImpl(int embedding_dim, int hidden, int num_devices, double tanh_constant,
                                           double temperature)
    : hidden_(hidden), devices_(num_devices), tanh_constant_(tanh_constant), temperature_(temperature) {
  AWARE_CHECK(hidden >= 2 && hidden % 2 == 0 && num_devices >= 1 && embedding_dim >= 1,
              "the controller's placer needs an even width (H/2 units each way in its encoder)");
  const int64_t H = hidden, half = hidden / 2;
  enc_fw_ = glorot("encoder_forward", embedding_dim + half, 4 * half);
  enc_bw_ = glorot("encoder_backward", embedding_dim + half, 4 * half);
  enc_forget_ = register_parameter("encoder_forget_bias", torch::ones({1}));
  dec_w_ = glorot("decoder", 2 * H, 4 * H);
  dec_forget_ = register_parameter("decoder_forget_bias", torch::ones({1}));
  device_embedding_ = glorot("device_embeddings", num_devices, H);
  go_ = glorot("device_go_embedding", 1, H);
  attn_w1_ = glorot("attn_w_1", H, H);
  attn_w2_ = glorot("attn_w_2", H, H);
  attn_v_ = glorot("attn_v", H, 1);
  out_ = glorot("out", 2 * H, num_devices);
}

torch::Tensor GroupPlacerPaperImpl::glorot(const std::string& name, int64_t rows, int64_t cols) {
  const double limit = std::sqrt(6.0 / static_cast<double>(rows + cols));
  return register_parameter(name, torch::rand({rows, cols}) * (2 * limit) - limit);
}

std::pair<torch::Tensor, torch::Tensor> GroupPlacerPaperImpl::cell(const torch::Tensor& x, const torch::Tensor& c,
                                                                   const torch::Tensor& h, const torch::Tensor& w,
                                                                   const torch::Tensor& forget_bias) {
  // The controller's lstm(): [x, h] · W split as input, forget, output, candidate.
  const auto gates = torch::cat({x, h}, 1).matmul(w).chunk(4, 1);
  const torch::Tensor i = torch::sigmoid(gates[0]), f = torch::sigmoid(gates[1] + forget_bias);
  const torch::Tensor o = torch::sigmoid(gates[2]), g = torch::tanh(gates[3]);
  const torch::Tensor next_c = i * g + f * c;
  return {next_c, o * torch::tanh(next_c)};
}

DecodeResult GroupPlacerPaperImpl::decode(const torch::Tensor& embeddings, SampleRng* rng, bool greedy,
                                          const std::vector<std::vector<int64_t>>* forced, double noise,
                                          double explore) {
  const int64_t batch = embeddings.size(0), groups = embeddings.size(1), half = hidden_ / 2;
  // Encoder. As in the code's encode(), step i pairs the forward state after group
  // i with the backward state after groups G-1 ... G-1-i (not the backward state
  // of group i): the memory row i is [forward_i, backward after i + 1 groups].
  torch::Tensor cf = torch::zeros({batch, half}), hf = torch::zeros({batch, half});
  torch::Tensor cb = torch::zeros({batch, half}), hb = torch::zeros({batch, half});
  std::vector<torch::Tensor> rows;
  for (int64_t t = 0; t < groups; ++t) {
    std::tie(cf, hf) = cell(embeddings.select(1, t), cf, hf, enc_fw_, enc_forget_);
    std::tie(cb, hb) = cell(embeddings.select(1, groups - 1 - t), cb, hb, enc_bw_, enc_forget_);
    rows.push_back(torch::cat({hf, hb}, 1));
  }
  const torch::Tensor memory = torch::stack(rows, 1).matmul(attn_w1_);  // [B x G x H]
  torch::Tensor c = torch::cat({cf, cb}, 1), h = torch::cat({hf, hb}, 1);
  DecodeResult out;
  out.actions.assign(batch, std::vector<int64_t>(groups, 0));
  std::vector<torch::Tensor> step_logits;
  torch::Tensor prev;
  for (int64_t t = 0; t < groups; ++t) {
    const torch::Tensor signal = t == 0 ? go_.expand({batch, hidden_}) : device_embedding_.index_select(0, prev);
    std::tie(c, h) = cell(signal, c, h, dec_w_, dec_forget_);
    const torch::Tensor query = torch::tanh(h.matmul(attn_w2_).unsqueeze(1) + memory);  // [B x G x H]
    const torch::Tensor weights = torch::softmax(query.matmul(attn_v_).squeeze(2), 1);    // [B x G]
    const torch::Tensor context = (memory * weights.unsqueeze(2)).sum(1);                // [B x H]
    std::vector<int64_t> chosen;
    step_logits.push_back(finish_step(torch::cat({h, context}, 1).matmul(out_), tanh_constant_, temperature_, rng,
                                      greedy, forced, noise, explore, t, out, chosen));
    prev = torch::tensor(chosen, torch::kInt64);
  }
  out.logits = torch::stack(step_logits, 1);
  return out;
}

// ------------------------------------------------------------ agent

namespace {


std::uint32_t fnv1a(const std::string& text) {
  std::uint32_t h = 2166136261u;
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 16777619u;
  }
  return h;
}

// Logit added to each op's block group (8 groups: p ~ 0.95 for it at initialisation).
constexpr double kGroupPrior = 5.0;

struct HierarchicalReplay {
  bool noisy = false;  // sampled with logit noise: its log-probabilities cannot be recomputed
  std::vector<int64_t> groups_of_op;
  torch::Tensor embeddings;  // [B x G x E]
  std::vector<std::vector<int64_t>> devices;
};

class HierarchicalAgent final : public Agent {
 public:
  HierarchicalAgent(const Options& config, int num_devices) : devices_(num_devices) {
    const std::string owner = "agent hierarchical";
    check_options_against(config, hierarchical_agent_options(), owner);
    if (num_devices < 1) throw ConfigError("agent hierarchical: the cluster has no device");
    groups_ = static_cast<int>(option_int(config, "groups", std::min(256, 20 * num_devices), owner));
    hidden_ = static_cast<int>(option_int(config, "hidden", 64, owner));
    grouper_hidden_ = static_cast<int>(option_int(config, "grouper_hidden", 64, owner));
    samples_ = static_cast<int>(option_int(config, "samples", 8, owner));
    tanh_ = option_double(config, "tanh", 5.0, owner);
    temperature_ = option_double(config, "temperature", 1.0, owner);
    noise_ = option_double(config, "noise", 0.0, owner);
    noise_until_ = option_int(config, "noise_until", 750, owner);
    explore_ = option_double(config, "explore", 0.0, owner);
    const std::string deviations = option_string(config, "deviations", "on");
    if (deviations != "on" && deviations != "off")
      throw ConfigError(owner + ": deviations must be on or off, got '" + deviations + "'");
    deviations_ = deviations == "on";
    net_ = option_string(config, "net", "ours");
    if (net_ != "ours" && net_ != "paper")
      throw ConfigError(owner + ": net must be ours or paper, got '" + net_ + "'");
    if (net_ == "paper" && hidden_ % 2 != 0)
      throw ConfigError(owner + ": net=paper needs an even hidden (its encoder has hidden/2 units each way), got " +
                        std::to_string(hidden_));
    if (groups_ < 1 || hidden_ < 1 || grouper_hidden_ < 1 || samples_ < 1 || temperature_ <= 0)
      throw ConfigError("agent hierarchical: groups, hidden, grouper_hidden, samples >= 1 and "
                        "temperature > 0 are required");
    grouper_ = Grouper(kGrouperFeatures, grouper_hidden_, groups_, /*linear=*/net_ == "paper");
    if (net_ == "paper")
      placer_ = std::make_shared<GroupPlacerPaperImpl>(embedding_dim(), hidden_, devices_, tanh_, temperature_);
    else
      placer_ = std::make_shared<GroupPlacerImpl>(embedding_dim(), hidden_, devices_, tanh_, temperature_);
    root_->register_module("grouper", grouper_);
    root_->register_module("placer", placer_);
    // Our deviation (see README): the placer's output layer starts near zero, so the
    // initial placement policy is close to uniform over devices. With PyTorch's
    // default initialisation the 5·tanh-squashed logits, fed back through the
    // previous-device embedding, put nearly every group on one device from the start
    // and REINFORCE never saw a split placement on some seeds.
    if (deviations_) {
      torch::NoGradGuard no_grad;
      const double scale = 0.01;
      for (auto& kv : placer_->named_parameters(true))
        if (kv.key() == "out" || kv.key().rfind("out.", 0) == 0) kv.value().mul_(scale);
    }
  }

  std::string kind() const override { return "hierarchical"; }

  void on_update(long long update) override { update_ = update; }
  // The logit noise factor at the current update: on while update <= noise_until
  // (hierarchical_controller.py:571,917 compare the global step with 750).
  double noise_now() const { return update_ <= noise_until_ ? noise_ : 0.0; }

  torch::nn::Module& module() override { return *root_; }
  Grouper& grouper() { return grouper_; }
  GroupPlacerPolicyImpl& placer() { return *placer_; }
  int groups() const { return groups_; }

  json header() const override {
    json config = {{"groups", std::to_string(groups_)},
                   {"hidden", std::to_string(hidden_)},
                   {"grouper_hidden", std::to_string(grouper_hidden_)},
                   {"deviations", deviations_ ? "on" : "off"}};
    // A policy of net=ours keeps the header it had before the option existed.
    if (net_ == "paper") config["net"] = net_;
    return policy_header(devices_, json::array({kGrouperFeatures, embedding_dim()}), config);
  }

  void prepare(const OpGraph& graph, const Cluster& cluster) override {
    n_ = graph.num_ops();
    graph_ = &graph;
    units_ = placing::colocation_units(graph);
    const OpCostMatrix costs(graph, cluster);
    const std::vector<int> rank = topological_rank(graph);
    std::vector<float> f(static_cast<size_t>(n_) * kGrouperFeatures, 0.0f);
    double max_size = 0, max_flops = 0, max_params = 0, max_time = 0;
    for (int i = 0; i < n_; ++i) {
      const Op& op = graph.op(i);
      for (double b : op.output_bytes) max_size = std::max(max_size, std::log1p(b));
      max_flops = std::max(max_flops, std::log1p(op.flops));
      max_params = std::max(max_params, std::log1p(op.param_bytes));
      max_time = std::max(max_time, std::log1p(costs.mean_time_us(i)));
    }
    auto div = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    op_size_.assign(static_cast<size_t>(n_) * kShapeSlots, 0.0f);
    op_type_.assign(n_, 0);
    op_time_.assign(n_, 0.0f);
    for (int i = 0; i < n_; ++i) {
      const Op& op = graph.op(i);
      float* row = f.data() + static_cast<size_t>(i) * kGrouperFeatures;
      op_type_[i] = static_cast<int>(fnv1a(op.type) % kTypeBuckets);
      row[op_type_[i]] = 1.0f;
      for (int k = 0; k < kShapeSlots && k < static_cast<int>(op.output_bytes.size()); ++k) {
        row[kTypeBuckets + k] = static_cast<float>(div(std::log1p(op.output_bytes[k]), max_size));
        op_size_[static_cast<size_t>(i) * kShapeSlots + k] = static_cast<float>(op.output_bytes[k] / 1e6);
      }
      row[kTypeBuckets + kShapeSlots + 0] = static_cast<float>(div(std::log1p(op.flops), max_flops));
      row[kTypeBuckets + kShapeSlots + 1] = static_cast<float>(div(std::log1p(op.param_bytes), max_params));
      row[kTypeBuckets + kShapeSlots + 2] =
          static_cast<float>(div(std::log1p(costs.mean_time_us(i)), max_time));
      op_time_[i] = static_cast<float>(costs.mean_time_us(i) / 1e3);
      // Adjacency list: topological positions of up to 10 parents and 10 children.
      const int base = kTypeBuckets + kShapeSlots + 3;
      int k = 0;
      for (int e : graph.in_edges(i))
        if (k < kAdjacency / 2) row[base + k++] = static_cast<float>(rank[graph.edge(e).src] + 1) / n_;
      k = kAdjacency / 2;
      for (int e : graph.out_edges(i))
        if (k < kAdjacency) row[base + k++] = static_cast<float>(rank[graph.edge(e).dst] + 1) / n_;
    }
    op_features_ = torch::from_blob(f.data(), {n_, kGrouperFeatures}, torch::kFloat).clone();
    // Our deviation (see README): a fixed prior added to the grouper's logits that
    // spreads the ops over the groups in contiguous blocks of a locality-preserving
    // topological order (Kahn's order taking the most recently readied op first, so a
    // chain is followed to its end before another is started). Without it the
    // untrained grouper's argmax sends every op to one group (the ops' features
    // barely differ) and nothing distinguishes them for the placer.
    const std::vector<int> order = locality_order(graph);
    locality_order_ = order;
    locality_pos_.assign(n_, 0);
    for (int pos = 0; pos < n_; ++pos) locality_pos_[order[pos]] = pos;
    group_prior_ = torch::zeros({n_, groups_});
    for (int pos = 0; pos < n_; ++pos) {
      const int64_t group = static_cast<int64_t>(pos) * groups_ / std::max(1, n_);
      if (deviations_) group_prior_[order[pos]][group] = kGroupPrior;
    }
  }

  // Topological order, LIFO among ready ops (depth-first along chains); ties by id.
  static std::vector<int> locality_order(const OpGraph& graph) {
    const int n = graph.num_ops();
    std::vector<int> indegree(n, 0);
    for (int i = 0; i < n; ++i) indegree[i] = static_cast<int>(graph.in_edges(i).size());
    std::vector<int> stack;
    for (int i = n - 1; i >= 0; --i)
      if (indegree[i] == 0) stack.push_back(i);
    std::vector<int> order;
    order.reserve(n);
    while (!stack.empty()) {
      const int op = stack.back();
      stack.pop_back();
      order.push_back(op);
      std::vector<int> ready;
      for (int e : graph.out_edges(op))
        if (--indegree[graph.edge(e).dst] == 0) ready.push_back(graph.edge(e).dst);
      std::sort(ready.rbegin(), ready.rend());
      for (int r : ready) stack.push_back(r);
    }
    AWARE_CHECK(static_cast<int>(order.size()) == n, "hierarchical: graph has a cycle");
    return order;
  }

  torch::Tensor group_logits() { return grouper_->forward(op_features_) + group_prior_; }

  const torch::Tensor& op_features() const { return op_features_; }

  // Group embeddings [1 x G x E] of a grouping (no gradient: the grouping is sampled).
  torch::Tensor group_embeddings(const std::vector<int64_t>& group_of_op) const {
    const int g = groups_;
    const int e = embedding_dim();
    std::vector<float> adj(static_cast<size_t>(g) * g, 0.0f);
    for (const Edge& edge : graph_->edges()) {
      const int a = static_cast<int>(group_of_op[edge.src]);
      const int b = static_cast<int>(group_of_op[edge.dst]);
      if (a != b) adj[static_cast<size_t>(a) * g + b] += 1.0f;
    }
    std::vector<float> types(static_cast<size_t>(g) * kTypeBuckets, 0.0f);
    std::vector<float> sizes(static_cast<size_t>(g) * kShapeSlots, 0.0f);
    std::vector<float> time(g, 0.0f);
    for (int i = 0; i < n_; ++i) {
      const size_t gi = static_cast<size_t>(group_of_op[i]);
      types[gi * kTypeBuckets + op_type_[i]] += 1.0f;
      for (int k = 0; k < kShapeSlots; ++k) sizes[gi * kShapeSlots + k] += op_size_[static_cast<size_t>(i) * kShapeSlots + k];
      time[gi] += op_time_[i];
    }
    // Work before each group: time of the ops ahead of its first op in locality order.
    std::vector<int> first(g, n_);
    for (int i = 0; i < n_; ++i) {
      const size_t gi = static_cast<size_t>(group_of_op[i]);
      first[gi] = std::min(first[gi], locality_pos_[i]);
    }
    std::vector<float> prefix(n_ + 1, 0.0f);
    for (int pos = 0; pos < n_; ++pos) prefix[pos + 1] = prefix[pos] + op_time_[locality_order_[pos]];
    std::vector<float> before(g, 1.0f);
    for (int a = 0; a < g; ++a)
      if (first[a] < n_ && prefix[n_] > 0) before[a] = prefix[first[a]] / prefix[n_];
    torch::Tensor out = torch::zeros({1, g, e});
    float* p = out.data_ptr<float>();
    // Each block of a group's row divided by (that block's row maximum + 1).
    auto put = [](float* dst, const float* src, int len) {
      float m = 0;
      for (int k = 0; k < len; ++k) m = std::max(m, src[k]);
      for (int k = 0; k < len; ++k) dst[k] = src[k] / (m + 1.0f);
    };
    std::vector<float> column(g);
    for (int a = 0; a < g; ++a) {
      float* row = p + static_cast<size_t>(a) * e;
      put(row, adj.data() + static_cast<size_t>(a) * g, g);
      for (int b = 0; b < g; ++b) column[b] = adj[static_cast<size_t>(b) * g + a];
      put(row + g, column.data(), g);
      put(row + 2 * g, types.data() + static_cast<size_t>(a) * kTypeBuckets, kTypeBuckets);
      put(row + 2 * g + kTypeBuckets, sizes.data() + static_cast<size_t>(a) * kShapeSlots, kShapeSlots);
      row[2 * g + kTypeBuckets + kShapeSlots] = time[a] / (time[a] + 1.0f);
      if (deviations_) row[2 * g + kTypeBuckets + kShapeSlots + 1] = before[a];
    }
    return out;
  }

  Placement to_placement(const std::vector<int64_t>& group_of_op, const std::vector<int64_t>& device_of_group) const {
    Placement p(std::vector<int>(n_, 0));
    for (int i = 0; i < n_; ++i) p[i] = static_cast<int>(device_of_group[group_of_op[i]]);
    placing::enforce_colocation(*graph_, units_, p);
    return p;
  }

  Episode run_episode(PlacementEnv& env, SampleRng& rng, bool greedy) override {
    Episode ep;
    ep.sequential = false;
    if (env.exhausted()) return ep;
    torch::Tensor logits = group_logits();
    // The grouper's logits get the same noise, on the raw logits
    // (hierarchical_controller.py:562-572); log-probs are the noisy logits'.
    if (!greedy && noise_now() > 0) logits = logits + logit_noise(logits, noise_now(), rng, /*per_row=*/false);
    // An exploration floor (ours, option `explore`, as Aware's): each decision,
    // grouper's and placer's, from (1 − ε) policy + ε uniform, scored as such.
    const std::vector<int64_t> group_of_op = sample_rows(logits, rng, greedy, explore_);
    const CategoricalTerms grouper_terms = categorical_terms(logits, group_of_op, explore_);
    // Argmax decoding gives the same placement in every sample: a greedy episode
    // decodes and evaluates one.
    const int samples = greedy ? 1 : samples_;
    torch::Tensor emb;
    {
      FeatureTimer timer(env);
      emb = group_embeddings(group_of_op).expand({samples, groups_, embedding_dim()});
    }
    const DecodeResult dec = placer_->decode(emb, &rng, greedy, nullptr, noise_now(), explore_);
    double total = 0;
    int evaluated = 0;
    for (int b = 0; b < samples && !env.exhausted(); ++b) {
      const double step_us = env.evaluate(to_placement(group_of_op, dec.actions[b]));
      const CategoricalTerms placer_terms = categorical_terms(dec.logits.select(0, b), dec.actions[b], explore_);
      Step s;
      s.log_prob = placer_terms.log_prob + grouper_terms.log_prob;
      s.entropy = placer_terms.entropy + grouper_terms.entropy;
      s.decisions = groups_ + n_;
      s.decision_log_probs = torch::cat({placer_terms.log_probs, grouper_terms.log_probs});
      s.reward = -std::sqrt(step_us / 1e6);
      ep.steps.push_back(s);
      total += step_us;
      ++evaluated;
    }
    ep.final_step_us = evaluated > 0 ? total / evaluated : 0;
    auto replay = std::make_shared<HierarchicalReplay>();
    replay->groups_of_op = group_of_op;
    replay->noisy = !greedy && noise_now() > 0;
    replay->embeddings = emb;
    replay->devices = dec.actions;
    ep.replay = replay;
    return ep;
  }

  void replay(Episode& episode) override {
    auto* r = static_cast<HierarchicalReplay*>(episode.replay.get());
    AWARE_CHECK(r != nullptr, "hierarchical replay missing");
    // The noise is not kept: the replayed log-probabilities would be of other
    // logits than those sampled from, and PPO's ratios would measure the noise.
    if (r->noisy)
      throw ConfigError("agent hierarchical: algorithm=ppo cannot replay episodes sampled with logit noise "
                        "(noise=0, or noise_until below the first PPO update)");
    const CategoricalTerms g = categorical_terms(group_logits(), r->groups_of_op, explore_);
    const DecodeResult dec = placer_->decode(r->embeddings, nullptr, false, &r->devices);
    for (size_t b = 0; b < episode.steps.size(); ++b) {
      const CategoricalTerms p =
          categorical_terms(dec.logits.select(0, static_cast<int64_t>(b)), r->devices[b], explore_);
      episode.steps[b].log_prob = p.log_prob + g.log_prob;
      episode.steps[b].entropy = p.entropy + g.entropy;
      episode.steps[b].decision_log_probs = torch::cat({p.log_probs, g.log_probs});
    }
  }

 private:
  int devices_;
  int groups_ = 80, hidden_ = 64, grouper_hidden_ = 64, samples_ = 8;
  double tanh_ = 5.0, temperature_ = 1.0, noise_ = 0.0, explore_ = 0.0;
  long long noise_until_ = 750, update_ = 0;
  bool deviations_ = true;
  std::string net_ = "ours";  // net=paper: the controller's grouper and placer  // our three deviations (README): grouper prior, "work before" column, small placer init
  // The group embedding's width: without our "work before" column when deviations=off.
  int embedding_dim() const { return group_embedding_dim(groups_) - (deviations_ ? 0 : 1); }
  std::shared_ptr<torch::nn::Module> root_ = std::make_shared<torch::nn::Module>("hierarchical");
  Grouper grouper_{nullptr};
  std::shared_ptr<GroupPlacerPolicyImpl> placer_;
  const OpGraph* graph_ = nullptr;
  int n_ = 0;
  placing::Units units_;
  torch::Tensor op_features_;
  torch::Tensor group_prior_;  // [n x G]: kGroupPrior at each op's block group
  std::vector<int> op_type_;
  std::vector<float> op_size_;
  std::vector<float> op_time_;
  std::vector<int> locality_order_;  // ops in the grouper's locality order
  std::vector<int> locality_pos_;    // position of each op in it
};

}  // namespace

std::vector<OptionSpec> hierarchical_agent_options() {
  using T = OptionSpec::Type;
  return {
      {"groups", T::kInt, "", "grouper's groups (default min(256, 20 x devices))", 1, 4096},
      {"hidden", T::kInt, "64", "placer LSTM width", 1, 4096},
      {"grouper_hidden", T::kInt, "64", "grouper MLP width", 1, 4096},
      {"samples", T::kInt, "8", "placements sampled per grouping", 1, 4096},
      {"tanh", T::kDouble, "5", "logit bound C in C*tanh(x/T)", 1e-6, 1e6},
      {"temperature", T::kDouble, "1", "temperature T in C*tanh(x/T)", 1e-6, 1e6},
      {"noise", T::kDouble, "0", "logit noise (grouper and placer): N(0, (noise x logits' RMS)^2) while training starts", 0, 1e3},
      {"noise_until", T::kInt, "750", "logit noise stops at this update", 0, 1e12},
      {"explore", T::kDouble, "0",
       "exploration floor: each grouper and placer decision from (1-e) policy + e uniform (ours, an option; 0: none)",
       0, 0.5},
      {"net", T::kString, "ours",
       "ours (ReLU grouper; placer with input feeding and biases) or paper (the controller's linear grouper and "
       "placer; hidden is its hidden_size; docs/agents.md)"},
      {"deviations", T::kString, "on",
       "on: our grouper prior, 'work before' column and small placer init (README); off: the paper's networks"},
  };
}

std::unique_ptr<Agent> make_hierarchical_agent(const Options& config, int num_devices) {
  return std::make_unique<HierarchicalAgent>(config, num_devices);
}

}  // namespace aware::rl
