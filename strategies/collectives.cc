// The gradient exchange as ordinary ops and edges: ring, tree, sharded parameter
// server and single reducer (docs/strategies.md has the cost of each op).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.h"
#include "core/evaluator.h"
#include "strategies/rewrite.h"

namespace aware::strategies_detail {

namespace {

constexpr double kElementBytes = 4;  // gradients are fp32: one add per 4 bytes

struct Builder {
  OpGraph& out;
  std::vector<int>& device_of;

  int op(const std::string& name, const std::string& type, int device, double flops,
         double bytes_accessed, std::vector<double> outputs) {
    const int id =
        add_strategy_op(out, name, type, Phase::kBackward, flops, bytes_accessed, std::move(outputs));
    out.mutable_op(id).stream = 1;  // the communication stream, beside compute
    device_of.push_back(device);
    return id;
  }
  void edge(int src, int output, int dst, double bytes) { out.add_edge(src, dst, output, bytes); }
};

// The gradients of `bucket` on rank r flow into op `into`.
void gather_inputs(Builder& b, const std::vector<const Gradient*>& bucket, int r, int into) {
  for (const Gradient* g : bucket) b.edge(g->producer[r], g->output[r], into, g->bytes);
}
void feed_updates(Builder& b, const std::vector<const Gradient*>& bucket, int r, int from,
                  int output) {
  for (const Gradient* g : bucket) b.edge(from, output, g->consumer[r], g->bytes);
}

// ZeRO's exchange of one bucket: the ring's reduce-scatter half, the rank's updates
// on their shard, then (stages 1-2) the ring's all-gather half over the updated
// parameters, gathered from the updates by a ParamPack op.
void zero_ring(Builder& b, const std::vector<const Gradient*>& bucket, double w, const std::vector<int>& dev,
               const std::string& name, int stage) {
  const int ranks = static_cast<int>(dev.size());
  const double chunk = w / ranks;
  std::vector<std::vector<int>> x(ranks, std::vector<int>(ranks));
  for (int s = 0; s < ranks; ++s)
    for (int r = 0; r < ranks; ++r) {
      const std::string n = name + "/ring" + std::to_string(s) + "/r" + std::to_string(r);
      x[s][r] = s == 0 ? b.op(n, "BucketPack", dev[r], 0, 2 * w, {chunk, w})
                       : b.op(n, "RingReduceScatter", dev[r], chunk / kElementBytes, 3 * chunk, {chunk, w});
    }
  for (int r = 0; r < ranks; ++r) gather_inputs(b, bucket, r, x[0][r]);
  for (int s = 1; s < ranks; ++s)
    for (int r = 0; r < ranks; ++r) {
      b.edge(x[s - 1][r], 1, x[s][r], w);
      b.edge(x[s - 1][(r + ranks - 1) % ranks], 0, x[s][r], chunk);
    }
  const int last = ranks - 1;
  for (int r = 0; r < ranks; ++r)
    for (const Gradient* g : bucket) b.edge(x[last][r], 0, g->consumer[r], g->bytes / ranks);
  if (stage >= 3) return;  // the parameters stay sharded
  std::vector<std::vector<int>> y(ranks, std::vector<int>(ranks));
  for (int s = 0; s < ranks; ++s)
    for (int r = 0; r < ranks; ++r) {
      const std::string n = name + "/gather" + std::to_string(s) + "/r" + std::to_string(r);
      y[s][r] = s == 0 ? b.op(n, "ParamPack", dev[r], 0, 2 * chunk, {chunk, w})
                       : b.op(n, "RingAllGather", dev[r], 0, 2 * chunk, {chunk, w});
    }
  for (int r = 0; r < ranks; ++r) {
    for (const Gradient* g : bucket) b.edge(g->consumer[r], 0, y[0][r], g->bytes / ranks);
  }
  for (int s = 1; s < ranks; ++s)
    for (int r = 0; r < ranks; ++r) {
      b.edge(y[s - 1][r], 1, y[s][r], w);
      b.edge(y[s - 1][(r + ranks - 1) % ranks], 0, y[s][r], chunk);
    }
}

// Returns each rank's first and last step, so that the next bucket's ring can
// wait for this one's.
std::pair<std::vector<int>, std::vector<int>> ring(Builder& b, const std::vector<const Gradient*>& bucket, double w,
                                                   const std::vector<int>& dev, const std::string& name) {
  const int ranks = static_cast<int>(dev.size());
  const int steps = 2 * (ranks - 1);
  const double chunk = w / ranks;
  std::vector<std::vector<int>> x(steps + 1, std::vector<int>(ranks));
  for (int s = 0; s <= steps; ++s) {
    for (int r = 0; r < ranks; ++r) {
      const std::string n = name + "/ring" + std::to_string(s) + "/r" + std::to_string(r);
      if (s == 0) {
        x[s][r] = b.op(n, "BucketPack", dev[r], 0, 2 * w, {chunk, w});
      } else if (s < ranks) {
        x[s][r] = b.op(n, "RingReduceScatter", dev[r], chunk / kElementBytes, 3 * chunk,
                       {chunk, w});
      } else {
        x[s][r] = b.op(n, "RingAllGather", dev[r], 0, 2 * chunk, {chunk, w});
      }
    }
  }
  for (int r = 0; r < ranks; ++r) gather_inputs(b, bucket, r, x[0][r]);
  for (int s = 1; s <= steps; ++s) {
    for (int r = 0; r < ranks; ++r) {
      b.edge(x[s - 1][r], 1, x[s][r], w);                          // own buffer, same device
      b.edge(x[s - 1][(r + ranks - 1) % ranks], 0, x[s][r], chunk);  // the neighbour's chunk
    }
  }
  for (int r = 0; r < ranks; ++r) feed_updates(b, bucket, r, x[steps][r], 1);
  return {x[0], x[steps]};
}

void tree(Builder& b, const std::vector<const Gradient*>& bucket, double w,
          const std::vector<int>& dev, const std::string& name) {
  const int ranks = static_cast<int>(dev.size());
  std::vector<int> up(ranks), down(ranks);
  for (int r = 0; r < ranks; ++r) {
    const int children = std::min(2, std::max(0, ranks - (2 * r + 1)));
    up[r] = b.op(name + "/reduce/r" + std::to_string(r), "TreeReduce", dev[r],
                 children * w / kElementBytes, (2 + children) * w, {w});
  }
  for (int r = 0; r < ranks; ++r) {
    down[r] = b.op(name + "/broadcast/r" + std::to_string(r), "TreeBroadcast", dev[r], 0, 2 * w,
                   {w});
  }
  for (int r = 0; r < ranks; ++r) {
    gather_inputs(b, bucket, r, up[r]);
    if (r > 0) {
      const int parent = (r - 1) / 2;
      b.edge(up[r], 0, up[parent], w);
      b.edge(down[parent], 0, down[r], w);
    }
  }
  b.edge(up[0], 0, down[0], w);
  for (int r = 0; r < ranks; ++r) feed_updates(b, bucket, r, down[r], 0);
}

void parameter_server(Builder& b, const std::vector<const Gradient*>& bucket, double w,
                      const std::vector<int>& dev, const std::string& name, bool sharded) {
  const int ranks = static_cast<int>(dev.size());
  const int shards = sharded ? ranks : 1;
  const double piece = w / shards;
  std::vector<int> push(ranks), shard(shards), pull(ranks);
  for (int r = 0; r < ranks; ++r) {
    push[r] = b.op(name + "/push/r" + std::to_string(r), sharded ? "PsPush" : "ReducePush", dev[r],
                   0, 2 * w, {w});
  }
  for (int j = 0; j < shards; ++j) {
    shard[j] = b.op(name + (sharded ? "/shard" + std::to_string(j) : "/reducer"),
                    sharded ? "PsShardReduce" : "Reduce", dev[j],
                    (ranks - 1) * piece / kElementBytes, (ranks + 1) * piece, {piece});
  }
  for (int r = 0; r < ranks; ++r) {
    pull[r] = b.op(name + "/pull/r" + std::to_string(r), sharded ? "PsPull" : "Broadcast", dev[r],
                   0, 2 * w, {w});
  }
  for (int r = 0; r < ranks; ++r) {
    gather_inputs(b, bucket, r, push[r]);
    for (int j = 0; j < shards; ++j) {
      b.edge(push[r], 0, shard[j], piece);
      b.edge(shard[j], 0, pull[r], piece);
    }
    feed_updates(b, bucket, r, pull[r], 0);
  }
}

}  // namespace

const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> names = {"ring", "tree", "ps", "reduce"};
  return names;
}

