#include "strategies/strategy.h"

#include <algorithm>
#include <map>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/placer.h"
#include "strategies/rewrite.h"

namespace aware {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// single's device: a whole number >= 0, or -1 when it is none.
int single_device(const StrategySpec& spec) {
  std::size_t used = 0;
  int device = -1;
  try {
    device = std::stoi(spec.argument, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  return used == spec.argument.size() && device >= 0 ? device : -1;
}

void check_single(const StrategySpec& spec) {
  if (!spec.argument.empty() && single_device(spec) < 0)
    throw ConfigError("strategy '" + spec.text + "': device '" + spec.argument +
                      "' is not a device number (0, 1, ...)");
}

void check_place(const StrategySpec& spec) {
  if (spec.argument.empty()) {
    throw ConfigError("strategy '" + spec.text + "': place takes a method, e.g. place:m-etf");
  }
  if (!PlacerRegistry::instance().has(spec.argument)) {
    try {
      PlacerRegistry::instance().info(spec.argument);  // throws, listing the known methods
    } catch (const Error& e) {
      throw ConfigError("strategy '" + spec.text + "': " + e.what());
    }
  }
}

StrategyResult apply_single(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec,
                            const StrategyContext&) {
  int device = 0;
  if (!spec.argument.empty()) {
    device = single_device(spec);
    if (device < 0 || device >= cluster.num_devices()) {
      throw ConfigError("strategy '" + spec.text + "': device '" + spec.argument +
                        "' is not one of 0.." + std::to_string(cluster.num_devices() - 1));
    }
  }
  StrategyResult result;
  result.spec = "single:" + std::to_string(device);
  result.graph = graph;
  result.placement = single_device_placement(graph, device);
  result.global_batch = graph.batch();
  return result;
}

StrategyResult apply_place(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec,
                           const StrategyContext& context) {
  if (spec.argument.empty()) {
    throw ConfigError("strategy '" + spec.text + "': place takes a method, e.g. place:m-etf");
  }
  StrategyResult result;
  result.spec = "place:" + spec.argument;
  result.graph = graph;
  result.placement = strategies_detail::place_with(spec.argument, graph, cluster, context, spec.text);
  int used = 0;
  std::vector<char> seen(cluster.num_devices(), 0);
  for (int d : result.placement.device_of_op) used += !seen[d]++;
  result.devices_used = used;
  result.global_batch = graph.batch();
  return result;
}

}  // namespace

StrategyRegistry::StrategyRegistry() {
  using namespace strategies_detail;
  const std::vector<std::string> collective = {"collective", "bucket_mb", "overlap"};
  kinds_["single"] = {"single", "single[:D]: the step as it is, on device D (default 0)", {}, apply_single,
                      "single:1", "single"};
  kinds_["place"] = {"place", "place:METHOD: the step as it is, placed on every device by METHOD", {},
                     apply_place, "place:m-etf", "place:single"};
  kinds_["dp"] = {"dp",
                  "dp[:N|:COLLECTIVE][,collective=ring|tree|ps|reduce][,bucket_mb=25][,overlap=on][,zero=0|1|2|3]: N "
                  "replicas (default: every device), the global batch split N ways, gradients exchanged "
                  "by the collective (zero: ZeRO's sharding, ring only)",
                  {"collective", "bucket_mb", "overlap", "zero"}, apply_data_parallel, "dp:2,collective=ring", "dp:1"};
  kinds_["hybrid"] = {"hybrid",
                      "hybrid:RxMETHOD[,collective=...]: R data-parallel groups, each group's devices placed "
                      "by METHOD",
                      collective, apply_data_parallel, "hybrid:2xm-etf", "hybrid:1xsingle"};
  kinds_["pipeline"] = {"pipeline",
                        "pipeline[:S][,micro=M][,schedule=gpipe|1f1b|interleaved:V][,accumulate=sum|fused]: S stages "
                        "cut by a balanced partition, M micro-batches in GPipe or 1F1B order",
                        {"micro", "schedule", "accumulate"}, apply_pipeline, "pipeline:2,micro=2", "pipeline:1,micro=1"};
  kinds_["bagging"] = {"bagging",
                       "bagging[:N][,average=on]: N independent replicas on their own samples, no exchange "
                       "per step (average=on adds the final model average)",
                       {"average"}, apply_data_parallel, "bagging:2", "bagging:1"};
  kinds_["mapreduce"] = {"mapreduce",
                         "mapreduce[:N][,cache=on][,job_s=25][,disk_MBps=100][,seek_ms=10][,replication=3]: "
                         "one synchronous iteration as a Hadoop job (cache=on: Spark/HaLoop style)",
                         {"cache", "job_s", "disk_MBps", "seek_ms", "replication"}, apply_mapreduce,
                         "mapreduce:2,cache=on", ""};
  kinds_["zero"] = {"zero",
                    "zero:S[,replicas=N][,bucket_mb=25][,overlap=on]: data parallelism with ZeRO stage S (1: optimizer "
                    "state sharded, 2: and gradients, 3: and parameters, gathered before use); N replicas, default every device",
                    {"replicas", "collective", "bucket_mb", "overlap"}, apply_data_parallel, "zero:2,replicas=2",
                    "zero:1,replicas=1"};
  kinds_["fsdp"] = {"fsdp",
                    "fsdp[:N][,bucket_mb=25][,overlap=on]: fully sharded data parallelism (ZeRO stage 3) on N devices",
                    {"collective", "bucket_mb", "overlap"}, apply_data_parallel, "fsdp:2", "fsdp:1"};
  kinds_["zero"].check = check_data_parallel;
  kinds_["fsdp"].check = check_data_parallel;
  kinds_["ep"] = {"ep",
                  "ep[:N][,collective=...][,bucket_mb=25][,overlap=on]: expert parallelism for a mixture of experts: N "
                  "data-parallel ranks, expert e on rank e mod N only, tokens sent to their expert's rank and back "
                  "(the all-to-all)",
                  {"collective", "bucket_mb", "overlap"}, apply_expert_parallel, "ep:2", "ep:1"};
  kinds_["ep"].example_graph = "zoo:mixtral-8x7b:layers=1,hidden=64,heads=4,kv_heads=2,ffn=128,vocab=200,seq_len=8,batch=4";
  kinds_["ep"].check = check_expert_parallel;
  kinds_["tp"] = {"tp",
                  "tp[:N][,sp=on]: Megatron's tensor parallelism on N devices (default: every device; sp: sequence "
                  "parallelism too): each layer's "
                  "attention and MLP projections split by columns then rows, an all-reduce after each "
                  "row-parallel projection and each column-parallel input gradient (4 per layer per step)",
                  {"sp"}, apply_tensor_parallel, "tp:2", "tp:1"};
  kinds_["tp"].example_graph = "zoo:gpt:layers=2,hidden=64,heads=4,ffn=256,vocab=500,seq_len=16,batch=4";
  kinds_["tp"].check = check_tensor_parallel;
  kinds_["3d"] = {"3d",
                  "3d:dp=D,tp=T,pp=P[,micro=M][,schedule=gpipe|1f1b|interleaved:V][,zero=0|1|2][,accumulate=fused|sum]"
                  "[,collective=...]: "
                  "Megatron-LM's composition: a pipeline of P stages, each a group of T tensor-parallel ranks, "
                  "replicated D times for data parallelism (tensor-parallel ranks innermost in the device order)",
                  {"dp", "tp", "pp", "micro", "schedule", "zero", "accumulate", "collective", "bucket_mb", "overlap"},
                  apply_three_d, "3d:dp=1,tp=2,pp=1", "3d:dp=1,tp=1,pp=1,micro=1"};
  kinds_["3d"].example_graph = kinds_["tp"].example_graph;
  kinds_["3d"].check = check_three_d;
  kinds_["single"].check = check_single;
  kinds_["place"].check = check_place;
  for (const char* kind : {"dp", "hybrid", "bagging"}) kinds_[kind].check = check_data_parallel;
  kinds_["pipeline"].check = check_pipeline;
  kinds_["mapreduce"].check = check_mapreduce;
}

StrategyRegistry& StrategyRegistry::instance() {
  static StrategyRegistry registry;
  return registry;
}

void StrategyRegistry::add(StrategyKind kind) {
  if (kind.name.empty() || !kind.apply) throw ConfigError("a strategy kind needs a name and a rewrite");
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string name = kind.name;
  kinds_[name] = std::move(kind);
}

bool StrategyRegistry::has(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kinds_.count(name) > 0;
}

StrategyKind StrategyRegistry::get(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = kinds_.find(name);
  if (it != kinds_.end()) return it->second;
  std::string known;
  for (const auto& [n, kind] : kinds_) known += (known.empty() ? "" : ", ") + n;
  throw ConfigError("unknown kind '" + name + "' (known: " + known + "; docs/strategies.md)");
}

std::vector<std::string> StrategyRegistry::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, kind] : kinds_) out.push_back(name);
  return out;
}

