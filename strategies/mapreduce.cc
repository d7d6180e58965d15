// mapreduce: one synchronous iteration of data-parallel back-propagation as a
// Hadoop job: job start-up (which ships the weights), each worker's HDFS read of
// its split, the map (forward + backward on the split), the shuffle of every
// worker's gradients to one reducer, the reduce and the update, and the HDFS write
// of the new weights with its replicas. cache=on is the Spark / HaLoop / cNeural
// iteration: no job start-up and no HDFS round trip, the weights broadcast instead.
#include <algorithm>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/units.h"
#include "strategies/rewrite.h"

namespace aware::strategies_detail {

namespace {

// An inserted op that takes a fixed, measured time (disk, job start-up).
int timed_strategy_op(OpGraph& out, const std::string& name, const std::string& type, Phase phase,
                      double us, double output_bytes) {
  const int id = add_strategy_op(out, name, type, phase, 0, 0, {output_bytes});
  out.mutable_op(id).compute_us = us;
  return id;
}

}  // namespace

void check_mapreduce(const StrategySpec& spec) {
  const std::string owner = "strategy '" + spec.text + "'";
  if (!spec.argument.empty()) parse_count(spec.argument, spec.text, "the worker count");
  option_bool(spec.options, "cache", false, owner);
  const double job_s = option_double(spec.options, "job_s", 25, owner);
  const double disk_MBps = option_double(spec.options, "disk_MBps", 100, owner);
  const double seek_ms = option_double(spec.options, "seek_ms", 10, owner);
  const long long replication = option_int(spec.options, "replication", 3, owner);
  if (!(job_s >= 0) || !(seek_ms >= 0) || !(disk_MBps > 0) || replication < 1) {
    throw ConfigError(owner + ": job_s and seek_ms must be >= 0, disk_MBps > 0 and "
                      "replication >= 1");
  }
}

StrategyResult apply_mapreduce(const OpGraph& graph, const Cluster& cluster,
                               const StrategySpec& spec, const StrategyContext&) {
  check_mapreduce(spec);
  const std::string owner = "strategy '" + spec.text + "'";
  const int devices = cluster.num_devices();
  const int workers = spec.argument.empty() ? devices : parse_count(spec.argument, spec.text, "the worker count");
  if (workers > devices) {
    throw ConfigError(owner + ": " + std::to_string(workers) +
                      " workers need as many devices, cluster '" + cluster.name() + "' has " +
                      std::to_string(devices));
  }
  const bool cache = option_bool(spec.options, "cache", false, owner);
  const double job_s = option_double(spec.options, "job_s", 25, owner);
  const double disk_MBps = option_double(spec.options, "disk_MBps", 100, owner);
  const double seek_ms = option_double(spec.options, "seek_ms", 10, owner);
  const long long replication = option_int(spec.options, "replication", 3, owner);
  const double disk_Bpus = disk_MBps;  // 1 MB/s = 1 byte/us
  const double seek_us = seek_ms * 1e3;

  const BatchRoles roles = classify_batch_roles(graph);
  require_batch_metadata(graph, roles, spec.text, true);
  StrategyResult result;
  const double batch = graph.batch();
  const std::vector<double> shares = split_batch(batch, workers, spec.text, "workers", &result.notes);
  const int n = graph.num_ops();

  // W: the weights (what is shipped and written); G: the gradients (what is shuffled).
  double weights = 0, gradients = 0, inputs = 0;
  for (int id = 0; id < n; ++id) {
    const Op& op = graph.op(id);
    if (roles.role[id] == Role::kVariable) weights += op.param_bytes;
    if (roles.role[id] == Role::kModel && op.phase == Phase::kForward && graph.in_edges(id).empty() &&
        op.param_bytes == 0) {
      inputs += op.total_output_bytes();
    }
  }
  for (int e = 0; e < graph.num_edges(); ++e) {
    if (roles.gradient_edge[e]) gradients += graph.edge(e).bytes;
  }

  OpGraph out(graph.name() + "@mapreduce");
  out.set_source(graph.source());
  std::vector<int> device_of;
  auto on = [&](int id, int device) {
    device_of.push_back(device);
    return id;
  };

  // Start of the iteration on device 0: the job (weights shipped with it) or, cached,
  // the broadcast of the weights.
  const int start = cache ? on(timed_strategy_op(out, "mr/broadcast", "Broadcast", Phase::kForward, 0,
                                                 weights),
                               0)
                          : on(timed_strategy_op(out, "mr/job_start", "JobStart", Phase::kForward,
                                                 job_s * 1e6, weights),
                               0);

  // Map: every worker's forward + backward on its split, without the updates.
  std::vector<char> map_ops(n, 0);
  for (int id = 0; id < n; ++id) map_ops[id] = roles.role[id] != Role::kUpdate;
  std::vector<std::vector<int>> ids(workers);
  std::vector<int> map_output(workers, -1);
  for (int r = 0; r < workers; ++r) {
    const std::string prefix = "mr/r" + std::to_string(r) + "/";
    const double fraction = shares[r] / batch;
    int gate = start;  // what the map's source ops wait for
    if (!cache) {
      const double split = inputs * fraction;
      gate = on(timed_strategy_op(out, prefix + "hdfs_read", "HdfsRead", Phase::kForward,
                                  seek_us + (split + weights) / disk_Bpus, split),
                r);
      out.add_edge(start, gate, 0, weights);
    }
    ids[r] = append_copy(out, graph, roles, fraction, prefix, map_ops, roles.gradient_edge);
    for (int id = 0; id < n; ++id) {
      if (map_ops[id]) device_of.push_back(r);
    }
    // The map waits for its split and the weights: the gate feeds the inputs and every
    // reader of a variable (not the variables, which stay source ops).
    for (int id = 0; id < n; ++id) {
      if (!map_ops[id] || roles.role[id] == Role::kVariable) continue;
      bool gated = graph.in_edges(id).empty();
      for (int e : graph.in_edges(id)) gated = gated || roles.role[graph.edge(e).src] == Role::kVariable;
      if (gated) out.add_edge(gate, ids[r][id], 0, cache ? weights : 0);
    }
    // The map's output: this worker's parameter gradients, packed for the shuffle.
    map_output[r] = on(add_strategy_op(out, prefix + "map_output", "MapOutput", Phase::kBackward, 0,
                                       2 * gradients, {gradients}),
                       r);
    for (int e = 0; e < graph.num_edges(); ++e) {
      if (!roles.gradient_edge[e]) continue;
      const Edge& edge = graph.edge(e);
      out.add_edge(ids[r][edge.src], map_output[r], edge.src_output, edge.bytes);
    }
  }

  // Reduce on device 0: the sum of the N gradients, then the model's updates once.
  const int reduce = on(add_strategy_op(out, "mr/reduce", "ReduceSum", Phase::kUpdate,
                                        (workers - 1) * gradients / 4, (workers + 1) * gradients,
                                        {gradients}),
                        0);
  for (int r = 0; r < workers; ++r) out.add_edge(map_output[r], reduce, 0, gradients);
  std::vector<char> updates(n, 0);
  for (int id = 0; id < n; ++id) updates[id] = roles.role[id] == Role::kUpdate;
  const std::vector<int> update_id = append_copy(out, graph, roles, 1, "mr/", updates);
  for (int id = 0; id < n; ++id) {
    if (!updates[id]) continue;
    device_of.push_back(0);
    const int fwd = graph.op(id).forward_of;
    if (fwd >= 0 && ids[0][fwd] >= 0) out.mutable_op(update_id[id]).forward_of = ids[0][fwd];
  }
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    if (!updates[edge.dst]) continue;
    if (roles.gradient_edge[e]) {
      out.add_edge(reduce, update_id[edge.dst], 0, edge.bytes);
    } else if (ids[0][edge.src] >= 0) {
      // The reducer's weights: worker 0's copy, on the same device.
      out.add_edge(ids[0][edge.src], update_id[edge.dst], edge.src_output, edge.bytes);
    }
  }

