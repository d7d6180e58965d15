// Simulating one representative pipeline of a symmetric 3d strategy, so that a
// configuration of thousands of GPUs is priced in seconds without building its
// step (docs/strategies.md, "One representative rank").
//
// What is exploited, and where it is exact:
//  - data-parallel replicas are identical: one replica (tp x pp devices) is
//    simulated, and its gradient exchange is priced as the ring the full rewrite
//    builds, on the slowest hop between consecutive replicas (exact when every
//    hop of the ring costs the same, as on a rail-optimised pod);
//  - micro-batches repeat: each stage's (interleaved: each chunk's) forward and
//    backward pass of one micro-batch is simulated once, as a block on its own
//    devices (its tensor-parallel collectives included), and the schedule's
//    passes are composed from those blocks, one at a time per stage in the
//    schedule's order (what the full rewrite's barriers enforce), a pass starting
//    when each tensor it reads has arrived less the time before its first reader,
//    each boundary's transfers one at a time per device pair;
//  - the tail (the accumulation steps the updates wait on, each bucket's ring on
//    the communication stream, the updates) is simulated beside the stage's last
//    pass (interleaved without replicas: a chunk's beside that chunk's last pass),
//    as the full step runs it.
// Measured against the full rewrite: 33 configurations at 8-64 GPUs within 1%
// (experiments/results/representative/equivalence.md).
// Peak memory per device: the one-micro-batch step's, plus the activations its
// backward reads for each further micro-batch the schedule holds in flight.
#pragma once

#include <string>
#include <vector>

#include "strategies/strategy.h"