std::vector<std::pair<std::string, std::string>> strategy_kinds() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& name : StrategyRegistry::instance().names())
    out.emplace_back(name, StrategyRegistry::instance().get(name).description);
  return out;
}

StrategySpec parse_strategy_spec(const std::string& text) {
  StrategySpec spec;
  spec.text = trim(text);
  if (spec.text.empty()) throw ConfigError("empty strategy spec");
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = spec.text.find(',', start);
    pieces.push_back(trim(spec.text.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const std::string& head = pieces[0];
  const std::size_t colon = head.find(':');
  spec.kind = trim(head.substr(0, colon));
  if (colon != std::string::npos) spec.argument = trim(head.substr(colon + 1));
  if (!StrategyRegistry::instance().has(spec.kind)) {
    std::string known;
    for (const std::string& name : StrategyRegistry::instance().names()) known += (known.empty() ? "" : ", ") + name;
    throw ConfigError("strategy '" + spec.text + "': unknown kind '" + spec.kind +
                      "' (known: " + known + "; docs/strategies.md)");
  }
  const StrategyKind kind = StrategyRegistry::instance().get(spec.kind);
  if (colon != std::string::npos && spec.argument.empty()) {
    throw ConfigError("strategy '" + spec.text + "': nothing after ':'");
  }
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    const std::size_t eq = pieces[i].find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pieces[i].size()) {
      throw ConfigError("strategy '" + spec.text + "': '" + pieces[i] +
                        "' is not key=value");
    }
    const std::string key = trim(pieces[i].substr(0, eq));
    const auto& allowed = kind.options;
    // recompute=full|selective is an option of every kind that trains (not of
    // MapReduce's job model).
    const bool everywhere = key == "recompute" && spec.kind != "mapreduce";
    if (!everywhere && std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string valid;
      for (const auto& k : allowed) valid += (valid.empty() ? "" : ", ") + k;
      throw ConfigError("strategy '" + spec.text + "': '" + spec.kind + "' takes no option '" +
                        key + "' (valid: " + (valid.empty() ? "none" : valid) + ")");
    }
    if (spec.options.count(key)) {
      throw ConfigError("strategy '" + spec.text + "': option '" + key + "' is given twice");
    }
    spec.options[key] = trim(pieces[i].substr(eq + 1));
  }
  return spec;
}

