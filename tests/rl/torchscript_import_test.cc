// TorchScript import: modules compiled here from TorchScript source (no Python)
// and saved, then imported: a tiny CNN by hand, torchvision's ResNet-50
// structure through TorchScript and through ONNX (where libonnx-dev is found)
// op for op, and bad files and options in one line.
#include <torch/script.h>
#include <torch/serialize.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/cluster.h"
#include "core/errors.h"
#include "datasets/torchscript_import.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/cli/cli_run.h"
#include "tests/datasets/import_checks.h"
#ifdef AWARE_TEST_HAVE_ONNX
#include "datasets/onnx_import.h"
#include "tests/datasets/onnx_models.h"
#endif

namespace aware {
namespace {
using namespace import_checks;

// A module with the given parameters (zeros) and buffers, and TorchScript source.
struct ModuleSpec {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> params, buffers;
  std::string source;
};

std::string save_module(const ModuleSpec& spec, const std::string& file) {
  torch::jit::Module m("__torch__.Net");
  for (const auto& [name, dims] : spec.params) m.register_parameter(name, torch::zeros(dims), false);
  for (const auto& [name, dims] : spec.buffers) m.register_buffer(name, torch::ones(dims));
  m.define(spec.source);
  const std::string path = tmp(file);
  m.save(path);
  return path;
}

// x [N,3,8,8] -> conv 4x3x3x3 (+bias, pad 1) -> relu -> max pool 2 -> flatten -> linear 10x64 (+bias):
// the ONNX tests' tiny CNN.
std::string tiny_cnn(const std::string& file) {
  ModuleSpec s;
  s.params = {{"conv_w", {4, 3, 3, 3}}, {"conv_b", {4}}, {"fc_w", {10, 64}}, {"fc_b", {10}}};
  s.source = R"(
def forward(self, x):
    c = torch.conv2d(x, self.conv_w, self.conv_b, [1, 1], [1, 1])
    r = torch.relu(c)
    p = torch.max_pool2d(r, [2, 2], [2, 2])
    f = torch.flatten(p, 1)
    return torch.linear(f, self.fc_w, self.fc_b)
)";
  return save_module(s, file);
}

TEST(TorchScriptImport, TinyCnnByHand) {
  ModelImportOptions options;
  options.input_shapes["x"] = {8, 3, 8, 8};
  ModelImportReport report;
  const OpGraph g = import_torchscript(tiny_cnn("tiny.pt"), options, &report);
  EXPECT_NO_THROW(g.validate());
  EXPECT_DOUBLE_EQ(report.params, 4 * 3 * 3 * 3 + 4 + 10 * 64 + 10);
  EXPECT_DOUBLE_EQ(g.batch(), 8);
  ASSERT_NE(find_type(g, "Conv2D"), nullptr);
  EXPECT_DOUBLE_EQ(find_type(g, "Conv2D")->flops, 8 * (2 * 256 * 27 + 256));
  ASSERT_NE(find_type(g, "MaxPool"), nullptr);
  EXPECT_DOUBLE_EQ(find_type(g, "MaxPool")->flops, 8 * 64 * 4);
  ASSERT_NE(find_type(g, "MatMul"), nullptr);
  EXPECT_DOUBLE_EQ(find_type(g, "MatMul")->flops, 8 * (2 * 10 * 64 + 10));
  EXPECT_NE(find_type(g, "Conv2DBackpropFilter"), nullptr);
  int updates = 0;
  for (const Op& op : g.ops()) updates += op.type == "ApplyMomentum";
  EXPECT_EQ(updates, 4);
  EXPECT_TRUE(report.uncosted.empty());
  ASSERT_EQ(report.data_inputs.size(), 1u);
  EXPECT_EQ(report.data_inputs[0], "x[8,3,8,8]");
  EXPECT_GT(one_device_step_us(g, "k40x2"), 0);
  // --batch and --input-shape for the same input must agree on its first
  // dimension (issue 39: a contradiction was settled silently).
  options.batch = 8;
  EXPECT_DOUBLE_EQ(import_torchscript(tmp("tiny.pt"), options).batch(), 8);
  options.batch = 2;
  EXPECT_THROW(import_torchscript(tmp("tiny.pt"), options), ConfigError);
}

TEST(TorchScriptImport, BuffersAreNotParametersAndUnknownOpsAreListed) {
  ModuleSpec s;
  s.params = {{"w", {4, 4, 1, 1}}, {"gamma", {4}}, {"beta", {4}}};
  s.buffers = {{"mean", {4}}, {"var", {4}}};
  s.source = R"(
def forward(self, x):
    c = torch.conv2d(x, self.w)
    n = torch.batch_norm(c, self.gamma, self.beta, self.mean, self.var, False, 0.1, 0.00001, True)
    return torch.cumsum(n, 1)
)";
  ModelImportReport report;
  ModelImportOptions options;
  options.input_shapes["x"] = {2, 4, 6, 6};
  const OpGraph g = import_torchscript(save_module(s, "bn-cumsum.pt"), options, &report);
  EXPECT_DOUBLE_EQ(report.params, 16 + 4 + 4) << "running mean and variance are buffers";
  ASSERT_NE(find_type(g, "FusedBatchNorm"), nullptr);
  expect_costed_by_bytes(g, report, "aten::cumsum");
}

