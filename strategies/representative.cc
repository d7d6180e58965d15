// One representative pipeline of a 3d strategy (representative.h says what is
// exploited and where it is exact).
#include "strategies/representative.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/graph_algorithms.h"
#include "strategies/rewrite.h"

namespace aware {

namespace {

using strategies_detail::BatchRoles;

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

struct Sizes {
  int dp = 1, tp = 1, pp = 1, micro = 0;
  std::string schedule = "gpipe";
  std::string recompute;
  std::string accumulate = "fused";
  int zero = 0;  // ZeRO stage 1 or 2 (the same step here, as in dp's rewrite)
  std::string order = "gpipe";  // stage_order's name: gpipe, 1f1b or interleaved
  int chunks = 1;               // interleaved:V's V
  double bucket_bytes = 25e6;
  bool overlap = true;
};

// The 3d spec's sizes and options, refusing what is not represented yet.
Sizes read_sizes(const StrategySpec& given) {
  StrategySpec spec = given;
  if (!spec.argument.empty()) {  // "3d:dp=2,tp=2" parses as argument "dp=2"
    const std::size_t eq = spec.argument.find('=');
    if (eq != std::string::npos && !spec.options.count(spec.argument.substr(0, eq)))
      spec.options[spec.argument.substr(0, eq)] = spec.argument.substr(eq + 1);
  }
  const std::string owner = "strategy '" + spec.text + "'";
  Sizes s;
  const auto count = [&](const char* key, const char* what) {
    return spec.options.count(key) ? strategies_detail::parse_count(spec.options.at(key), spec.text, what) : 1;
  };
  s.dp = count("dp", "the data-parallel size");
  s.tp = count("tp", "the tensor-parallel size");
  s.pp = count("pp", "the pipeline size");
  if (spec.options.count("micro")) s.micro = count("micro", "the micro-batch count");
  if (spec.options.count("schedule")) s.schedule = spec.options.at("schedule");
  s.order = s.schedule;
  if (s.schedule.rfind("interleaved:", 0) == 0) {
    s.order = "interleaved";
    s.chunks = strategies_detail::parse_count(s.schedule.substr(12), spec.text, "the interleaved schedule's chunk count");
  }
  if (s.order != "gpipe" && s.order != "1f1b" && s.order != "interleaved")
    throw ConfigError(owner + ": the representative simulation composes gpipe, 1f1b and interleaved:V schedules; '" +
                      s.schedule + "' is not one");
  if (spec.options.count("zero")) {
    const std::string& z = spec.options.at("zero");
    if (z != "0" && z != "1" && z != "2")
      throw ConfigError(owner + ": zero must be 0, 1 or 2 in 3d (ZeRO-3 is not offered), got '" + z + "'");
    s.zero = std::stoi(z);
  }
  if (spec.options.count("collective") && spec.options.at("collective") != "ring")
    throw ConfigError(owner + ": the representative simulation prices the ring exchange only, got collective=" +
                      spec.options.at("collective"));
  if (spec.options.count("recompute")) s.recompute = spec.options.at("recompute");
  if (spec.options.count("accumulate")) s.accumulate = spec.options.at("accumulate");
  const strategies_detail::CollectiveOptions collective = [&] {
    StrategySpec c = spec;
    for (const char* key : {"dp", "tp", "pp", "micro", "schedule", "zero", "recompute", "accumulate"}) c.options.erase(key);
    return strategies_detail::collective_options(c);
  }();
  s.bucket_bytes = collective.bucket_bytes;
  s.overlap = collective.overlap;
  return s;
}

Op strategy_op(const std::string& type, double flops, double bytes) {
  Op op;
  op.name = type;
  op.type = type;
  op.phase = Phase::kBackward;
  op.flops = flops;
  op.bytes_accessed = bytes;
  op.output_bytes = {0};
  op.block = kStrategyBlock;
  return op;
}

}  // namespace

RepresentativeResult simulate_representative(const OpGraph& graph, const Cluster& cluster, const std::string& text,
                                             Evaluator& evaluator, const StrategyContext& context) {
  const StrategySpec spec = check_strategy_spec(text);
  if (spec.kind != "3d")
    throw ConfigError("strategy '" + text + "': the representative simulation takes a 3d spec "
                      "(3d:dp=D,tp=T,pp=P,...; dp:N is 3d:dp=N, tp:N is 3d:tp=N), got kind '" + spec.kind + "'");
  Sizes s = read_sizes(spec);
  const long long need = static_cast<long long>(s.dp) * s.tp * s.pp;
  if (need > cluster.num_devices())
    throw ConfigError("strategy '" + text + "': dp=" + std::to_string(s.dp) + " x tp=" + std::to_string(s.tp) +
                      " x pp=" + std::to_string(s.pp) + " = " + std::to_string(need) + " devices, cluster '" +
                      cluster.name() + "' has " + std::to_string(cluster.num_devices()));
  const double batch = graph.batch();
  if (!(batch > 0))
    throw GraphError(strategies_detail::graph_where(graph) + ": strategy '" + text +
                     "' needs the graph's batch, and it records none");
  if (s.micro == 0) s.micro = static_cast<int>(std::min<double>(4.0 * s.pp, std::max(1.0, std::floor(batch))));
  if (batch < s.micro)
    throw ConfigError("strategy '" + text + "': a batch of " + fixed(batch, 0) + " cannot make " +
                      std::to_string(s.micro) + " micro-batches");
  if (batch / s.micro < s.dp)
    throw ConfigError("strategy '" + text + "': a micro-batch of " + fixed(batch / s.micro, 2) + " samples cannot be split " +
                      std::to_string(s.dp) + " ways (dp=" + std::to_string(s.dp) + ")");

  // Interleaving: P stages of V chunks each, piece c (chunk c / P) on stage c mod P.
  const int V = s.chunks, pieces_n = s.pp * V;
  if (V > 1) {
    if (s.pp < 2)
      throw ConfigError("strategy '" + text + "': the interleaved schedule needs pp of at least 2, got " +
                        std::to_string(s.pp));
    if (s.micro % s.pp != 0)
      throw ConfigError("strategy '" + text + "': the interleaved schedule needs micro-batches in whole groups of the "
                        "stage count (Megatron-LM's rule): micro=" + std::to_string(s.micro) + " is not a multiple of " +
                        std::to_string(s.pp));
    if (static_cast<long long>(pieces_n) * s.tp > cluster.num_devices())
      throw ConfigError("strategy '" + text + "': the representative simulation of interleaved:" + std::to_string(V) +
                        " builds one micro-batch's step as " + std::to_string(pieces_n) + " stages of " +
                        std::to_string(s.tp) + " devices (" + std::to_string(pieces_n * s.tp) + " devices), and cluster '" +
                        cluster.name() + "' has " + std::to_string(cluster.num_devices()));
  }

  RepresentativeResult result;
  result.dp = s.dp, result.tp = s.tp, result.pp = s.pp, result.micro = s.micro;
  result.schedule = s.schedule;
  result.global_batch = batch;
  result.devices_used = static_cast<int>(need);
  result.spec = "3d:dp=" + std::to_string(s.dp) + ",tp=" + std::to_string(s.tp) + ",pp=" + std::to_string(s.pp) +
                ",micro=" + std::to_string(s.micro) + (s.schedule == "gpipe" ? "" : ",schedule=" + s.schedule) +
                (s.recompute.empty() ? "" : ",recompute=" + s.recompute) +
                (s.accumulate == "sum" ? ",accumulate=sum" : "") + (s.zero > 0 ? ",zero=" + std::to_string(s.zero) : "");

  // ---- one micro-batch of one replica: the graph scaled to B / (micro x dp)
  // samples, rewritten by 3d with dp=1, micro=1 on the replica's devices.
  const int group = s.tp * s.pp;
  const Cluster replica = restrict_devices(cluster, group);
  const double fraction = 1.0 / (static_cast<double>(s.micro) * s.dp);
  OpGraph small(graph.name());
  small.set_source(graph.source());
  {
    const BatchRoles roles = strategies_detail::classify_batch_roles(graph);
    strategies_detail::append_copy(small, graph, roles, fraction, "");
    small.set_batch(batch * fraction);
  }
  // (Interleaved: one micro-batch through the P·V pieces as stages of their own, on
  // as many devices; each piece is then put back on its stage, c mod P.)
  std::string one = "3d:dp=1,tp=" + std::to_string(s.tp) + ",pp=" + std::to_string(pieces_n) + ",micro=1";
  if (s.order == "1f1b") one += ",schedule=1f1b";
  if (!s.recompute.empty()) one += ",recompute=" + s.recompute;
  one += ",accumulate=" + s.accumulate;
  // The stages cut as the full rewrite cuts them, on the whole batch's ops (a cut
  // balanced on one micro-batch's ops can differ: an op's launch overhead does not
  // shrink with the batch).
  std::vector<int> pieces;
  StrategyContext cut = context;
  if (pieces_n > 1) {
    StrategySpec pipe;
    pipe.kind = "pipeline";
    pipe.text = text;
    pieces = strategies_detail::pipeline_pieces(graph, cluster, pipe, pieces_n);
    cut.pipeline_pieces = &pieces;
  }
  const StrategyResult micro_step =
      apply_strategy(small, V > 1 ? restrict_devices(cluster, pieces_n * s.tp) : replica, one, cut);
  // ZeRO: each replica updates, and keeps the optimizer state of, its 1/D of
  // every parameter (as dp's rewrite shards its update ops).
  OpGraph sharded = micro_step.graph;
  if (s.zero > 0 && s.dp > 1)
    for (int id = 0; id < sharded.num_ops(); ++id) {
      Op& op = sharded.mutable_op(id);
      if (op.phase != Phase::kUpdate) continue;
      op.flops /= s.dp;
      op.bytes_accessed /= s.dp;
      op.param_bytes /= s.dp;
      if (op.has_measured_cost()) op.compute_us /= s.dp;
      for (double& b : op.output_bytes) b /= s.dp;
    }
  const OpGraph& g = sharded;
  const int n = g.num_ops();
  // Each op's piece (block unit) and its device in the replica (piece c's on stage c mod P).
  std::vector<int> device_of = micro_step.placement.device_of_op;
  std::vector<int> stage(n, 0);
  for (int id = 0; id < n; ++id) {
    stage[id] = device_of[id] / s.tp;
    device_of[id] = (stage[id] % s.pp) * s.tp + device_of[id] % s.tp;
  }
  const BatchRoles roles = strategies_detail::classify_batch_roles(g);

  // Each op: per micro-batch or once per step; its stage; forward or backward.
  std::vector<char> per_micro(n, 0), forward(n, 0);
  const std::vector<int> order = topological_order(g);
  for (int id = 0; id < n; ++id) {
    const std::string& name = g.op(id).name;
    per_micro[id] = name.rfind("m0/", 0) == 0 || name.rfind("recompute/", 0) == 0;
  }
  // The pass an op runs in, as the pipeline rewrite's barriers see it: its phase,
  // except that an op feeding a forward op runs in the forward pass.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int id = *it;
    forward[id] = g.op(id).phase == Phase::kForward;
    for (int e : g.out_edges(id))
      if (forward[g.edge(e).dst] && per_micro[g.edge(e).dst]) forward[id] = 1;
  }

