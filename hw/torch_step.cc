#include "hw/torch_step.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include <torch/script.h>
#include <torch/torch.h>

#include "core/errors.h"

namespace aware {

namespace {

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// The first tensor in forward()'s result: a tensor, or the first tensor of a
// tuple or list (nested ones are searched in order).
bool first_tensor(const c10::IValue& value, torch::Tensor* out) {
  if (value.isTensor()) {
    *out = value.toTensor();
    return true;
  }
  if (value.isTuple()) {
    for (const c10::IValue& v : value.toTupleRef().elements())
      if (first_tensor(v, out)) return true;
  }
  if (value.isList()) {
    for (const c10::IValue& v : value.toListRef())
      if (first_tensor(v, out)) return true;
  }
  return false;
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::string& name,
                                                        const std::vector<torch::Tensor>& params) {
  // The learning rate is small so the loss falls smoothly; the cost of a step
  // does not depend on it.
  constexpr double kRate = 1e-3;
  if (name == "sgd") return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(kRate));
  if (name == "momentum")
    return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(kRate).momentum(0.9));
  if (name == "rmsprop") return std::make_unique<torch::optim::RMSprop>(params, torch::optim::RMSpropOptions(kRate));
  if (name == "adam") return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(kRate));
  throw ConfigError("--optimizer " + name + ": unknown (sgd, momentum, rmsprop or adam)");
}

}  // namespace

TorchStepResult measure_torch_step(const std::string& path, const TorchStepInputs& inputs,
                                   const TorchStepOptions& options) {
  if (options.repeats < 1 || options.warmup < 0 || options.threads < 1)
    throw ConfigError("measure: repeats must be >= 1, warmup >= 0 and threads >= 1");
  torch::jit::Module module;
  try {
    module = torch::jit::load(path);
  } catch (const std::exception& e) {
    throw ParseError(path + ": not a TorchScript module LibTorch can load (" +
                     std::string(e.what()).substr(0, std::string(e.what()).find('\n')) + ")");
  }
  if (!module.find_method("forward")) throw ParseError(path + ": the module has no forward()");
  const auto& arguments = module.get_method("forward").function().getSchema().arguments();
  TorchStepResult result;
  result.threads = options.threads;
  // LibTorch's thread count is process-wide: put it back however this returns.
  struct Threads {
    int previous = at::get_num_threads();
    explicit Threads(int n) { at::set_num_threads(n); }
    ~Threads() { at::set_num_threads(previous); }
  } threads(options.threads);
  torch::manual_seed(1);
  std::vector<c10::IValue> args;
  for (size_t i = 1; i < arguments.size(); ++i) {
    const std::string& name = arguments[i].name();
    const auto it = inputs.input_shapes.find(name);
    if (it == inputs.input_shapes.end())
      throw ConfigError(path + ": forward() argument '" + name + "' has no shape in a TorchScript file: give --input-shape " +
                        name + "=AxBx...");
    std::vector<std::int64_t> dims = it->second;
    if (inputs.batch > 0 && !dims.empty()) dims[0] = static_cast<std::int64_t>(inputs.batch);
    args.emplace_back(torch::randn(dims));
    std::string shape;
    for (std::int64_t d : dims) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    result.inputs += (result.inputs.empty() ? "" : ", ") + name + "[" + shape + "]";
  }
  module.train();
  std::vector<torch::Tensor> params;
  for (const torch::Tensor& p : module.parameters()) {
    if (!p.requires_grad()) continue;
    params.push_back(p);
    result.parameters += static_cast<double>(p.numel());
  }
  if (params.empty()) throw ParseError(path + ": the module has no trainable parameter: there is no training step");
  const std::unique_ptr<torch::optim::Optimizer> optimizer = make_optimizer(inputs.optimizer, params);

  const auto step = [&]() {
    optimizer->zero_grad();
    c10::IValue out;
    try {
      out = module.forward(args);
    } catch (const std::exception& e) {
      throw ParseError(path + ": forward() fails on inputs " + result.inputs + " (" +
                       std::string(e.what()).substr(0, std::string(e.what()).find('\n')) + ")");
    }
    torch::Tensor y;
    if (!first_tensor(out, &y)) throw ParseError(path + ": forward() returns no tensor to take a loss of");
    torch::Tensor loss = y.to(torch::kFloat).pow(2).mean();
    loss.backward();
    optimizer->step();
    return loss.item<double>();
  };
  for (int i = 0; i < options.warmup + options.repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const double loss = step();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (i == 0) result.first_loss = loss;
    result.last_loss = loss;
    if (i >= options.warmup) result.step_us.push_back(us);
  }
  result.median_us = quantile(result.step_us, 0.5);
  result.iqr_us = quantile(result.step_us, 0.75) - quantile(result.step_us, 0.25);
  return result;
}

}  // namespace aware