namespace aware {

class Evaluator;

struct RepresentativeStage {
  int first_device = 0;         // stage s's devices: s*tp .. s*tp+tp-1 of replica 0
  double forward_us = 0;        // one micro-batch's forward block
  double backward_us = 0;       // its backward block (recomputation included)
  double send_forward_us = 0;   // its activations to the next stage, per micro-batch
  double send_backward_us = 0;  // its gradients to the previous stage, per micro-batch
  double accumulate_us = 0;     // summing the micro-batches' gradients
  double exchange_us = 0;       // the data-parallel ring over the replicas
  double update_us = 0;         // the optimizer updates
  double passes_end_us = 0;     // when its last pass ends in the composed schedule
  double end_us = 0;            // passes_end_us + the tail
  int in_flight = 0;            // most micro-batches whose activations it holds at once
  double activation_bytes = 0;  // per micro-batch held, on its busiest device
  double peak_memory_bytes = 0; // on its fullest device
};

struct RepresentativeResult {
  std::string spec;             // canonical, as the full rewrite names it
  int dp = 1, tp = 1, pp = 1, micro = 1;
  std::string schedule;
  double step_time_us = 0;
  double ideal_us = 0;          // micro x the slowest stage's forward + backward
  double bubble_fraction = 0;   // 1 - ideal / (slowest stage's passes end)
  double global_batch = 0;
  double flops = 0;             // of the whole step, every replica (recomputation included)
  double model_flops = 0;       // the same without recomputation (what MFU counts)
  double peak_memory_bytes = 0; // the fullest device
  double device_memory_bytes = 0;
  bool feasible = true;
  std::string infeasible_reason;
  int devices_used = 0;
  long long ops_simulated = 0;  // op instances the evaluator ran (blocks and the one-micro step)
  long long ops_represented = 0;  // op instances of the full rewrite's step
  std::vector<RepresentativeStage> stages;
  std::vector<std::string> notes;
  // Time in each collective, per device of the busiest stage (not all of it on the
  // step's critical path: collectives overlap compute): the tensor-parallel
  // all-reduces of every micro-batch, the pipeline's sends, the replicas' rings.
  double tensor_parallel_us = 0, pipeline_send_us = 0, data_parallel_us = 0;
};

// The composition on its own: stage s's blocks (its forward and backward pass of
// one micro-batch; its last pass with the step's tail; what runs before its first
// pass), the links between stages (a pass's tensors arrive at the next stage
// offset_us after the pass starts, offset_last_us for the stage's last pass, one
// micro-batch after another busy_us each), run in `schedule`'s order (gpipe,
// 1f1b) over `micro` micro-batches, one pass at a time per stage. ConfigError for
// links that do not join two of the stages or that deadlock the schedule.
struct PipelineBlocks {
  double forward_us = 0, backward_us = 0;
  double last_us = 0;   // the stage's last pass, with whatever follows it in the step
  double setup_us = 0;  // before its first pass
};
struct PipelineLink {
  int from = 0, to = 0;
  bool forward = true;
  double offset_us = 0, offset_last_us = 0, busy_us = 0;
};
struct ComposedSchedule {
  std::vector<double> passes_end_us;  // per stage: its last pass's end, without the tail
  std::vector<double> end_us;         // per stage: with it
  std::vector<int> in_flight;         // per stage: most micro-batches between forward and backward
  double step_us = 0;
};
// With chunks = V > 1 (schedule "interleaved"), blocks and links are per piece:
// piece c is chunk c / P of stage c mod P (P = blocks / V); the results per stage.
ComposedSchedule compose_schedule(const std::vector<PipelineBlocks>& blocks, const std::vector<PipelineLink>& links,
                                  const std::string& schedule, int micro, int chunks = 1);

// Prices `spec` (a 3d spec: 3d:dp=D,tp=T,pp=P[,micro=M][,schedule=gpipe|1f1b|interleaved:V]
// [,zero=0|1|2][,recompute=...][,accumulate=...][,bucket_mb=...][,overlap=...]) on `cluster` by one
// representative pipeline, with `evaluator` (the analytic simulator) for the
// blocks. Throws ConfigError, naming the spec, for other kinds and for what it
// does not represent yet (collectives other than the ring),
// and for everything the full rewrite would refuse.
RepresentativeResult simulate_representative(const OpGraph& graph, const Cluster& cluster,
                                             const std::string& spec, Evaluator& evaluator,
                                             const StrategyContext& context = {});

// The 3-D search by the representative simulation: every (tp, pp, dp) that uses
// the cluster's devices (tp a power of two up to 8, pp dividing the layers), each
// micro-batch size that divides a replica's batch (pp > 1: 1F1B, and each
// interleaved:V of options.interleave where micro-batches and layers divide, with at least pp
// micro-batches), ZeRO-1 or none when dp > 1, and each recomputation, tried one shape (tp, pp) at a time, each
// shape's candidates in order of an estimate (the bound below times the
// pipeline's (m + p - 1)/m for balanced stages), shapes by their likeliest, and
// those a rough count of the first stage's activations says will not fit after
// all the others. Not
// simulated: a candidate whose weights, gradients and optimizer state alone,
// split tp x pp ways, exceed the device's memory, and one whose step bound (every
// FLOP, recomputed ones too, on some device at its efficiency, none idle) is not
// below the best step found. Stops at budget_seconds (0: no limit), listing what
// it did not try.
struct ThreeDSearchOptions {
  std::vector<int> micro_batch_sizes = {1, 2, 4};
  std::vector<std::string> recompute = {"none", "selective", "full"};
  std::vector<int> interleave = {1};  // 1: 1F1B; V > 1: also interleaved:V where it divides (pp > 1)
  double budget_seconds = 0;
};
struct ThreeDCandidate {
  std::string spec;
  std::string status;  // "ok", "oom", "pruned: memory", "pruned: cannot win", "not tried", "error"
  std::string reason;
  double lower_bound_us = 0;  // a step no split of the work can beat
  double estimate_us = 0;     // the order candidates are tried in
  bool likely_oom = false;    // by a rough count of the activations held: tried after the others
  RepresentativeResult result;  // status "ok" or "oom"
  double tflops_per_device = 0, mfu = 0;
};
struct ThreeDSearchResult {
  std::vector<ThreeDCandidate> candidates;  // in the order tried, then the pruned and untried
  int best = -1;                            // the fastest that fits; -1: none
  double seconds = 0;
  int simulated = 0;
};
ThreeDSearchResult search_three_d(const OpGraph& graph, const Cluster& cluster, Evaluator& evaluator,
                                  const ThreeDSearchOptions& options = {});

}  // namespace aware