  // ---- the gradients each device exchanges (in ready order) and its buckets,
  // as insert_gradient_exchange fills them.
  const int M = s.micro;
  std::vector<int> gradient_edges;  // edges from a micro-batch's op into an update, ready order
  {
    const std::vector<int> rank = topological_rank(g);
    std::vector<std::pair<int, int>> ready;
    for (int e = 0; e < g.num_edges(); ++e) {
      const Edge& edge = g.edge(e);
      if (per_micro[edge.src] && !per_micro[edge.dst] && g.op(edge.dst).phase == Phase::kUpdate)
        ready.push_back({rank[edge.src], e});
    }
    std::stable_sort(ready.begin(), ready.end(),
                     [](const std::pair<int, int>& a, const std::pair<int, int>& b) { return a.first < b.first; });
    for (const auto& r : ready) gradient_edges.push_back(r.second);
  }
  // A gradient's bytes over the replica's micro-batches: a weight's gradient is
  // weight-sized, an embedding's sparse one (a row per token) holds every
  // micro-batch's rows, as the full rewrite's accumulation of it does.
  const auto gradient_bytes = [&](int e) { return g.edge(e).bytes * (roles.edge_scales[e] ? M : 1); };
  std::vector<int> bucket_of_edge(g.num_edges(), -1);
  std::vector<std::vector<double>> bucket_bytes(group);
  std::vector<double> filled(group, 0);  // bytes in each device's open bucket
  for (int e : gradient_edges) {
    const int d = device_of[g.edge(e).dst];
    std::vector<double>& b = bucket_bytes[d];
    const double bytes = gradient_bytes(e);
    if (b.empty() || (s.overlap && filled[d] > 0 && filled[d] + bytes > s.bucket_bytes)) b.push_back(0), filled[d] = 0;
    b.back() += bytes;
    filled[d] += bytes;
    bucket_of_edge[e] = static_cast<int>(b.size()) - 1;
  }
  // One bucket's ring over the replicas, as the full rewrite builds it (a pack,
  // D-1 reduce-scatter steps, D-1 all-gather steps, each waiting for the
  // neighbour's chunk). The rings of the group's devices step together, so each
  // hop's transfer waits for the others that share a link direction with it
  // (the simulator carries one transfer per link direction at a time): a hop
  // costs its route's time times the most hops on one of its channels, and a
  // step the ring's dearest hop.
  std::vector<double> exchange(group, 0);
  // Per device d, its ring's hops (replica r's copy to replica r+1's) and how
  // many hops of all the rings share the busiest link direction of each.
  std::vector<std::vector<std::pair<int, int>>> ring_hops(group);
  std::vector<std::vector<int>> ring_share(group);
  if (s.dp > 1) {
    const int D = s.dp;
    std::map<int, int> load;  // channel -> hops of every ring on it
    for (int d = 0; d < group; ++d)
      for (int r = 0; r < D; ++r)
        for (const Hop& h : cluster.route(d + r * group, d + ((r + 1) % D) * group)) ++load[h.channel()];
    for (int d = 0; d < group; ++d)
      for (int r = 0; r < D; ++r) {
        const int a = d + r * group, b = d + ((r + 1) % D) * group;
        int share = 1;
        for (const Hop& h : cluster.route(a, b)) share = std::max(share, load[h.channel()]);
        ring_hops[d].push_back({a, b});
        ring_share[d].push_back(share);
      }
  }
  // A ring step on rank r waits for its own previous step and for the chunk its
  // neighbour sent, and a link carries one chunk at a time: the ring advances a
  // step every max(op + the mean hop, the dearest hop x its sharers) (the
  // cycle of greatest mean weight of its dependencies: around the ring, or one
  // link's queue), after the pack.
  // One step's pace on device d's ring for a chunk: the mean hop and the dearest
  // hop times its sharers.
  const auto pace = [&](int d, double chunk) {
    double mean = 0, dearest = 0;
    for (int r = 0; r < s.dp; ++r) {
      const double t = cluster.transfer_time_us(ring_hops[d][r].first, ring_hops[d][r].second, chunk);
      mean += t / s.dp;
      dearest = std::max(dearest, ring_share[d][r] * t);
    }
    return std::make_pair(mean, dearest);
  };
  const auto ring_us = [&](int d, double w) {
    const int D = s.dp;
    const Device& device = cluster.device(d);
    const double chunk = w / D;
    const auto [mean, dearest] = pace(d, chunk);
    const double scatter = op_time_us(strategy_op("RingReduceScatter", chunk / 4, 3 * chunk), device);
    const double gather = op_time_us(strategy_op("RingAllGather", 0, 2 * chunk), device);
    return op_time_us(strategy_op("BucketPack", 0, 2 * w), device) + (D - 1) * std::max(scatter + mean, dearest) +
           (D - 1) * std::max(gather + mean, dearest);
  };
  // ZeRO's exchange of a bucket: the ring's reduce-scatter half, then the
  // updates of the shard, then the all-gather half (from a ParamPack) over the
  // updated parameters (collectives.cc, zero_ring).
  const auto zero_half_us = [&](int d, double w, bool scatter) {
    const int D = s.dp;
    const Device& device = cluster.device(d);
    const double chunk = w / D;
    const auto [mean, dearest] = pace(d, chunk);
    return scatter ? op_time_us(strategy_op("BucketPack", 0, 2 * w), device) +
                         (D - 1) * std::max(op_time_us(strategy_op("RingReduceScatter", chunk / 4, 3 * chunk), device) + mean,
                                            dearest)
                   : op_time_us(strategy_op("ParamPack", 0, 2 * chunk), device) +
                         (D - 1) * std::max(op_time_us(strategy_op("RingAllGather", 0, 2 * chunk), device) + mean, dearest);
  };
  if (s.dp > 1)
    for (int d = 0; d < group; ++d)
      for (double w : bucket_bytes[d])
        exchange[d] += s.zero > 0 ? zero_half_us(d, w, true) + zero_half_us(d, w, false) : ring_us(d, w);

