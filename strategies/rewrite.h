// Machinery the strategy rewrites share (internal to strategies/): which ops and
// tensors scale with the batch, splitting a batch, copying a graph scaled and
// renamed into a bigger one, and inserting a gradient exchange as ordinary ops.
#pragma once

#include <string>
#include <vector>

#include "core/op_graph.h"
#include "strategies/strategy.h"

namespace aware {
class Cluster;
}

namespace aware::strategies_detail {

// What an op is to a batch split.
enum class Role {
  kVariable,   // a parameter (no inputs, param_bytes > 0 or a Variable type): never scaled
  kUpdate,     // an optimizer update: never scaled
  kParamSide,  // a backward op that sums gradients of a variable (forward_of is a variable)
  kModel,      // everything else, inputs included: work scales with the batch
};

struct BatchRoles {
  std::vector<Role> role;                         // per op
  std::vector<std::vector<char>> output_scales;   // per op, per output: 1 = batch-sized
  std::vector<char> edge_scales;                  // per edge: the tensor is batch-sized
  std::vector<char> gradient_edge;                // per edge: a parameter gradient into an update
};

// Classifies every op and tensor of `graph` (rule in docs/strategies.md).
BatchRoles classify_batch_roles(const OpGraph& graph);

// Throws GraphError naming the graph and `spec` unless the graph records its batch
// (> 0) and, when `needs_updates`, has update-phase ops fed by gradients.
void require_batch_metadata(const OpGraph& graph, const BatchRoles& roles, const std::string& spec,
                            bool needs_updates);

// Splits `batch` samples into `parts` whole shares as even as possible (the first
// batch % parts shares get one more). Throws ConfigError naming `spec` when batch <
// parts or batch is not a whole number; adds a note to `notes` when uneven.
std::vector<double> split_batch(double batch, int parts, const std::string& spec,
                                const std::string& what, std::vector<std::string>* notes);

// `op` with its batch-proportional work scaled by `fraction`: flops, temp_bytes,
// compute_us, the batch-sized outputs and the batch-sized part of bytes_accessed
// (what is not weights read or parameter gradients written). Shape metadata is
// dropped when fraction != 1 (it described the whole batch).
Op scaled_op(const OpGraph& graph, const BatchRoles& roles, int id, double fraction);

// Appends to `out` a copy of the ops of `in` with keep[op] (all when empty), named
// prefix + name, scaled by `fraction`, and the edges among them except those with
// skip_edge[e] (none when empty); colocation groups get the prefix too. Returns the
// new id of each op of `in` (-1 for ops not kept).
std::vector<int> append_copy(OpGraph& out, const OpGraph& in, const BatchRoles& roles,
                             double fraction, const std::string& prefix,
                             const std::vector<char>& keep = {},
                             const std::vector<char>& skip_edge = {});

// An op the rewrite inserts (block kStrategyBlock).
int add_strategy_op(OpGraph& out, const std::string& name, const std::string& type, Phase phase,
                    double flops, double bytes_accessed, std::vector<double> output_bytes);

// One parameter gradient, present in every rank: rank r's copy is output
// `output[r]` of op `producer[r]`, consumed by update op `consumer[r]`.
struct Gradient {
  std::vector<int> producer;
  std::vector<int> output;
  std::vector<int> consumer;
  double bytes = 0;
  int ready_order = 0;  // gradients become ready in this order (a topological rank)
};

// The gradient of edge `e` of `graph` in every replica: replica r's copy of the
// edge's ends is ids[r][...]; ready in the topological rank of its producer
// (`topo_rank`, topological_rank(graph)).
// `scale`: the share of the edge's bytes each replica's copy carries (1 for a
// weight-sized gradient; a replica's batch share for a sparse one, which follows
// the batch).
Gradient replica_gradient(const OpGraph& graph, const std::vector<std::vector<int>>& ids,
                          const std::vector<int>& topo_rank, int e, double scale = 1);

struct CollectiveOptions {
  std::string algorithm = "ring";  // ring | tree | ps | reduce | none (bagging: no exchange)
  double bucket_bytes = 25e6;
  bool overlap = true;             // false: one bucket, exchanged after the whole backward
  // ZeRO (Rajbhandari et al. 2020), ring only: 0 = the plain all-reduce; 1 = the
  // gradients reduce-scattered, each rank's updates on its 1/N shard, the updated
  // parameters all-gathered after them; 2 = the same graph: stage 2's saving, each
  // gradient released once the reduce-scatter has taken it, is already how the
  // plain exchange treats gradients (freed once packed into their bucket), so the
  // two stages differ only in name here (docs/strategies.md); 3 = reduce-scatter only (the parameters stay sharded and are
  // all-gathered before their use: insert_parameter_gather).
  int zero_stage = 0;
};

// Inserts the exchange of `gradients` among ranks (rank r on device rank_device[r])
// as ops and edges named under `prefix`, extending `device_of` with the device of
// each new op. Gradients are bucketed in ready order; each bucket is one collective
// whose last op per rank feeds that rank's update ops. With one rank, the
// gradients feed their updates directly.
void insert_gradient_exchange(OpGraph& out, std::vector<int>& device_of,
                              const std::vector<Gradient>& gradients,
                              const std::vector<int>& rank_device,
                              const CollectiveOptions& options, const std::string& prefix);

// A ring all-gather of a parameter shard among ranks (rank r on rank_device[r]):
// rank r's shard is output `output[r]` of op `producer[r]` (shard_bytes); returns,
// per rank, the op whose output 0 is the whole parameter (shard_bytes x ranks).
std::vector<int> insert_parameter_gather(OpGraph& out, std::vector<int>& device_of, const std::vector<int>& producer,
                                         const std::vector<int>& output, double shard_bytes,
                                         const std::vector<int>& rank_device, Phase phase, const std::string& name);

// A ring reduce-scatter of a whole-sized partial sum among ranks: rank r's part is
// output `output[r]` of `producer[r]` (bytes each); returns, per rank, the op whose
// output 0 is the rank's 1/N of the sum.
std::vector<int> insert_reduce_scatter(OpGraph& out, std::vector<int>& device_of, const std::vector<int>& producer,
                                       const std::vector<int>& output, double bytes,
                                       const std::vector<int>& rank_device, Phase phase, const std::string& name);

// The collectives a spec may name: ring, tree, ps, reduce.
const std::vector<std::string>& collective_names();
// "ring, tree, ps, reduce", for messages.
std::string collective_list();

// Reads the collective options a dp-like spec takes (collective, bucket_mb, overlap);
// ConfigError for a collective not in collective_names().
CollectiveOptions collective_options(const StrategySpec& spec);

// The rewrites, one per kind (strategy.cc dispatches).
StrategyResult apply_data_parallel(const OpGraph& graph, const Cluster& cluster,
                                   const StrategySpec& spec, const StrategyContext& context);
StrategyResult apply_pipeline(const OpGraph& graph, const Cluster& cluster,
                              const StrategySpec& spec, const StrategyContext& context);
StrategyResult apply_mapreduce(const OpGraph& graph, const Cluster& cluster,
                               const StrategySpec& spec, const StrategyContext& context);

// The spec's own argument and option values checked without a graph or a cluster
// (what the rewrite of any graph would refuse); ConfigError naming the spec.
void check_data_parallel(const StrategySpec& spec);
void check_pipeline(const StrategySpec& spec);

// The pipeline rewrite's parts, for the 3d spec: the piece (virtual stage) of
// each forward model op of `graph` by the balanced cut; and the rewrite of a
// graph whose ops sit in groups of `group` devices (slot[op] in 0..group-1; empty:
// all 0), stage s on devices s*group..s*group+group-1, with the pieces given
// (piece_hint[op], -1 for ops the rules place; empty: cut here).
std::vector<int> pipeline_pieces(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec, int pieces);
int pipeline_model_chunks(const StrategySpec& spec);
// One pass of a stage's schedule: forward or backward, of which micro-batch, on
// which of the device's model chunks (0 unless interleaved).
struct Pass {
  bool forward;
  int micro;
  int chunk;
};
// The order of stage s's passes (of `stages`) over `micro` micro-batches under
// `schedule` ("gpipe", "1f1b", "interleaved" with `virtual_stages` chunks).
std::vector<Pass> stage_order(const std::string& schedule, int virtual_stages, int s, int stages, int micro);  // V of schedule=interleaved:V, else 1
StrategyResult pipeline_rewrite(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec, int stages,
                                int group, const std::vector<int>& slot, const std::vector<int>& piece_hint);

// recompute=full|selective|none (strategies/recompute.cc): `mode` if valid, else
// ConfigError naming the spec. apply_recompute rewrites the strategy's step so
// that activations are recomputed before their backward; returns the number of
// forward ops recomputed, and adds a note.
std::string check_recompute(const std::string& mode, const std::string& spec_text);
int apply_recompute(StrategyResult& result, const std::string& mode);
void check_mapreduce(const StrategySpec& spec);
StrategyResult apply_tensor_parallel(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec,
                                     const StrategyContext& context);
void check_tensor_parallel(const StrategySpec& spec);
StrategyResult apply_three_d(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec,
                             const StrategyContext& context);
void check_three_d(const StrategySpec& spec);
StrategyResult apply_expert_parallel(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec,
                                     const StrategyContext& context);
void check_expert_parallel(const StrategySpec& spec);

// `text` as a whole number >= 1; ConfigError "strategy 'SPEC': WHAT 'TEXT' is not a
// whole number >= 1" otherwise, or "... is too large (at most 2147483647 ...)" for
// a whole number past an int.
int parse_count(const std::string& text, const std::string& spec, const std::string& what);

// Places `graph` on `cluster` with the registered placer `method`, given the
// strategy's evaluator, seed, budget and progress; throws ConfigError naming `spec`
// for an unknown method or one that needs an evaluator it was not given. The
// placement is checked.
Placement place_with(const std::string& method, const OpGraph& graph, const Cluster& cluster,
                     const StrategyContext& context, const std::string& spec);

// "graph 'NAME' (SOURCE)" for messages.
std::string graph_where(const OpGraph& graph);

}  // namespace aware::strategies_detail
