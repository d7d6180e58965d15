// The real training step as a framework runs it: a TorchScript module's forward,
// LibTorch's own autograd backward and a torch::optim update, timed on this
// machine's CPU. The ground truth that `aware measure` sets beside the cpu
// executor's measured step and the simulators' prediction for the graph the
// importer makes of the same file (datasets/torchscript_import.h).
//
// What the step is: the module in training mode; every tensor argument of
// forward() a float tensor of the shape given (normal(0, 1), fixed seed; an
// argument the importer fed integer zeros is fed integer zeros here too); the
// loss the mean of the squares of forward()'s first tensor output (a tuple or
// list: its first tensor); then loss.backward() and one step of the optimizer the
// importer priced (sgd, momentum 0.9, rmsprop, adam; learning rate 1e-3). The
// same inputs every step, so the loss falls from step to step: that is how a
// test knows the update ran.
//
// Built with LibTorch (AWARE_WITH_TORCH); the header is torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aware {

// forward()'s inputs as the importers take them (datasets/model_import.h's
// ModelImportOptions, which hw/ may not include): each argument's shape, a batch
// that replaces the first dimension (0: keep), the optimizer.
struct TorchStepInputs {
  double batch = 0;
  std::map<std::string, std::vector<std::int64_t>> input_shapes;
  std::string optimizer = "momentum";
};

struct TorchStepOptions {
  int warmup = 1;
  int repeats = 5;
  int threads = 1;  // LibTorch's intra-op threads (the cpu executor runs an op on one core)
};

struct TorchStepResult {
  std::vector<double> step_us;   // each timed step
  double median_us = 0;
  double iqr_us = 0;
  double first_loss = 0;         // the loss of the first step (warm-up included)
  double last_loss = 0;          // and of the last
  double parameters = 0;         // trainable elements
  int threads = 1;
  std::string inputs;            // "x[8,3,32,32]"
};

// Throws ParseError naming `path` for a file that is not a module with forward(),
// a forward() that fails on the inputs or returns no tensor; ConfigError for a
// missing --input-shape, an unknown optimizer or bad options.
TorchStepResult measure_torch_step(const std::string& path, const TorchStepInputs& inputs,
                                   const TorchStepOptions& options = {});

}  // namespace aware