  // In the last pass, a bucket's ring runs beside the pass on the communication
  // stream. Where the ring's pace is its hop from replica 0 to replica 1 (every
  // hop alike, none shared: a pod whose replicas are whole nodes), it is built
  // as the full rewrite builds it, between device d and its copy in replica 1
  // (the partner, d + tp x pp): each step's chunk crosses the same ports as
  // there, so the pass's own transfers queue behind the ring's as they do in
  // the full step (the partner's steps mirror d's). With one stage, or elsewhere, it is one op on
  // the communication stream for the ring's whole time (ring_us).
  const Cluster pair_of_replicas = s.dp > 1 ? restrict_devices(cluster, 2 * group) : Cluster();
  std::vector<char> partner_ring(group, 0);
  if (s.dp > 1)
    for (int d = 0; d < group; ++d) {
      const double probe = 1e6;
      const auto [mean, dearest] = pace(d, probe);
      const double own = cluster.transfer_time_us(d, d + group, probe);
      // (Only a pipeline's boundary transfers can queue behind the ring: with one
      // stage the formula is the ring's time.)
      partner_ring[d] = s.pp > 1 && s.zero == 0 && std::abs(dearest - own) <= 1e-9 * own && std::abs(mean - own) <= 1e-9 * own;
    }
  const auto add_ring = [&](OpGraph& block, std::vector<int>& devices, int d, double w,
                            int bucket) -> std::pair<int, int> {
    const std::string name = "ring#" + std::to_string(d) + "/" + std::to_string(bucket);
    const auto step = [&](const std::string& n, const std::string& type, int device, double flops, double bytes,
                          double out) {
      const int op = strategies_detail::add_strategy_op(block, n, type, Phase::kBackward, flops, bytes, {out, w});
      block.mutable_op(op).stream = 1;
      devices.push_back(device);
      return op;
    };
    if (!partner_ring[d]) {
      const int op = step(name, "RingExchange", d, 0, 0, w);
      block.mutable_op(op).compute_us = ring_us(d, w);
      return {op, op};
    }
    const int D = s.dp, steps = 2 * (D - 1), p = d + group;
    const double chunk = w / D;
    const int entry = step(name + "/x0", "BucketPack", d, 0, 2 * w, chunk);
    int x = entry;
    int y = step(name + "/y0", "BucketPack", p, 0, 2 * w, chunk);
    block.add_edge(x, y, 1, 0);  // the partner's gradients are ready when d's are
    for (int j = 1; j <= steps; ++j) {
      const bool scatter = j < D;
      const double flops = scatter ? chunk / 4 : 0, bytes = scatter ? 3 * chunk : 2 * chunk;
      const char* type = scatter ? "RingReduceScatter" : "RingAllGather";
      const int nx = step(name + "/x" + std::to_string(j), type, d, flops, bytes, chunk);
      const int ny = step(name + "/y" + std::to_string(j), type, p, flops, bytes, chunk);
      block.add_edge(x, nx, 1, w);
      block.add_edge(y, nx, 0, chunk);
      block.add_edge(y, ny, 1, w);
      block.add_edge(x, ny, 0, chunk);
      x = nx, y = ny;
    }
    return {entry, x};
  };