StrategySpec check_strategy_spec(const std::string& text) {
  const StrategySpec spec = parse_strategy_spec(text);
  const StrategyKind kind = StrategyRegistry::instance().get(spec.kind);
  StrategySpec own = spec;
  if (own.options.count("recompute")) {
    strategies_detail::check_recompute(own.options.at("recompute"), spec.text);
    own.options.erase("recompute");
  }
  if (kind.check) kind.check(own);
  return spec;
}

std::vector<std::string> split_strategy_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string piece = trim(text.substr(start, comma - start));
    if (!piece.empty()) {
      if (piece.find('=') != std::string::npos && !out.empty()) {
        out.back() += "," + piece;
      } else {
        out.push_back(piece);
      }
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

StrategyResult apply_strategy(const OpGraph& graph, const Cluster& cluster,
                              const std::string& spec, const StrategyContext& context) {
  return apply_strategy(graph, cluster, parse_strategy_spec(spec), context);
}

StrategyResult apply_strategy(const OpGraph& graph, const Cluster& cluster,
                              const StrategySpec& spec, const StrategyContext& context) {
  if (cluster.num_devices() < 1) {
    throw ConfigError("strategy '" + spec.text + "': cluster '" + cluster.name() + "' has no devices");
  }
  // recompute is every kind's option: the kind rewrites the step without it,
  // then its activations are made to be recomputed.
  StrategySpec own = spec;
  std::string recompute;
  if (own.options.count("recompute")) {
    recompute = strategies_detail::check_recompute(own.options.at("recompute"), spec.text);
    own.options.erase("recompute");
  }
  StrategyResult result = StrategyRegistry::instance().get(spec.kind).apply(graph, cluster, own, context);
  if (!recompute.empty()) {
    strategies_detail::apply_recompute(result, recompute);
    if (recompute != "none") result.spec += ",recompute=" + recompute;
  }
  return result;
}

}  // namespace aware
