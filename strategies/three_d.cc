// 3d:dp=D,tp=T,pp=P[,micro=M][,schedule=gpipe|1f1b|interleaved:V][,zero=0|1|2]
// [,accumulate=fused|sum][,collective=...][,bucket_mb=...][,overlap=...] — Megatron-LM's composition of
// the three (Narayanan et al. 2021, Section 3): a pipeline of P stages, each
// stage a group of T tensor-parallel ranks, the whole pipeline replicated D
// times for data parallelism. Built from the rewrites that exist, in that order:
//  1. tp:T on the step (the ranks' copies "tK/NAME" on devices 0..T-1, the four
//     all-reduces per layer);
//  2. the pipeline over that step: its stages cut by the pipeline's balanced cut
//     of the step before tensor parallelism (so a layer's ranks stay together),
//     rank r of stage s on device s*T + r, micro-batches and the schedule's order
//     on every device (barriers per device);
//  3. data parallelism over D such groups of P*T devices (replica d on devices
//     d*P*T ..): the batch split D ways, every parameter gradient exchanged with
//     its counterparts in the other replicas (ZeRO stages 1 and 2 as dp's).
// Device order: tensor-parallel ranks innermost, so a preset's nodes of 8 GPUs
// hold whole tensor-parallel groups when T divides 8 (Megatron-LM keeps them in
// a node), then stages, then replicas. ZeRO-3 is not offered here (its gathers
// would need every rank of a group, which dp's rewrite does not give).
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/errors.h"
#include "strategies/rewrite.h"