  // ---- the blocks: stage s's forward and backward of one micro-batch, alone,
  // and its last pass with the step's tail (accumulations, one op per bucket's
  // ring on the communication stream, updates), as the full rewrite lets the
  // tail's ops run between the last pass's.
  const int P = s.pp;
  const Cluster stage_cluster = restrict_devices(cluster, s.tp);
  std::vector<char> stage_alike(P, 0);
  for (int st = 0; st < P; ++st) {
    bool alike = true;
    for (int a = 0; a < s.tp && alike; ++a) {
      const Device& x = cluster.device(st * s.tp + a);
      const Device& y = stage_cluster.device(a);
      alike = x.kind == y.kind && x.peak_flops == y.peak_flops && x.efficiency == y.efficiency &&
              x.memory_bytes == y.memory_bytes && x.memory_Bps == y.memory_Bps &&
              x.launch_overhead_us == y.launch_overhead_us;
      for (int b = 0; b < s.tp && alike; ++b)
        alike = a == b || (cluster.route_latency_us(st * s.tp + a, st * s.tp + b) == stage_cluster.route_latency_us(a, b) &&
                           cluster.route_bandwidth_Bps(st * s.tp + a, st * s.tp + b) ==
                               stage_cluster.route_bandwidth_Bps(a, b) &&
                           cluster.route(st * s.tp + a, st * s.tp + b).size() == stage_cluster.route(a, b).size());
    }
    stage_alike[st] = alike;
  }
  result.stages.assign(P, RepresentativeStage{});
  // One stage and one micro-batch: the full rewrite orders nothing between the
  // passes, so the last block is the whole step with its tail (the forward and
  // backward blocks are simulated for the report).
  const bool whole_step = P == 1 && M == 1;
  std::vector<double> finish(n, 0), finish_last(n, 0);  // each op's end in its block (the last pass's)
  std::vector<double> begin(n, 0), begin_last(n, 0);    // and its start
  std::vector<double> last_span(pieces_n, 0);  // a piece's last backward pass with its tail
  // Which piece's tail holds an update: with replicas, the stage's last piece (its
  // rings run there); without, the piece whose backward makes its gradient (a
  // chunk's updates run after its last pass, as the full step runs them).
  std::vector<int> update_piece(n, -1);
  for (int id = 0; id < n; ++id)
    if (g.op(id).phase == Phase::kUpdate) update_piece[id] = stage[id] % P;  // (replaced below)
  std::vector<double> tp_time(P, 0);    // tensor-parallel all-reduces per micro-batch
  std::vector<double> unit_forward(pieces_n, 0), unit_backward(pieces_n, 0);  // per piece
  std::vector<int> last_piece(P, 0);  // the piece of each stage's last pass
  for (int st = 0; st < P; ++st)
    last_piece[st] = strategies_detail::stage_order(s.order, V, st, P, M).back().chunk * P + st;
  std::vector<char> has_tail(pieces_n, 0);
  for (int st = 0; st < P; ++st) has_tail[last_piece[st]] = 1;
  for (int id = 0; id < n; ++id) {
    if (update_piece[id] < 0) continue;
    update_piece[id] = last_piece[update_piece[id]];
    if (s.dp == 1 && V > 1)
      for (int e : g.in_edges(id))
        if (per_micro[g.edge(e).src]) update_piece[id] = stage[g.edge(e).src];
    has_tail[update_piece[id]] = 1;
  }
  for (int unit = 0; unit < pieces_n; ++unit) {
    const int st = unit % P;
    result.stages[st].first_device = st * s.tp;
    for (int pass = 0; pass < 3; ++pass) {
      if (pass == 2 && !has_tail[unit]) continue;
      std::vector<char> keep(n, 0);
      int count = 0;
      for (int id = 0; id < n; ++id)
        if (per_micro[id] && stage[id] == unit && (forward[id] == (pass == 0) || (pass == 2 && whole_step)))
          keep[id] = 1, ++count;
      if (count == 0 && pass < 2) continue;
      if (pass == 2)  // the updates its tail holds
        for (int id = 0; id < n; ++id)
          if (update_piece[id] == unit) keep[id] = 1, ++count;
      std::vector<char> skip(g.num_edges(), 0);
      if (pass == 2)
        for (int e : gradient_edges) skip[e] = 1;
      OpGraph block(g.name() + "/block");
      const std::vector<int> id = strategies_detail::append_copy(block, g, roles, 1, "", keep, skip);
      std::vector<int> devices(block.num_ops(), 0);
      for (int op = 0; op < n; ++op)
        if (id[op] >= 0) devices[id[op]] = device_of[op];
      if (pass == 2) {
        // gradient -> [accumulation] -> [bucket's ring] -> update
        std::map<std::pair<int, int>, std::pair<int, int>> ring;  // (device, bucket) -> (entry op, exit op)
        std::map<std::pair<int, int>, int> gather;                // ZeRO: (device, bucket) -> its all-gather
        for (int e : gradient_edges) {
          const Edge& edge = g.edge(e);
          if (id[edge.dst] < 0 || (id[edge.src] < 0 && V == 1)) continue;
          // (Interleaved: a gradient of the stage's other chunks was made in an
          // earlier pass; its update and its bucket's exchange need not wait here.)
          const int d = device_of[edge.dst];
          int from = id[edge.src], output = edge.src_output;
          if (M > 1 && from >= 0) {  // as the full rewrite: fused, a zero-cost step the update waits on
            const bool fused = s.accumulate != "sum";
            const double w = gradient_bytes(e);
            const int acc = strategies_detail::add_strategy_op(block, "acc#" + std::to_string(e), "AccumulateGrad",
                                                               Phase::kBackward, fused ? 0 : (M - 1) * w / 4,
                                                               fused ? 0 : (M + 1) * w, {w});
            if (fused) block.mutable_op(acc).compute_us = 0;
            devices.push_back(d);
            block.add_edge(from, acc, output, edge.bytes);
            from = acc, output = 0;
          }
          const auto key = std::make_pair(d, bucket_of_edge[e]);
          if (s.dp > 1 && s.zero > 0) {
            if (!ring.count(key)) {
              const double w = bucket_bytes[d][key.second];
              const auto half = [&](const char* type, bool scatter) {
                const int op = strategies_detail::add_strategy_op(
                    block, std::string(type) + "#" + std::to_string(d) + "/" + std::to_string(key.second), type,
                    Phase::kBackward, 0, 0, {w / s.dp});
                block.mutable_op(op).stream = 1;
                block.mutable_op(op).compute_us = zero_half_us(d, w, scatter);
                devices.push_back(d);
                return op;
              };
              const int scatter = half("ZeroReduceScatter", true);
              ring[key] = {scatter, scatter};
              gather[key] = half("ZeroAllGather", false);
            }
            if (from >= 0) block.add_edge(from, ring[key].first, output, edge.bytes);
            from = ring[key].second, output = 0;
          } else if (s.dp > 1) {
            if (!ring.count(key)) ring[key] = add_ring(block, devices, d, bucket_bytes[d][key.second], key.second);
            if (from >= 0) block.add_edge(from, ring[key].first, output, edge.bytes);
            from = ring[key].second, output = 0;
          }
          if (from >= 0) block.add_edge(from, id[edge.dst], output, edge.bytes);
          if (gather.count(key)) block.add_edge(id[edge.dst], gather[key], 0, edge.bytes / s.dp);
        }
      }
      block.set_batch(g.batch());
      Trace trace;
      const bool partners = pass == 2 && s.dp > 1 &&
                            *std::max_element(devices.begin(), devices.end()) >= group;
      // A stage's own passes on the first tp devices instead, where they are alike
      // (same devices, same routes among them: a pod's nodes): the simulator's
      // preparation grows with the cluster's devices.
      const bool compact = pass < 2 && stage_alike[st];
      if (compact)
        for (int& d : devices) d -= st * s.tp;
      const StepResult r = evaluator.evaluate(block, compact ? stage_cluster : partners ? pair_of_replicas : replica,
                                              Placement(std::move(devices)), &trace);
      result.ops_simulated += block.num_ops();
      for (int op = 0; op < n; ++op)
        if (id[op] >= 0 && id[op] < static_cast<int>(trace.ops.size()))
          (pass == 2 ? finish_last : finish)[op] = trace.ops[id[op]].end_us,
          (pass == 2 ? begin_last : begin)[op] = trace.ops[id[op]].start_us;
      if (pass < 2) {  // time in the tensor-parallel all-reduces, on the stage's first device
        const int first = compact ? 0 : st * s.tp;
        for (int op = 0; op < block.num_ops() && op < static_cast<int>(trace.ops.size()); ++op)
          if (trace.ops[op].device == first && block.op(op).name.find("/tp/") != std::string::npos)
            tp_time[st] += trace.ops[op].end_us - trace.ops[op].start_us;
      }
      if (pass == 0) unit_forward[unit] = r.step_time_us, result.stages[st].forward_us += r.step_time_us;
      if (pass == 1) unit_backward[unit] = r.step_time_us, result.stages[st].backward_us += r.step_time_us;
      if (pass == 2) last_span[unit] = r.step_time_us;
    }
  }

