// dp, hybrid and bagging: R copies of the step, each on its share of the global
// batch, with the parameter gradients exchanged between them (or not, for bagging).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/placer.h"
#include "strategies/rewrite.h"

namespace aware::strategies_detail {

namespace {

std::string canonical(const StrategySpec& spec, const std::string& argument,
                      const CollectiveOptions& c, bool with_collective) {
  std::string out = spec.kind + ":" + argument;
  if (with_collective) {
    char bucket[32];
    std::snprintf(bucket, sizeof bucket, "%g", c.bucket_bytes / 1e6);
    out += ",collective=" + c.algorithm + ",bucket_mb=" + bucket +
           ",overlap=" + (c.overlap ? "on" : "off");
  }
  return out;
}

// What a dp, hybrid or bagging spec says before any graph or cluster is seen: the
// replica count (0: every device), the hybrid's placer, and the spec with a
// positional collective ("dp:ps") folded into its options.
struct DataParallelArgs {
  StrategySpec spec;
  int replicas = 0;
  std::string placer;
  int zero = 0;  // ZeRO stage (dp,zero=S; zero:S; fsdp = 3)
};

DataParallelArgs read_data_parallel_args(const StrategySpec& given) {
  DataParallelArgs a;
  a.spec = given;
  StrategySpec& spec = a.spec;
  if (spec.kind == "zero" || spec.kind == "fsdp") {
    // zero:S[,replicas=N] and fsdp[:N]: data parallelism with ZeRO's sharding.
    if (spec.kind == "zero") {
      a.zero = spec.argument.empty() ? 0 : parse_count(spec.argument, spec.text, "the ZeRO stage");
      if (a.zero < 1 || a.zero > 3) throw ConfigError("strategy '" + spec.text + "': zero takes a stage of 1, 2 or 3");
      if (spec.options.count("replicas")) a.replicas = parse_count(spec.options.at("replicas"), spec.text, "the replica count");
    } else {
      a.zero = 3;
      if (!spec.argument.empty()) a.replicas = parse_count(spec.argument, spec.text, "the replica count");
    }
    if (option_string(spec.options, "collective", "ring") != "ring")
      throw ConfigError("strategy '" + spec.text + "': ZeRO's exchange is a ring (reduce-scatter and all-gather)");
    collective_options(spec);
    return a;
  }
  if (spec.kind == "dp") {
    if (spec.options.count("zero")) {
      const std::string& z = spec.options.at("zero");
      if (z != "0" && z != "1" && z != "2" && z != "3")
        throw ConfigError("strategy '" + spec.text + "': zero must be 0, 1, 2 or 3, got '" + z + "'");
      a.zero = std::stoi(z);
      if (a.zero > 0 && option_string(spec.options, "collective", "ring") != "ring")
        throw ConfigError("strategy '" + spec.text + "': ZeRO's exchange is a ring (reduce-scatter and all-gather)");
    }
    const auto& names = collective_names();
    if (std::find(names.begin(), names.end(), spec.argument) != names.end()) {
      if (spec.options.count("collective")) {
        throw ConfigError("strategy '" + spec.text + "': the collective is given twice");
      }
      spec.options["collective"] = spec.argument;
    } else if (!spec.argument.empty()) {
      a.replicas = parse_count(spec.argument, spec.text, "the replica count");
    }
  } else if (spec.kind == "bagging") {
    if (!spec.argument.empty()) a.replicas = parse_count(spec.argument, spec.text, "the replica count");
  } else if (spec.kind == "hybrid") {
    const std::size_t x = spec.argument.find_first_of("xX*");
    if (x == std::string::npos || x == 0 || x + 1 >= spec.argument.size()) {
      throw ConfigError("strategy '" + spec.text +
                        "': hybrid takes REPLICASxMETHOD, e.g. hybrid:2xm-etf");
    }
    a.replicas = parse_count(spec.argument.substr(0, x), spec.text, "the replica count");
    a.placer = spec.argument.substr(x + 1);
    if (!PlacerRegistry::instance().has(a.placer)) {
      PlacerRegistry::instance().info(a.placer);  // throws, listing the known methods
    }
    // Only a spec built in code (the 3d spec's) carries zero here: hybrid's parse refuses it.
    if (spec.options.count("zero")) a.zero = std::stoi(spec.options.at("zero"));
  } else {
    throw InternalError("apply_data_parallel given '" + spec.kind + "'");
  }
  collective_options(spec);  // a bad collective, bucket or overlap value fails here
  if (spec.kind == "bagging") option_bool(spec.options, "average", false, "strategy '" + spec.text + "'");
  return a;
}

}  // namespace

void check_data_parallel(const StrategySpec& spec) { read_data_parallel_args(spec); }

StrategyResult apply_data_parallel(const OpGraph& graph, const Cluster& cluster,
                                   const StrategySpec& given, const StrategyContext& context) {
  const DataParallelArgs args = read_data_parallel_args(given);
  const StrategySpec& spec = args.spec;
  const int devices = cluster.num_devices();
  const int replicas = args.replicas > 0 ? args.replicas : devices;
  int group = 1;  // devices per replica
  const std::string& placer_name = args.placer;
  if (replicas > devices) {
    throw ConfigError("strategy '" + spec.text + "': " + std::to_string(replicas) +
                      " replicas need as many devices, cluster '" + cluster.name() + "' has " +
                      std::to_string(devices));
  }
  if (spec.kind == "hybrid") group = devices / replicas;
  CollectiveOptions collective = collective_options(spec);
  if (spec.kind == "bagging") collective.algorithm = "none";  // independent replicas
  const int zero = replicas > 1 ? args.zero : 0;
  collective.zero_stage = zero;

  const BatchRoles roles = classify_batch_roles(graph);
  require_batch_metadata(graph, roles, spec.text, spec.kind != "bagging");
  StrategyResult result;
  const double batch = graph.batch();
  const std::vector<double> shares = split_batch(batch, replicas, spec.text, "replicas", &result.notes);

  // Where each op of a replica goes inside its group of `group` devices.
  std::vector<int> slot(graph.num_ops(), 0);
  if (spec.kind == "hybrid" && context.group_slots) {
    AWARE_CHECK(static_cast<int>(context.group_slots->size()) == graph.num_ops(), "hybrid: group slots for another graph");
    slot = *context.group_slots;
  } else if (spec.kind == "hybrid") {
    OpGraph piece(graph.name());
    piece.set_source(graph.source());
    append_copy(piece, graph, roles, shares[0] / batch, "");
    piece.set_batch(shares[0]);
    const Cluster sub = restrict_devices(cluster, group);
    const Placement placed = place_with(placer_name, piece, sub, context, spec.text);
    slot = placed.device_of_op;
    result.notes.push_back("each replica's " + std::to_string(group) + " devices placed by '" +
                           placer_name + "' on a copy with " + std::to_string(int(shares[0])) +
                           " samples; every replica uses the same placement");
    if (devices % replicas != 0) {
      result.notes.push_back(std::to_string(devices % replicas) + " of " +
                             std::to_string(devices) + " devices left idle (" +
                             std::to_string(replicas) + " groups of " + std::to_string(group) + ")");
    }
  }

  OpGraph out(graph.name() + "@" + spec.kind);
  out.set_source(graph.source());
  std::vector<int> device_of;
  std::vector<std::vector<int>> ids(replicas);
  // ZeRO-3: a variable's reads other than its update's go through a gather.
  std::vector<char> skip = roles.gradient_edge;
  if (zero >= 3)
    for (int e = 0; e < graph.num_edges(); ++e)
      if (roles.role[graph.edge(e).src] == Role::kVariable && roles.role[graph.edge(e).dst] != Role::kUpdate) skip[e] = 1;
  for (int r = 0; r < replicas; ++r) {
    ids[r] = append_copy(out, graph, roles, shares[r] / batch, "r" + std::to_string(r) + "/", {}, skip);
    for (int id = 0; id < graph.num_ops(); ++id) device_of.push_back(r * group + slot[id]);
    if (zero == 0) continue;
    // Each rank updates (and keeps the optimizer state of) its 1/N of every parameter;
    // under stage 3 it also holds only its 1/N of the parameters.
    for (int id = 0; id < graph.num_ops(); ++id) {
      const bool sharded = roles.role[id] == Role::kUpdate || (zero >= 3 && roles.role[id] == Role::kVariable);
      if (!sharded) continue;
      Op& op = out.mutable_op(ids[r][id]);
      op.flops /= replicas;
      op.bytes_accessed /= replicas;
      op.param_bytes /= replicas;
      if (op.has_measured_cost()) op.compute_us /= replicas;
      for (double& b : op.output_bytes) b /= replicas;
    }
  }
  int gathers = 0;
  if (zero >= 3) {
    std::vector<int> rank_device;
    for (int r = 0; r < replicas; ++r) rank_device.push_back(r * group);
    for (int v = 0; v < graph.num_ops(); ++v) {
      if (roles.role[v] != Role::kVariable) continue;
      for (const Phase phase : {Phase::kForward, Phase::kBackward}) {
        std::vector<int> readers;
        for (int e : graph.out_edges(v))
          if (skip[e] && !roles.gradient_edge[e] && (graph.op(graph.edge(e).dst).phase == Phase::kForward) == (phase == Phase::kForward))
            readers.push_back(e);
        if (readers.empty()) continue;
        std::vector<int> producer, output;
        for (int r = 0; r < replicas; ++r) {
          producer.push_back(ids[r][v]);
          output.push_back(0);
        }
        const double shard = graph.op(v).output_bytes.empty() ? 0 : graph.op(v).output_bytes[0] / replicas;
        const std::vector<int> whole = insert_parameter_gather(
            out, device_of, producer, output, shard, rank_device, phase,
            std::string("zero3/") + (phase == Phase::kForward ? "forward/" : "backward/") + graph.op(v).name);
        ++gathers;
        for (int r = 0; r < replicas; ++r)
          for (int e : readers) out.add_edge(whole[r], ids[r][graph.edge(e).dst], 0, graph.edge(e).bytes);
      }
    }
  }
  const std::vector<int> rank = topological_rank(graph);
  std::map<int, std::vector<Gradient>> by_slot;  // gradients grouped by their update's slot
  for (int e = 0; e < graph.num_edges(); ++e)
    if (roles.gradient_edge[e])
      by_slot[slot[graph.edge(e).dst]].push_back(
          replica_gradient(graph, ids, rank, e, roles.edge_scales[e] ? 1.0 / replicas : 1.0));
  for (const auto& [s, grads] : by_slot) {
    std::vector<int> rank_device;
    for (int r = 0; r < replicas; ++r) rank_device.push_back(r * group + s);
    insert_gradient_exchange(out, device_of, grads, rank_device, collective,
                             group > 1 ? "allreduce/d" + std::to_string(s) : "allreduce");
  }

  if (spec.kind == "bagging" && option_bool(spec.options, "average", false, "strategy '" + spec.text + "'") &&
      replicas > 1) {
    // The one model average at the end of training: every replica's parameters
    // (after its last update) to replica 0, summed there.
    double params = 0;
    for (int id = 0; id < graph.num_ops(); ++id) {
      if (roles.role[id] == Role::kVariable) params += graph.op(id).param_bytes;
    }
    const int reduce = add_strategy_op(out, "average/reduce", "ModelAverage", Phase::kUpdate,
                                       (replicas - 1) * params / 4, (replicas + 1) * params, {params});
    device_of.push_back(0);
    for (int r = 0; r < replicas; ++r) {
      const int collect = add_strategy_op(out, "average/collect/r" + std::to_string(r),
                                          "ParamCollect", Phase::kUpdate, 0, 2 * params, {params});
      device_of.push_back(r * group);
      for (int id = 0; id < graph.num_ops(); ++id) {
        if (roles.role[id] == Role::kUpdate) out.add_edge(ids[r][id], collect, 0, 0);
      }
      out.add_edge(collect, reduce, 0, params);
    }
  }

  out.set_batch(batch);
  out.validate();
  result.graph = std::move(out);
  result.placement = Placement(std::move(device_of));
  result.replicas = replicas;
  result.devices_used = replicas * group;
  result.global_batch = batch;
  if (spec.kind == "zero" || spec.kind == "fsdp") {
    result.spec = spec.kind == "fsdp" ? "fsdp:" + std::to_string(replicas)
                                      : "zero:" + std::to_string(args.zero) + ",replicas=" + std::to_string(replicas);
    char bucket[32];
    std::snprintf(bucket, sizeof bucket, "%g", collective.bucket_bytes / 1e6);
    result.spec += std::string(",bucket_mb=") + bucket + ",overlap=" + (collective.overlap ? "on" : "off");
  } else if (spec.kind == "dp") {
    result.spec = canonical(spec, std::to_string(replicas), collective, true);
    if (args.zero > 0) result.spec += ",zero=" + std::to_string(args.zero);
  } else if (spec.kind == "hybrid") {
    result.spec = canonical(spec, std::to_string(replicas) + "x" + placer_name, collective, true);
  } else {
    result.spec = "bagging:" + std::to_string(replicas) +
                  (spec.options.count("average") ? ",average=" + spec.options.at("average") : "");
  }
  if (zero > 0) {
    result.notes.push_back("ZeRO stage " + std::to_string(zero) + ": each of the " + std::to_string(replicas) +
                           " ranks updates and keeps the optimizer state of 1/" + std::to_string(replicas) +
                           " of every parameter" +
                           (zero >= 3 ? ", holds 1/" + std::to_string(replicas) + " of the parameters and all-gathers them "
                                            "before their use (" + std::to_string(gathers) + " gathers: forward and backward)"
                                      : ""));
    if (zero <= 2)
      result.notes.push_back("stages 1 and 2 give the same graph: every exchange here frees a gradient once it is "
                             "packed into its bucket, which is stage 2's saving");
    result.notes.push_back("tensors are fp32 as in every zoo graph: weights 4, gradients 4 and Adam's two slots 8 bytes "
                           "per parameter, where ZeRO's mixed-precision accounting has 2 + 2 + 12");
  }
  result.graph.set_name(graph.name() + "@" + result.spec);
  return result;
}

}  // namespace aware::strategies_detail