TEST(TorchScriptImport, AnLstmIsCostedAsOneRecurrence) {
  // x [T=5, B=2, I=6] through one LSTM layer of H=8: 2*T*B*4H*(I+H) + 10*T*B*4H FLOPs.
  ModuleSpec s;
  s.params = {{"w_ih", {32, 6}}, {"w_hh", {32, 8}}, {"b_ih", {32}}, {"b_hh", {32}}};
  s.source = R"(
def forward(self, x):
    y, h, c = torch.lstm(x, [torch.zeros([1, 2, 8]), torch.zeros([1, 2, 8])], [self.w_ih, self.w_hh, self.b_ih, self.b_hh], True, 1, 0.0, False, False, False)
    return y
)";
  ModelImportOptions options;
  options.input_shapes["x"] = {5, 2, 6};
  ModelImportReport report;
  const OpGraph g = import_torchscript(save_module(s, "lstm.pt"), options, &report);
  EXPECT_TRUE(report.uncosted.empty());
  EXPECT_DOUBLE_EQ(report.params, 32 * 6 + 32 * 8 + 32 + 32);
  const Op* lstm = find_type(g, "LSTM");
  ASSERT_NE(lstm, nullptr);
  EXPECT_DOUBLE_EQ(lstm->flops, 2 * 5 * 2 * 32 * (6 + 8) + 10 * 5 * 2 * 32);
  ASSERT_NE(find_type(g, "LSTMGradWeights"), nullptr);
#ifdef AWARE_TEST_HAVE_ONNX
  // The same layer as ONNX writes it (W [1, 4H, I], R [1, 4H, H], B [1, 8H]).
  test_models::Maker m;
  m.input("x", {5, 2, 6});
  m.weight("W", {1, 32, 6}, true);
  m.weight("R", {1, 32, 8}, true);
  m.weight("B", {1, 64}, true);
  auto* node = m.node("LSTM", {"x", "W", "R", "B"}, {"y"}, "lstm");
  test_models::Maker::integer(node, "hidden_size", 8);
  m.output("y", 4);
  ModelImportReport onnx_report;
  const OpGraph o = import_onnx(m.write("lstm.onnx"), {}, &onnx_report);
  EXPECT_EQ(onnx_report.params, report.params);
  ASSERT_NE(find_type(o, "LSTM"), nullptr);
  EXPECT_DOUBLE_EQ(find_type(o, "LSTM")->flops, lstm->flops);
#endif
}