  // A piece without a tail block ends its last pass as its others.
  for (int op = 0; op < n; ++op)
    if (!has_tail[stage[op]]) finish_last[op] = finish[op], begin_last[op] = begin[op];

  // ---- the boundaries: each output crossing stages once per destination device,
  // sent when its op ends within its block, the transfers of one device pair
  // one after another. The receiving pass may start before all of them arrive:
  // a tensor is needed when its first reader starts in the receiving block (a
  // stage cut inside a layer sends the norm's output, which the key projection
  // reads first, and the query's, which the scores read later).
  struct Crossing {
    int a, b;  // devices
    int src;   // op
    double us;
    double need = 0, need_last = 0;  // its first reader's start in the receiving block (its last pass)
  };
  std::map<std::tuple<int, int, int>, std::vector<Crossing>> crossing;  // (from, to, forward?)
  {
    // (op, output, device) -> where its crossing is listed
    std::map<std::tuple<int, int, int>, std::pair<std::tuple<int, int, int>, std::size_t>> where;
    for (int e = 0; e < g.num_edges(); ++e) {
      const Edge& edge = g.edge(e);
      if (!per_micro[edge.src] || !per_micro[edge.dst]) continue;
      if (stage[edge.src] == stage[edge.dst] || forward[edge.src] != forward[edge.dst]) continue;
      const int a = device_of[edge.src], b = device_of[edge.dst];
      const double reads = begin[edge.dst], reads_last = forward[edge.dst] ? begin[edge.dst] : begin_last[edge.dst];
      const auto tensor = std::make_tuple(edge.src, edge.src_output, b);
      const auto seen = where.find(tensor);
      if (seen != where.end()) {
        Crossing& c = crossing[seen->second.first][seen->second.second];
        c.need = std::min(c.need, reads), c.need_last = std::min(c.need_last, reads_last);
        continue;
      }
      const auto key = std::make_tuple(stage[edge.src], stage[edge.dst], static_cast<int>(forward[edge.src]));
      where[tensor] = {key, crossing[key].size()};
      crossing[key].push_back({a, b, edge.src, replica.transfer_time_us(a, b, edge.bytes), reads, reads_last});
    }
  }
  struct Link {
    int from, to;
    bool forward;
    // When the receiving pass can start, after the sending block starts (its last
    // pass): the latest of each tensor's arrival less its first reader's start.
    double offset = 0, offset_last = 0;
    double busy = 0;                     // the busiest device pair's transfer time per micro-batch
  };
  std::vector<Link> links;
  for (auto& [key, list] : crossing) {
    Link l{std::get<0>(key), std::get<1>(key), std::get<2>(key) != 0};
    for (int last = 0; last < 2; ++last) {
      const std::vector<double>& at = last ? finish_last : finish;
      std::sort(list.begin(), list.end(), [&](const Crossing& x, const Crossing& y) { return at[x.src] < at[y.src]; });
      std::map<std::pair<int, int>, double> pair_free, pair_busy;
      double arrive = -std::numeric_limits<double>::infinity();
      for (const Crossing& c : list) {
        double& free = pair_free[{c.a, c.b}];
        free = std::max(free, at[c.src]) + c.us;
        pair_busy[{c.a, c.b}] += last ? 0 : c.us;
        arrive = std::max(arrive, free - (last ? c.need_last : c.need));
      }
      (last ? l.offset_last : l.offset) = arrive;
      for (const auto& [pair, t] : pair_busy) l.busy = std::max(l.busy, t);
    }
    links.push_back(l);
    RepresentativeStage& from = result.stages[l.from % P];
    (l.forward ? from.send_forward_us : from.send_backward_us) += l.busy;
  }

