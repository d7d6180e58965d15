// Data-parallel training on the threads of one process: the trainer's
// ParallelTraining (trainer.h) with threads as its "processes", so that one
// machine's cores play an update's episodes together. Torch-free.
#pragma once

#include <memory>
#include <string>

#include "agents/rl/trainer.h"

namespace aware::rl {

// Trains `agent` on `workers` threads: each runs the trainer with its own clone
// of `evaluator` (worker 0 with `evaluator` itself), plays its share of every
// update's episodes with its own sampling seed and its share of the budget, and
// the gradients are averaged before every step (trainer.h, ParallelTraining).
// Worker 0 alone reports progress and writes the curve, checkpoints and policy.
// The result is worker 0's, with the best placement over all workers and the
// evaluations and episodes of all. One worker: train_agent itself. The same
// seed and worker count give the same run. An error in one worker ends them all
// and is rethrown here.
TrainResult train_agent_workers(const std::string& agent, const OpGraph& graph, const Cluster& cluster,
                                Evaluator& evaluator, const TrainOptions& options, int workers);

}  // namespace aware::rl