  // The new weights to HDFS: written on device 0, then each replica forwarded to the
  // next device and written there (store and forward, one after the other).
  int replicas_written = 0;
  if (!cache) {
    const double write_us = seek_us + weights / disk_Bpus;
    int previous = on(timed_strategy_op(out, "mr/hdfs_write", "HdfsWrite", Phase::kUpdate, write_us,
                                        weights),
                      0);
    for (int id = 0; id < n; ++id) {
      if (updates[id]) out.add_edge(update_id[id], previous, 0, 0);
    }
    const int copies = static_cast<int>(std::min<long long>(replication - 1, devices - 1));
    for (int k = 1; k <= copies; ++k) {
      const int replica = on(timed_strategy_op(out, "mr/hdfs_replica" + std::to_string(k),
                                               "HdfsWrite", Phase::kUpdate, write_us, weights),
                             k);
      out.add_edge(previous, replica, 0, weights);
      previous = replica;
    }
    replicas_written = 1 + copies;
    if (copies < replication - 1) {
      result.notes.push_back("replication " + std::to_string(replication) + " needs " +
                             std::to_string(replication) + " devices; cluster '" + cluster.name() +
                             "' has " + std::to_string(devices) + ", so " +
                             std::to_string(replicas_written) + " copies are written");
    }
  }

  out.set_batch(batch);
  out.validate();
  result.spec = "mapreduce:" + std::to_string(workers) + ",cache=" + (cache ? "on" : "off");
  if (!cache) {
    result.spec += ",job_s=" + format_number(job_s) + ",disk_MBps=" + format_number(disk_MBps) +
                   ",seek_ms=" + format_number(seek_ms) +
                   ",replication=" + std::to_string(replication);
  }
  out.set_name(graph.name() + "@" + result.spec);
  result.graph = std::move(out);
  result.placement = Placement(std::move(device_of));
  result.replicas = workers;
  result.devices_used = std::max(workers, replicas_written);
  result.global_batch = batch;
  result.notes.push_back(
      "weights " + format_number(weights) + " B, gradients shuffled " + format_number(gradients) +
      " B per worker, input split " + format_number(inputs / workers) + " B per worker" +
      (cache ? "; cached: no job start-up, no HDFS read or write"
             : "; job start-up " + format_number(job_s) + " s, disk " + format_number(disk_MBps) +
                   " MB/s, seek " + format_number(seek_ms) + " ms"));
  result.notes.push_back("not modelled: map-side spill and merge sort, speculative and failed "
                         "tasks, heartbeat delays, HDFS packet pipelining (replicas are written "
                         "one after the other)");
  return result;
}

}  // namespace aware::strategies_detail