  // ---- the schedule composed from the blocks.
  // Ops once per step that are not updates (the variables) run before the first
  // pass: nothing feeds them, and each stage's device runs them while it waits.
  std::vector<double> setup(group, 0);
  for (int id = 0; id < n; ++id)
    if (!per_micro[id] && g.op(id).phase != Phase::kUpdate && g.op(id).type != "Barrier")
      setup[device_of[id]] += op_time_us(g.op(id), replica.device(device_of[id]));
  std::vector<PipelineBlocks> blocks(pieces_n);  // per piece; piece st < P is chunk 0 of stage st
  for (int unit = 0; unit < pieces_n; ++unit) {
    const int st = unit % P;
    blocks[unit].forward_us = whole_step ? 0 : unit_forward[unit];
    blocks[unit].backward_us = unit_backward[unit];
    blocks[unit].last_us = has_tail[unit] ? last_span[unit] : unit_backward[unit];
    if (unit < P)
      for (int d = st * s.tp; d < (st + 1) * s.tp; ++d) blocks[unit].setup_us = std::max(blocks[unit].setup_us, setup[d]);
  }
  std::vector<PipelineLink> pipeline_links;
  for (const Link& l : links) pipeline_links.push_back({l.from, l.to, l.forward, l.offset, l.offset_last, l.busy});
  const ComposedSchedule composed = compose_schedule(blocks, pipeline_links, s.order, M, V);
  for (int st = 0; st < P; ++st) {
    result.stages[st].passes_end_us =
        composed.passes_end_us[st] + (whole_step ? result.stages[st].forward_us : 0);
    result.stages[st].end_us = composed.end_us[st];
    result.stages[st].in_flight = composed.in_flight[st];
  }