namespace aware::strategies_detail {

namespace {

struct ThreeD {
  int dp = 1, tp = 1, pp = 1;
  int zero = 0;
};

int count_option(const StrategySpec& spec, const char* key, const char* what) {
  return spec.options.count(key) ? parse_count(spec.options.at(key), spec.text, what) : 1;
}

// "3d:dp=2,tp=2" parses as argument "dp=2" and option tp=2: the argument is the
// first option.
StrategySpec folded(const StrategySpec& given) {
  StrategySpec spec = given;
  if (spec.argument.empty()) return spec;
  const std::size_t eq = spec.argument.find('=');
  const std::string key = eq == std::string::npos ? "" : spec.argument.substr(0, eq);
  if (key != "dp" && key != "tp" && key != "pp")
    throw ConfigError("strategy '" + spec.text + "': 3d takes its sizes as options, e.g. 3d:dp=2,tp=2,pp=2");
  if (spec.options.count(key)) throw ConfigError("strategy '" + spec.text + "': option '" + key + "' is given twice");
  spec.options[key] = spec.argument.substr(eq + 1);
  spec.argument.clear();
  return spec;
}

ThreeD read_three_d(const StrategySpec& spec) {
  ThreeD t;
  t.dp = count_option(spec, "dp", "the data-parallel size");
  t.tp = count_option(spec, "tp", "the tensor-parallel size");
  t.pp = count_option(spec, "pp", "the pipeline size");
  if (spec.options.count("zero")) {
    const std::string& z = spec.options.at("zero");
    if (z != "0" && z != "1" && z != "2")
      throw ConfigError("strategy '" + spec.text + "': zero must be 0, 1 or 2 in 3d (ZeRO-3 is not offered), got '" + z +
                        "'");
    t.zero = std::stoi(z);
  }
  return t;
}

// The pipeline part of the spec, as pipeline:P's own.
StrategySpec pipeline_part(const StrategySpec& spec, int stages) {
  StrategySpec p;
  p.kind = "pipeline";
  p.argument = std::to_string(stages);
  p.text = spec.text;
  for (const char* key : {"micro", "schedule"})
    if (spec.options.count(key)) p.options[key] = spec.options.at(key);
  // Megatron-LM accumulates the micro-batches' gradients inside the weight-
  // gradient GEMMs (--gradient-accumulation-fusion, on by default), so 3d's
  // default is fused where pipeline's is GPipe's sum.
  p.options["accumulate"] = spec.options.count("accumulate") ? spec.options.at("accumulate") : "fused";
  return p;
}

}  // namespace

void check_three_d(const StrategySpec& given) {
  const StrategySpec spec = folded(given);
  read_three_d(spec);
  check_pipeline(pipeline_part(spec, 1));
  StrategySpec collective = spec;
  collective.options.erase("dp");
  collective.options.erase("tp");
  collective.options.erase("pp");
  collective_options(collective);
}

StrategyResult apply_three_d(const OpGraph& graph, const Cluster& cluster, const StrategySpec& given,
                             const StrategyContext& context) {
  check_three_d(given);
  const StrategySpec spec = folded(given);
  const ThreeD t = read_three_d(spec);
  const long long need = static_cast<long long>(t.dp) * t.tp * t.pp;
  if (need > cluster.num_devices())
    throw ConfigError("strategy '" + spec.text + "': dp=" + std::to_string(t.dp) + " x tp=" + std::to_string(t.tp) +
                      " x pp=" + std::to_string(t.pp) + " = " + std::to_string(need) + " devices, cluster '" +
                      cluster.name() + "' has " + std::to_string(cluster.num_devices()));
  StrategyResult result;

  // 1. Tensor parallelism over the first T devices.
  StrategyResult tensor;
  if (t.tp > 1) {
    StrategySpec tp;
    tp.kind = "tp";
    tp.argument = std::to_string(t.tp);
    tp.text = spec.text;
    tensor = apply_tensor_parallel(graph, restrict_devices(cluster, t.tp), tp, context);
  } else {
    tensor.graph = graph;
    tensor.placement = Placement(std::vector<int>(graph.num_ops(), 0));
  }
  for (const std::string& note : tensor.notes) result.notes.push_back("tp: " + note);

  // 2. The pipeline: pieces cut on the step before tensor parallelism, each rank's
  // copy of an op in its op's piece.
  const StrategySpec pipe = pipeline_part(spec, t.pp);
  const int pieces = t.pp * pipeline_model_chunks(pipe);
  const std::vector<int> piece =
      context.pipeline_pieces ? *context.pipeline_pieces : pipeline_pieces(graph, cluster, pipe, pieces);
  if (static_cast<int>(piece.size()) != graph.num_ops())
    throw ConfigError("strategy '" + spec.text + "': the given pipeline cut names " + std::to_string(piece.size()) +
                      " ops, graph '" + graph.name() + "' has " + std::to_string(graph.num_ops()));
  std::vector<int> hint(tensor.graph.num_ops(), -1);
  for (int id = 0; id < tensor.graph.num_ops(); ++id) {
    std::string name = tensor.graph.op(id).name;
    if (t.tp > 1) {  // "tK/NAME"
      const std::size_t slash = name.find('/');
      if (name.empty() || name[0] != 't' || slash == std::string::npos) continue;
      name = name.substr(slash + 1);
    }
    const int source = graph.find(name);
    if (source >= 0) hint[id] = piece[source];
  }
  StrategyResult pipeline = pipeline_rewrite(tensor.graph, restrict_devices(cluster, t.pp * t.tp), pipe, t.pp, t.tp,
                                             tensor.placement.device_of_op, hint);
  for (const std::string& note : pipeline.notes) result.notes.push_back("pp: " + note);
  const std::string pipeline_spec = pipeline.spec;  // "pipeline:P,micro=M[,schedule=...]"

  // 3. Data parallelism over D groups of P x T devices.
  StrategyResult whole;
  if (t.dp > 1) {
    StrategySpec dp;
    dp.kind = "hybrid";
    dp.argument = std::to_string(t.dp) + "xsingle";
    dp.text = spec.text;
    for (const char* key : {"collective", "bucket_mb", "overlap"})
      if (spec.options.count(key)) dp.options[key] = spec.options.at(key);
    if (t.zero > 0) dp.options["zero"] = std::to_string(t.zero);
    StrategyContext given = context;
    given.group_slots = &pipeline.placement.device_of_op;
    whole = apply_data_parallel(pipeline.graph, restrict_devices(cluster, static_cast<int>(need)), dp, given);
    for (const std::string& note : whole.notes)
      if (note.find("placed by") == std::string::npos) result.notes.push_back("dp: " + note);
  } else {
    whole = std::move(pipeline);
  }

  result.graph = std::move(whole.graph);
  result.placement = std::move(whole.placement);
  result.replicas = t.dp;
  result.devices_used = static_cast<int>(need);
  result.global_batch = graph.batch();
  const std::size_t micro = pipeline_spec.find(",micro=");
  result.spec = "3d:dp=" + std::to_string(t.dp) + ",tp=" + std::to_string(t.tp) + ",pp=" + std::to_string(t.pp);
  if (micro != std::string::npos) {
    std::string tail = pipeline_spec.substr(micro);
    const std::size_t fused = tail.find(",accumulate=fused");  // 3d's default: not repeated
    if (fused != std::string::npos) tail.erase(fused, 17);
    result.spec += tail;
  }
  if (pipe.options.at("accumulate") == "sum") result.spec += ",accumulate=sum";
  if (t.zero > 0) result.spec += ",zero=" + std::to_string(t.zero);
  result.graph.set_name(graph.name() + "@" + result.spec);
  return result;
}

}  // namespace aware::strategies_detail