std::string collective_list() {
  std::string out;
  for (const std::string& n : collective_names()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

CollectiveOptions collective_options(const StrategySpec& spec) {
  CollectiveOptions options;
  const std::string owner = "strategy '" + spec.text + "'";
  options.algorithm = option_string(spec.options, "collective", options.algorithm);
  const auto& known = collective_names();
  if (std::find(known.begin(), known.end(), options.algorithm) == known.end()) {
    throw ConfigError(owner + ": collective '" + options.algorithm + "' is unknown (known: " +
                      collective_list() + ")");
  }
  const double bucket_mb = option_double(spec.options, "bucket_mb", 25, owner);
  if (!(bucket_mb > 0) || !std::isfinite(bucket_mb)) {
    throw ConfigError(owner + ": bucket_mb must be a positive number");
  }
  options.bucket_bytes = bucket_mb * 1e6;
  options.overlap = option_bool(spec.options, "overlap", true, owner);
  return options;
}

void insert_gradient_exchange(OpGraph& out, std::vector<int>& device_of,
                              const std::vector<Gradient>& gradients,
                              const std::vector<int>& rank_device,
                              const CollectiveOptions& options, const std::string& prefix) {
  Builder b{out, device_of};
  const int ranks = static_cast<int>(rank_device.size());
  std::vector<const Gradient*> order;
  for (const Gradient& g : gradients) order.push_back(&g);
  std::stable_sort(order.begin(), order.end(), [](const Gradient* a, const Gradient* c) {
    return a->ready_order < c->ready_order;
  });
  if (ranks == 1 || options.algorithm == "none") {
    for (const Gradient* g : order) {
      for (int r = 0; r < ranks; ++r) b.edge(g->producer[r], g->output[r], g->consumer[r], g->bytes);
    }
    return;
  }
  std::vector<std::vector<const Gradient*>> buckets;
  double filled = 0;
  for (const Gradient* g : order) {
    if (buckets.empty() || (options.overlap && filled > 0 && filled + g->bytes > options.bucket_bytes)) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(g);
    filled += g->bytes;
  }
  // The buckets' rings run one after another on each rank, as collectives
  // launched on one communication stream do (NCCL's all-reduces in DDP's and
  // Megatron-LM's bucket order): bucket k+1's first step waits for bucket k's last.
  std::vector<int> previous_last;
  for (std::size_t k = 0; k < buckets.size(); ++k) {
    double w = 0;
    for (const Gradient* g : buckets[k]) w += g->bytes;
    const std::string name = prefix + "/b" + std::to_string(k);
    if (options.zero_stage > 0) {
      if (options.algorithm != "ring") throw InternalError("ZeRO's exchange is a ring, got " + options.algorithm);
      zero_ring(b, buckets[k], w, rank_device, name, options.zero_stage);
    } else if (options.algorithm == "ring") {
      const auto [first, last] = ring(b, buckets[k], w, rank_device, name);
      if (!previous_last.empty())
        for (int r = 0; r < ranks; ++r) b.edge(previous_last[r], 1, first[r], 0);
      previous_last = last;
    } else if (options.algorithm == "tree") {
      tree(b, buckets[k], w, rank_device, name);
    } else if (options.algorithm == "ps") {
      parameter_server(b, buckets[k], w, rank_device, name, true);
    } else {
      parameter_server(b, buckets[k], w, rank_device, name, false);
    }
  }
}

std::vector<int> insert_reduce_scatter(OpGraph& out, std::vector<int>& device_of, const std::vector<int>& producer,
                                       const std::vector<int>& output, double bytes,
                                       const std::vector<int>& rank_device, Phase phase, const std::string& name) {
  Builder b{out, device_of};
  const int ranks = static_cast<int>(rank_device.size());
  const double chunk = bytes / ranks;
  std::vector<std::vector<int>> x(ranks, std::vector<int>(ranks));
  for (int s = 0; s < ranks; ++s)
    for (int r = 0; r < ranks; ++r) {
      const std::string n = name + "/scatter" + std::to_string(s) + "/r" + std::to_string(r);
      x[s][r] = s == 0 ? b.op(n, "BucketPack", rank_device[r], 0, 2 * bytes, {chunk, bytes})
                       : b.op(n, "RingReduceScatter", rank_device[r], chunk / kElementBytes, 3 * chunk, {chunk, bytes});
      out.mutable_op(x[s][r]).phase = phase;
    }
  for (int r = 0; r < ranks; ++r) b.edge(producer[r], output[r], x[0][r], bytes);
  for (int s = 1; s < ranks; ++s)
    for (int r = 0; r < ranks; ++r) {
      b.edge(x[s - 1][r], 1, x[s][r], bytes);
      b.edge(x[s - 1][(r + ranks - 1) % ranks], 0, x[s][r], chunk);
    }
  std::vector<int> last(ranks);
  for (int r = 0; r < ranks; ++r) last[r] = x[ranks - 1][r];
  return last;
}

std::vector<int> insert_parameter_gather(OpGraph& out, std::vector<int>& device_of, const std::vector<int>& producer,
                                         const std::vector<int>& output, double shard_bytes,
                                         const std::vector<int>& rank_device, Phase phase, const std::string& name) {
  Builder b{out, device_of};
  const int ranks = static_cast<int>(rank_device.size());
  const double w = shard_bytes * ranks;
  std::vector<std::vector<int>> y(ranks, std::vector<int>(ranks));
  for (int s = 0; s < ranks; ++s)
    for (int r = 0; r < ranks; ++r) {
      const std::string n = name + "/gather" + std::to_string(s) + "/r" + std::to_string(r);
      y[s][r] = b.op(n, s == 0 ? "ParamPack" : "RingAllGather", rank_device[r], 0, 2 * shard_bytes, {w, shard_bytes});
      out.mutable_op(y[s][r]).phase = phase;
    }
  for (int r = 0; r < ranks; ++r) b.edge(producer[r], output[r], y[0][r], shard_bytes);
  for (int s = 1; s < ranks; ++s)
    for (int r = 0; r < ranks; ++r) {
      b.edge(y[s - 1][r], 0, y[s][r], w);                                        // own buffer
      b.edge(y[s - 1][(r + ranks - 1) % ranks], 1, y[s][r], shard_bytes);        // the neighbour's piece
    }
  std::vector<int> last(ranks);
  for (int r = 0; r < ranks; ++r) last[r] = y[ranks - 1][r];
  return last;
}

}  // namespace aware::strategies_detail