  // ---- what the tail holds, per stage (its busiest device), for the report.
  std::vector<double> accumulate(group, 0), update(group, 0);
  for (int id = 0; id < n; ++id)
    if (g.op(id).phase == Phase::kUpdate) update[device_of[id]] += op_time_us(g.op(id), replica.device(device_of[id]));
  if (M > 1 && s.accumulate == "sum")
    for (int e : gradient_edges) {
      const Edge& edge = g.edge(e);
      const double w = gradient_bytes(e);
      accumulate[device_of[edge.dst]] +=
          op_time_us(strategy_op("AccumulateGrad", (M - 1) * w / 4, (M + 1) * w), replica.device(device_of[edge.dst]));
    }
  double slowest_stage_passes = 0;
  for (int st = 0; st < P; ++st) {
    RepresentativeStage& stg = result.stages[st];
    double most = -1;
    for (int d = st * s.tp; d < (st + 1) * s.tp; ++d)
      if (accumulate[d] + exchange[d] + update[d] > most) {
        most = accumulate[d] + exchange[d] + update[d];
        stg.accumulate_us = accumulate[d], stg.exchange_us = exchange[d], stg.update_us = update[d];
      }
    result.step_time_us = std::max(result.step_time_us, stg.end_us);
    result.ideal_us = std::max(result.ideal_us, M * (stg.forward_us + stg.backward_us));
    slowest_stage_passes = std::max(slowest_stage_passes, stg.passes_end_us);
  }
  result.bubble_fraction = slowest_stage_passes > 0 ? std::max(0.0, 1 - result.ideal_us / slowest_stage_passes) : 0;
  for (int st = 0; st < P; ++st) {
    result.tensor_parallel_us = std::max(result.tensor_parallel_us, M * tp_time[st]);
    result.pipeline_send_us =
        std::max(result.pipeline_send_us, M * (result.stages[st].send_forward_us + result.stages[st].send_backward_us));
    result.data_parallel_us = std::max(result.data_parallel_us, result.stages[st].exchange_us);
  }