// torchvision's ResNet-50 (v1.5) as straight-line TorchScript, the same layers
// as the ONNX tests' resnet50().
std::string resnet50_torchscript(const std::string& file) {
  ModuleSpec s;
  std::string body = "def forward(self, x):\n";
  int id = 0;
  const auto conv = [&](const std::string& x, std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride) {
    const std::string n = "conv" + std::to_string(id++);
    s.params.push_back({n + "_w", {out, in, k, k}});
    s.params.push_back({n + "_g", {out}});
    s.params.push_back({n + "_b", {out}});
    s.buffers.push_back({n + "_m", {out}});
    s.buffers.push_back({n + "_v", {out}});
    const std::string st = std::to_string(stride), pad = std::to_string(k / 2);
    body += "    " + n + " = torch.conv2d(" + x + ", self." + n + "_w, None, [" + st + ", " + st + "], [" + pad + ", " +
            pad + "])\n";
    body += "    " + n + " = torch.batch_norm(" + n + ", self." + n + "_g, self." + n + "_b, self." + n + "_m, self." +
            n + "_v, False, 0.1, 0.00001, True)\n";
    return n;
  };
  const auto relu = [&](const std::string& x) {
    body += "    " + x + " = torch.relu(" + x + ")\n";
    return x;
  };
  std::string x = relu(conv("x", 3, 64, 7, 2));
  body += "    pool = torch.max_pool2d(" + x + ", [3, 3], [2, 2], [1, 1])\n";
  x = "pool";
  std::int64_t in = 64;
  const int blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t planes = 64 << stage;
    for (int i = 0; i < blocks[stage]; ++i) {
      const std::int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
      const std::string a = relu(conv(x, in, planes, 1, 1));
      const std::string b = relu(conv(a, planes, planes, 3, stride));
      const std::string c = conv(b, planes, planes * 4, 1, 1);
      const std::string shortcut = i == 0 ? conv(x, in, planes * 4, 1, stride) : x;
      const std::string sum = "add" + std::to_string(id++);
      body += "    " + sum + " = torch.add(" + c + ", " + shortcut + ")\n";
      x = relu(sum);
      in = planes * 4;
    }
  }
  s.params.push_back({"fc_w", {1000, 2048}});
  s.params.push_back({"fc_b", {1000}});
  body += "    gap = torch.adaptive_avg_pool2d(" + x + ", [1, 1])\n";
  body += "    return torch.linear(torch.flatten(gap, 1), self.fc_w, self.fc_b)\n";
  s.source = body;
  return save_module(s, file);
}

TEST(TorchScriptImport, ResNet50HasTorchvisionsParameterCount) {
  ModelImportOptions options;
  options.input_shapes["x"] = {2, 3, 224, 224};  // batch 2 keeps the shape run short
  ModelImportReport report;
  const OpGraph g = import_torchscript(resnet50_torchscript("resnet50.pt"), options, &report);
  EXPECT_DOUBLE_EQ(report.params, 25557032) << "torchvision's parameter count";
  EXPECT_TRUE(report.uncosted.empty());
  // 53 convolutions, 53 batch norms, 49 ReLUs, 16 adds, a pool, a global pool, a linear.
  int convs = 0, norms = 0;
  for (const Op& op : g.ops()) {
    convs += op.type == "Conv2D";
    norms += op.type == "FusedBatchNorm";
  }
  EXPECT_EQ(convs, 53);
  EXPECT_EQ(norms, 53);
  std::printf("ResNet-50 from TorchScript: %.3f GFLOP forward per sample, %d ops\n", forward_flops(g) / 2e9, g.num_ops());
#ifdef AWARE_TEST_HAVE_ONNX
  // The ONNX route to the same network: the same step, op for op.
  ModelImportOptions onnx_options;
  onnx_options.batch = 2;
  ModelImportReport onnx_report;
  const OpGraph o = import_onnx(test_models::resnet50("resnet50-for-ts.onnx"), onnx_options, &onnx_report);
  EXPECT_EQ(onnx_report.params, report.params);
  EXPECT_EQ(o.num_ops(), g.num_ops());
  EXPECT_EQ(o.num_edges(), g.num_edges());
  EXPECT_DOUBLE_EQ(o.total_flops(), g.total_flops());
  EXPECT_DOUBLE_EQ(o.total_param_bytes(), g.total_param_bytes());
  EXPECT_NEAR(one_device_step_us(o, "k40x4"), one_device_step_us(g, "k40x4"), 1e-6 * one_device_step_us(o, "k40x4"));
#else
  GTEST_SKIP() << "no ONNX reader in this build: the two routes are not compared";
#endif
}

