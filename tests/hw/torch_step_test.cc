// The real LibTorch training step (hw/torch_step.h) on the committed fixture
// models: it runs forward, backward and an update (the loss falls on the same
// inputs), it counts the parameters the importer counts, and bad input is one
// clear error naming the file or the argument.
#include <gtest/gtest.h>

#include <string>

#include "core/errors.h"
#include "datasets/torchscript_import.h"
#include "hw/torch_step.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

const std::string kModels = std::string(AWARE_SOURCE_DIR) + "/tests/fixtures/models";

TorchStepInputs shaped(const std::string& name, std::vector<std::int64_t> dims) {
  TorchStepInputs options;
  options.input_shapes[name] = std::move(dims);
  return options;
}

TEST(TorchStep, RunsForwardBackwardAndTheUpdate) {
  const std::string conv = kModels + "/conv_traced.pt";
  const TorchStepInputs options = shaped("x", {4, 3, 16, 16});
  TorchStepOptions steps;
  steps.warmup = 1;
  steps.repeats = 4;
  const TorchStepResult r = measure_torch_step(conv, options, steps);
  ASSERT_EQ(r.step_us.size(), 4u);
  for (double us : r.step_us) EXPECT_GT(us, 0);
  EXPECT_GT(r.median_us, 0);
  EXPECT_GE(r.iqr_us, 0);
  EXPECT_EQ(r.inputs, "x[4,3,16,16]");
  // The same inputs each step: five updates later the loss is lower.
  EXPECT_LT(r.last_loss, r.first_loss);
  // Conv2d(3, 8, 3) + Linear(8, 10): 8*3*3*3 + 8 + 8*10 + 10 = 314, as the importer counts.
  EXPECT_EQ(r.parameters, 314);
  ModelImportReport report;
  ModelImportOptions import_options;
  import_options.input_shapes = options.input_shapes;
  import_torchscript(conv, import_options, &report);
  EXPECT_EQ(report.params, r.parameters);
  // Every optimizer the importer prices runs; --batch replaces the first dimension.
  for (const char* optimizer : {"sgd", "rmsprop", "adam"}) {
    TorchStepInputs o = shaped("input", {2, 16});
    o.optimizer = optimizer;
    o.batch = 8;
    const TorchStepResult mlp = measure_torch_step(kModels + "/mlp_traced.pt", o, steps);
    EXPECT_EQ(mlp.inputs, "input[8,16]") << optimizer;
    EXPECT_LT(mlp.last_loss, mlp.first_loss) << optimizer;
  }
}

TEST(TorchStep, BadInputIsOneErrorNamingTheFileOrTheArgument) {
  const std::string mlp = kModels + "/mlp_traced.pt";
  testing::expect_error<ConfigError>([&] { measure_torch_step(mlp, TorchStepInputs{}); },
                                     {mlp, "'input'", "--input-shape input="});
  testing::expect_error<ParseError>([&] { measure_torch_step(mlp, shaped("input", {2, 7})); },
                                    {mlp, "forward() fails", "input[2,7]"});
  testing::expect_error<ParseError>([&] { measure_torch_step(kModels + "/no_forward.pt", shaped("x", {1})); },
                                    {"no_forward.pt", "no forward()"});
  testing::expect_error<ParseError>([&] { measure_torch_step(kModels + "/mlp.onnx", shaped("x", {1})); },
                                    {"mlp.onnx", "not a TorchScript module"});
  TorchStepInputs bad = shaped("input", {2, 16});
  bad.optimizer = "lion";
  testing::expect_error<ConfigError>([&] { measure_torch_step(mlp, bad); }, {"lion", "sgd, momentum"});
  TorchStepOptions none;
  none.repeats = 0;
  EXPECT_THROW(measure_torch_step(mlp, shaped("input", {2, 16}), none), ConfigError);
}

}  // namespace
}  // namespace aware