  // ---- memory: the one-micro-batch step's peak per device, plus what each further
  // micro-batch in flight holds for its backward.
  {
    const StepResult whole = evaluator.evaluate(g, replica, Placement(device_of));
    result.ops_simulated += n;
    std::vector<double> held_bytes(group, 0);
    std::set<std::pair<int, int>> counted;
    for (int e = 0; e < g.num_edges(); ++e) {
      const Edge& edge = g.edge(e);
      if (!per_micro[edge.src] || !per_micro[edge.dst] || !forward[edge.src] || forward[edge.dst]) continue;
      if (device_of[edge.src] != device_of[edge.dst]) continue;
      if (!counted.insert({edge.src, edge.src_output}).second) continue;
      held_bytes[device_of[edge.src]] += g.op(edge.src).output_bytes[edge.src_output];
    }
    for (int st = 0; st < P; ++st) {
      RepresentativeStage& stg = result.stages[st];
      for (int d = st * s.tp; d < (st + 1) * s.tp; ++d) {
        // (Interleaved: a chunk's pass holds about 1/V of the stage's activations.)
        const double peak = (d < static_cast<int>(whole.peak_memory_bytes.size()) ? whole.peak_memory_bytes[d] : 0) +
                            std::max(0, stg.in_flight - 1) * held_bytes[d] / V;
        if (peak >= stg.peak_memory_bytes) stg.peak_memory_bytes = peak, stg.activation_bytes = held_bytes[d];
        const double capacity = cluster.device(d).memory_bytes;
        if (capacity > 0 && peak > capacity && result.feasible) {
          result.feasible = false;
          result.infeasible_reason = "device " + cluster.device(d).name + " (stage " + std::to_string(st) + ") needs " +
                                     fixed(peak / 1e9, 2) + " GB, has " + fixed(capacity / 1e9, 2) + " GB";
        }
      }
      result.peak_memory_bytes = std::max(result.peak_memory_bytes, stg.peak_memory_bytes);
    }
    result.device_memory_bytes = cluster.device(0).memory_bytes;
  }

  // ---- work: every replica's micro-batches and the updates.
  double per_micro_flops = 0, recomputed = 0, shared = 0;
  long long micro_ops = 0, shared_ops = 0;
  for (int id = 0; id < n; ++id) {
    if (g.op(id).type == "Barrier") continue;
    if (per_micro[id]) {
      per_micro_flops += g.op(id).flops, ++micro_ops;
      if (g.op(id).name.rfind("recompute/", 0) == 0) recomputed += g.op(id).flops;
    } else {
      shared += g.op(id).flops, ++shared_ops;
    }
  }
  result.flops = s.dp * (M * per_micro_flops + shared);
  result.model_flops = s.dp * (M * (per_micro_flops - recomputed) + shared);
  result.ops_represented = static_cast<long long>(s.dp) * (static_cast<long long>(M) * micro_ops + shared_ops);
  result.notes.push_back("one replica of " + std::to_string(group) + " devices and one micro-batch of " +
                         fixed(batch * fraction, batch * fraction < 10 ? 3 : 0) + " samples simulated (" +
                         std::to_string(result.ops_simulated) + " op instances) for a step of " +
                         std::to_string(result.ops_represented) + " on " + std::to_string(need) + " devices");
  for (const std::string& note : micro_step.notes)
    if (note.rfind("tp:", 0) == 0 || note.rfind("recompute", 0) == 0) result.notes.push_back(note);
  return result;
}

}  // namespace aware

