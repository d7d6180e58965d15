// The 3-D search by the representative simulation (representative.h says what it
// enumerates, prunes and in what order it tries).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "strategies/representative.h"
#include "strategies/rewrite.h"

namespace aware {

namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

}  // namespace

ThreeDSearchResult search_three_d(const OpGraph& graph, const Cluster& cluster, Evaluator& evaluator,
                                  const ThreeDSearchOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  if (options.micro_batch_sizes.empty()) throw ConfigError("3-D search: no micro-batch sizes given");
  for (int k : options.micro_batch_sizes)
    if (k < 1) throw ConfigError("3-D search: a micro-batch size must be >= 1, got " + std::to_string(k));
  for (const std::string& r : options.recompute) strategies_detail::check_recompute(r, "3-D search");
  if (options.recompute.empty()) throw ConfigError("3-D search: no recomputation modes given");
  const double batch = graph.batch();
  if (!(batch >= 1) || batch != std::floor(batch))
    throw GraphError(strategies_detail::graph_where(graph) + ": the 3-D search needs the graph's batch (a whole "
                     "number of samples)");
  const long long B = static_cast<long long>(batch);
  const int N = cluster.num_devices();
  const Device& device = cluster.device(0);
  for (int d = 1; d < N; ++d)
    if (cluster.device(d).peak_flops != device.peak_flops || cluster.device(d).memory_bytes != device.memory_bytes)
      throw ConfigError("3-D search: cluster '" + cluster.name() + "' mixes devices ('" + device.name + "' and '" +
                        cluster.device(d).name + "'); the representative simulation needs alike ones");
  // What the bounds read from the graph: its layers, FLOPs, and the bytes every
  // replica holds whatever the split (weights, their gradients, optimizer state).
  int layers = 0;
  double flops = 0, forward_flops = 0, weight_bytes = 0, optimizer_bytes = 0;
  for (const Op& op : graph.ops()) {
    flops += op.flops;
    if (op.phase == Phase::kForward) forward_flops += op.flops;
    if (op.layer >= 0) layers = std::max(layers, op.layer + 1);  // e.g. a decoder's layers
    (op.phase == Phase::kUpdate ? optimizer_bytes : weight_bytes) += op.param_bytes;
  }
  // For the order only: the activations a sample leaves for its backward pass (a
  // forward output a backward op reads), without recomputation; with selective
  // recomputation less the attention core's; with full, only what crosses from
  // one layer to the next.
  double kept = 0, core = 0, crossing = 0;
  {
    std::set<std::pair<int, int>> seen_kept, seen_crossing;
    for (int e = 0; e < graph.num_edges(); ++e) {
      const Edge& edge = graph.edge(e);
      const Op& src = graph.op(edge.src);
      const Op& dst = graph.op(edge.dst);
      if (src.phase != Phase::kForward || graph.in_edges(edge.src).empty()) continue;
      const double bytes = edge.src_output < static_cast<int>(src.output_bytes.size()) ? src.output_bytes[edge.src_output] : 0;
      if (dst.phase == Phase::kBackward && seen_kept.insert({edge.src, edge.src_output}).second) {
        kept += bytes;
        const std::string last = src.name.substr(src.name.rfind('/') + 1);
        if (last == "scores" || last == "softmax" || last == "context" || last == "attention_dropout") core += bytes;
      }
      if (dst.phase == Phase::kForward && src.layer != dst.layer &&
          seen_crossing.insert({edge.src, edge.src_output}).second)
        crossing += bytes;
    }
    kept /= batch, core /= batch, crossing /= batch;
  }
  ThreeDSearchResult out;
  std::vector<ThreeDCandidate> candidates;
  for (int tp = 1; tp <= std::min(8, N); tp *= 2) {
    if (N % tp != 0) continue;
    for (int pp : divisors(N / tp)) {
      if (layers > 0 && (pp > layers || layers % pp != 0)) continue;
      const int dp = N / (tp * pp);
      if (B % dp != 0) continue;
      const long long per_replica = B / dp;
      for (int k : options.micro_batch_sizes) {
        if (per_replica % k != 0) continue;
        const long long m = per_replica / k;
        if (pp > 1 && m < pp) continue;  // 1F1B with fewer micro-batches than stages: mostly bubble
        if (m > 100000) continue;
        for (const int chunks : options.interleave)
        for (const int zero : {0, 1})
        for (const std::string& recompute : options.recompute) {
          if (zero > 0 && dp == 1) continue;
          // Interleaved 1F1B (Megatron-LM's rule: micro-batches in whole groups of
          // the stages; here also whole layers per chunk, and the P·V·T devices the
          // representative builds one micro-batch's step on).
          if (chunks > 1 && (pp == 1 || m % pp != 0 || (layers > 0 && layers % (pp * chunks) != 0) ||
                             static_cast<long long>(pp) * chunks * tp > N))
            continue;
          // Weights and their gradients on every replica; the optimizer state 1/dp of
          // it under ZeRO.
          const double state_bytes = 2 * weight_bytes + optimizer_bytes / (zero > 0 ? dp : 1);
          ThreeDCandidate c;
          c.spec = "3d:dp=" + std::to_string(dp) + ",tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) +
                   ",micro=" + std::to_string(m) +
                   (pp == 1 ? "" : chunks > 1 ? ",schedule=interleaved:" + std::to_string(chunks) : ",schedule=1f1b") +
                   (zero > 0 ? ",zero=1" : "") + (recompute == "none" ? "" : ",recompute=" + recompute);
          // The bound: every FLOP (recomputed forward ones too) on some device at its
          // efficiency, no device idle. The order: that times the pipeline's bubble for
          // balanced stages, (m + p - 1)/m (an estimate, not a bound: stages differ).
          const double work = flops + (recompute == "full" ? forward_flops : 0);
          c.lower_bound_us = work / (N * device.peak_flops * device.efficiency) * 1e6;
          c.estimate_us = c.lower_bound_us * static_cast<double>(m * chunks + pp - 1) / static_cast<double>(m * chunks);
          // Likely out of memory (the first stage holds min(pp, m) micro-batches of
          // k samples, its share of the layers, split tp ways): tried last.
          const double per_sample = recompute == "full" ? crossing : recompute == "selective" ? kept - core : kept;
          const double held = static_cast<double>(std::min<long long>(pp, m)) * k * per_sample;
          c.likely_oom = (state_bytes + held) / (static_cast<double>(tp) * pp) > device.memory_bytes;
          if (state_bytes / (tp * pp) > device.memory_bytes) {
            c.status = "pruned: memory";
            char text[160];
            std::snprintf(text, sizeof text, "weights, gradients and optimizer state alone need %.1f GB per device",
                          state_bytes / (tp * pp) / 1e9);
            c.reason = text;
          }
          candidates.push_back(std::move(c));
        }
      }
    }
  }
  if (candidates.empty())
    throw ConfigError("3-D search: no (dp, tp, pp, micro-batch) of " + std::to_string(N) + " devices divides a batch of " +
                      std::to_string(B) + (layers > 0 ? " and " + std::to_string(layers) + " layers" : std::string()));
  std::stable_sort(candidates.begin(), candidates.end(), [](const ThreeDCandidate& a, const ThreeDCandidate& b) {
    if (a.likely_oom != b.likely_oom) return b.likely_oom;
    return a.estimate_us < b.estimate_us;
  });
  // Then one of each shape (tp, pp) at a time, each shape's likeliest first, so that
  // a time budget sees many shapes rather than every variant of the first few (the
  // estimate cannot tell shapes apart well: it knows neither sends nor rings).
  {
    std::map<std::pair<int, int>, std::vector<ThreeDCandidate>> by_shape;
    std::vector<std::pair<int, int>> shapes;
    std::vector<ThreeDCandidate> ordered;
    for (const bool oom : {false, true}) {  // those likely to fit first
      by_shape.clear();
      shapes.clear();
      for (ThreeDCandidate& c : candidates) {
        if (c.likely_oom != oom) continue;
        const StrategySpec spec = parse_strategy_spec(c.spec);
        const std::pair<int, int> shape{std::stoi(spec.options.at("tp")), std::stoi(spec.options.at("pp"))};
        if (!by_shape.count(shape)) shapes.push_back(shape);
        by_shape[shape].push_back(std::move(c));
      }
      for (std::size_t round = 0;; ++round) {
        bool any = false;
        for (const auto& shape : shapes) {
          std::vector<ThreeDCandidate>& list = by_shape[shape];
          if (round < list.size()) ordered.push_back(std::move(list[round])), any = true;
        }
        if (!any) break;
      }
    }
    candidates = std::move(ordered);
  }
  double best_us = std::numeric_limits<double>::infinity();
  std::vector<ThreeDCandidate> tried, rest;
  // (The bound is not monotone in this order, so a pruned candidate is checked
  // against the best found when it comes up, not assumed beaten by the ones after.)
  for (ThreeDCandidate& c : candidates) {
    if (!c.status.empty()) {
      rest.push_back(std::move(c));
      continue;
    }
    if (c.lower_bound_us >= best_us) {
      c.status = "pruned: cannot win";
      char text[160];
      std::snprintf(text, sizeof text, "its bound %.1f ms is not below the best step found, %.1f ms",
                    c.lower_bound_us / 1e3, best_us / 1e3);
      c.reason = text;
      rest.push_back(std::move(c));
      continue;
    }
    if (options.budget_seconds > 0 && elapsed() > options.budget_seconds) {
      c.status = "not tried";
      c.reason = "the time budget ran out";
      rest.push_back(std::move(c));
      continue;
    }
    try {
      c.result = simulate_representative(graph, cluster, c.spec, evaluator);
      ++out.simulated;
      const double seconds = c.result.step_time_us * 1e-6;
      c.tflops_per_device = c.result.flops / seconds / N / 1e12;
      c.mfu = c.result.model_flops / seconds / N / device.peak_flops;
      c.status = c.result.feasible ? "ok" : "oom";
      c.reason = c.result.infeasible_reason;
      if (c.result.feasible) best_us = std::min(best_us, c.result.step_time_us);
    } catch (const Error& e) {
      c.status = "error";
      c.reason = e.what();
    }
    tried.push_back(std::move(c));
  }
  out.candidates = std::move(tried);
  for (ThreeDCandidate& c : rest) out.candidates.push_back(std::move(c));
  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    const ThreeDCandidate& c = out.candidates[i];
    if (c.status == "ok" && (out.best < 0 || c.result.step_time_us < out.candidates[out.best].result.step_time_us))
      out.best = static_cast<int>(i);
  }
  out.seconds = elapsed();
  return out;
}

}  // namespace aware