TEST(TorchScriptImport, BadFilesAndOptionsAreOneLineErrorsNamingTheFile) {
  const std::string good = tiny_cnn("tiny-bad.pt");
  const std::string truncated = truncated_copy(good, "truncated.pt");
  const std::string garbage = tmp("garbage.pt");
  std::ofstream(garbage, std::ios::binary) << "not a zip archive \x01\x02";
  const std::string tensor_file = tmp("tensor.pt");
  torch::save(torch::ones({3}), tensor_file);  // an archive, but no module with forward()
  ModuleSpec frozen;
  frozen.source = "def forward(self, x):\n    return torch.relu(x)\n";
  ModuleSpec branchy;
  branchy.params = {{"w", {2, 2}}};
  branchy.source = R"(
def forward(self, x):
    if bool(x.sum() > 0):
        x = torch.matmul(x, self.w)
    return x
)";
  ModelImportOptions options;
  options.input_shapes["x"] = {2, 2};
  expect_one_line_errors({{truncated, "is corrupt or not a torch archive"},
                          {garbage, "is corrupt or not a torch archive"},
                          {tensor_file, "forward()"},
                          {save_module(frozen, "frozen.pt"), "no trainable parameters"},
                          {save_module(branchy, "branchy.pt"), "control flow"},
                          {tmp("no-such.pt"), "cannot be read"}},
                         [&](const std::string& path) { import_torchscript(path, options); });
  // Shapes: none given, a name forward() does not take, the wrong channels.
  const auto error_of = [&](const ModelImportOptions& o) -> std::string {
    try {
      import_torchscript(good, o);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of({}).find("forward() argument 'x' has no shape in a TorchScript file: give --input-shape x="),
            std::string::npos);
  ModelImportOptions named;
  named.input_shapes["images"] = {1, 3, 8, 8};
  EXPECT_NE(error_of(named).find("no forward() argument of that name (its arguments: x)"), std::string::npos);
  ModelImportOptions channels;
  channels.input_shapes["x"] = {1, 5, 8, 8};
  const std::string wrong = error_of(channels);
  EXPECT_NE(wrong.find("forward() fails on zero inputs"), std::string::npos) << wrong;
  EXPECT_EQ(wrong.find('\n'), std::string::npos) << wrong;
}

TEST(TorchScriptImport, TheCommandWritesAGraphAndInfoReadsIt) {
  const std::string model = tiny_cnn("cli-tiny.pt");
  std::string import_output;
  ASSERT_FALSE(imported_tiny_cnn_info(model + " --input-shape x=8x3x8x8", tmp("cli-tiny-ts.json"),
                                      &import_output)
                   .is_null());
  EXPECT_TRUE(contains(import_output, "762 trainable parameters")) << import_output;
  const std::string bad_out = tmp("cli-bad-ts.json");
  std::remove(bad_out.c_str());
  expect_cli_refuses(
      {"graph import " + model + " -o " + bad_out,
       "graph import " + tmp("no-such.pt") + " --input-shape x=1x3x8x8 -o " + bad_out},
      bad_out);
}

}  // namespace
}  // namespace aware
