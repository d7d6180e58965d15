// Issue 39's rows as regression tests: the binary run as a new user would run it.
//
// The model importers (`aware graph import`) on the small models of
// tests/fixtures/models/: the committed files, and the same files made afresh
// by make_models.py where Debian's python3-torch is installed. TorchScript
// checks skip where the binary has no TorchScript reader (built without
// LibTorch), ONNX checks where it has no ONNX reader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli_run.h"

namespace {

const std::string kFixtures = std::string(AWARE_SOURCE_DIR) + "/tests/fixtures/models";

// ctest runs each test in its own process, several at once: every scratch file
// and the fresh model folder carry the process id, so that one test's
// remove_all never pulls files from under another.
std::string scratch(const std::string& name) { return tmp(std::to_string(::getpid()) + "-" + name); }

// The folders holding the model files: the fixtures, then a fresh set when
// torch imports. `error` is set when torch imports but the script fails.
struct ModelDirs {
  std::vector<std::string> dirs{kFixtures};
  std::string error;
};

const ModelDirs& model_dirs() {
  static const ModelDirs made = [] {
    ModelDirs d;
    if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) return d;
    const std::string fresh = scratch("import-models");
    std::filesystem::remove_all(fresh);
    const std::string log = scratch("import-models.log");
    const std::string cmd =
        "/usr/bin/python3 " + kFixtures + "/make_models.py " + fresh + " >" + log + " 2>&1";
    if (std::system(cmd.c_str()) == 0) {
      d.dirs.push_back(fresh);
    } else {
      std::ifstream in(log);
      d.error = "make_models.py failed: " + std::string(std::istreambuf_iterator<char>(in), {});
    }
    return d;
  }();
  return made;
}

// Whether the binary reads `extension` models at all (a build without LibTorch
// or libonnx says so in one line).
bool reads(const std::string& model, const std::string& args) {
  const Outcome run =
      aware("graph import " + model + " " + args + " -o " + scratch("import-probe.json"));
  return !contains(run.output, "this build has no");
}

#define SKIP_WITHOUT_TORCHSCRIPT()                                      \
  if (!reads(kFixtures + "/mlp_traced.pt", "--input-shape input=2x16")) \
  GTEST_SKIP() << "this aware has no TorchScript reader (built without LibTorch)"
#define SKIP_WITHOUT_ONNX()                                                                   \
  if (!reads(kFixtures + "/mlp.onnx", "--batch 2")) GTEST_SKIP() << "this aware has no ONNX " \
                                                                    "reader"

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \n");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \n") - begin + 1);
}

// `graph import ARGS` fails with one `error:` line holding every part, the file
// named, no LibTorch backtrace, and no output file.
void expect_import_error(const std::string& model, const std::string& args,
                         const std::vector<std::string>& parts,
                         const std::vector<std::string>& absent = {}) {
  const std::string out = scratch("import-error.json");
  std::filesystem::remove(out);
  const Outcome run = aware("graph import " + model + " " + args + " -o " + out);
  const std::string text = trimmed(run.output);
  SCOPED_TRACE("graph import " + model + " " + args);
  EXPECT_GT(run.exit_code, 0) << "a crash (signal) or success: " << run.output;
  EXPECT_EQ(text.rfind("error: ", 0), 0u) << run.output;
  EXPECT_EQ(text.find('\n'), std::string::npos) << "more than one line: " << run.output;
  EXPECT_TRUE(contains(text, std::filesystem::path(model).filename().string())) << run.output;
  for (const std::string& part : parts)
    EXPECT_TRUE(contains(text, part)) << "no '" << part << "' in: " << run.output;
  for (const std::string& part : absent)
    EXPECT_FALSE(contains(text, part)) << "'" << part << "' in: " << run.output;
  EXPECT_FALSE(contains(text, "frame #")) << run.output;
  EXPECT_FALSE(contains(text, "Exception raised from")) << run.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// `graph import ARGS` succeeds, writes the graph and reports `inputs`.
void expect_import(const std::string& model, const std::string& args, const std::string& inputs) {
  const std::string out = scratch("import-ok.json");
  std::filesystem::remove(out);
  const Outcome run = aware("graph import " + model + " " + args + " -o " + out);
  SCOPED_TRACE("graph import " + model + " " + args);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "inputs " + inputs)) << run.output;
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST(ImportInput, FixturesAreMadeWhereTorchIsInstalled) {
  EXPECT_EQ(model_dirs().error, "");
  for (const std::string& dir : model_dirs().dirs)
    for (const char* name : {"mlp_traced.pt", "conv_traced.pt", "no_forward.pt", "mlp.onnx",
                             "loop.onnx", "weird.onnx"})
      EXPECT_TRUE(std::filesystem::exists(dir + "/" + name)) << dir << "/" << name;
}

// Row: a wrong --input-shape crashed (139) in the TorchScript importer's shape
// run: freezing leaves call stacks pointing at deleted methods, which LibTorch
// read to format the failure. Now one line naming the node and the shapes.
TEST(ImportInput, TorchScriptShapeRunFailureNamesTheNode) {
  SKIP_WITHOUT_TORCHSCRIPT();
  for (const std::string& dir : model_dirs().dirs) {
    const std::string conv = dir + "/conv_traced.pt", mlp = dir + "/mlp_traced.pt";
    expect_import_error(conv, "--input-shape x=1x3x1x1",
                        {"(aten::_convolution)", "forward() fails on zero inputs",
                         "Kernel size can't be greater", "[1,3,1,1], [8,3,3,3]"});
    expect_import_error(conv, "--input-shape x=1x5x32x32",
                        {"(aten::_convolution)", "to have 3 channels, but got 5 channels",
                         "[1,5,32,32], [8,3,3,3]"});
    expect_import_error(mlp, "--input-shape input=2x17",
                        {"(aten::linear)", "(2x17 and 16x32)", "[2,17], [32,16]"});
    // Wrong ranks, and the importer still takes the right shapes afterwards.
    expect_import_error(conv, "--input-shape x=32",
                        {"(aten::_convolution)", "1-dimensional input"});
    expect_import_error(conv, "--input-shape x=2x1x3x32x32",
                        {"(aten::_convolution)", "5-dimensional input"});
    expect_import(conv, "--input-shape x=1x3x32x32", "x[1,3,32,32]");
    expect_import(mlp, "--input-shape input=2x16", "input[2,16]");
  }
}

// Row: 99999999999x99999999999 reached LibTorch and came back as a 30-line c10
// backtrace (exit 2). Both importers refuse it before any work.
TEST(ImportInput, AbsurdInputShapesAreRefusedUpFront) {
  const std::string absurd = "99999999999x99999999999";
  if (reads(kFixtures + "/mlp_traced.pt", "--input-shape input=2x16"))
    expect_import_error(kFixtures + "/mlp_traced.pt", "--input-shape input=" + absurd,
                        {"input 'input' " + absurd, "2^31"});
  if (reads(kFixtures + "/mlp.onnx", "--batch 2")) {
    expect_import_error(kFixtures + "/mlp.onnx", "--input-shape x=" + absurd,
                        {"input 'x' " + absurd, "2^31"});
    // Just past the limit (2^31 + 16 elements), and just under it: refused only past it.
    expect_import_error(kFixtures + "/mlp.onnx", "--input-shape x=134217729x16",
                        {"2147483664 elements", "2^31"});
  }
}

// Row: a wrong TorchScript file of any kind is one line, never a crash.
TEST(ImportInput, BadTorchScriptFilesAreOneLine) {
  SKIP_WITHOUT_TORCHSCRIPT();
  const std::string empty = scratch("import-empty.pt");
  write(empty, "");
  const std::string text = scratch("import-text.pt");
  write(text, "not a model\n");
  const std::string truncated = scratch("import-truncated.pt");
  {
    std::ifstream in(kFixtures + "/mlp_traced.pt", std::ios::binary);
    const std::string bytes(std::istreambuf_iterator<char>(in), {});
    std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  const std::string onnx_as_pt = scratch("import-onnx-as.pt");
  std::filesystem::copy_file(kFixtures + "/mlp.onnx", onnx_as_pt,
                             std::filesystem::copy_options::overwrite_existing);
  for (const std::string& bad : {empty, text, truncated, onnx_as_pt})
    expect_import_error(bad, "--input-shape input=2x16", {"corrupt or not a torch archive"});
  for (const std::string& dir : model_dirs().dirs) {
    expect_import_error(dir + "/no_forward.pt", "--input-shape x=2x4", {"no forward() method"});
    expect_import_error(dir + "/mlp_traced.pt", "--input-shape x=2x16",
                        {"no forward() argument of that name", "input"});
    expect_import_error(dir + "/mlp_traced.pt", "", {"forward() argument 'input' has no shape"});
  }
}

// Row: loop.onnx and weird.onnx said "give --batch or --input-shape" for sizes
// that depend on the data. Now they say so and name the node; the advice stays
// for an input's own free dimension.
TEST(ImportInput, DataDependentShapesNameTheirNode) {
  SKIP_WITHOUT_ONNX();
  for (const std::string& dir : model_dirs().dirs) {
    expect_import_error(dir + "/loop.onnx", "", {"node '/Loop' (Loop)", "depends on the data"},
                        {"--batch", "--input-shape"});
    expect_import_error(dir + "/loop.onnx", "--input-shape x=4x4",
                        {"node '/Loop' (Loop)", "depends on the data"}, {"--batch"});
    // Einsum gets its size from the equation; the NonZero is what has none.
    expect_import_error(dir + "/weird.onnx", "--input-shape x=4x4",
                        {"(NonZero)", "depends on the data"},
                        {"--batch", "--input-shape", "Einsum"});
    expect_import_error(
        dir + "/mlp.onnx", "",
        {"input 'x' has a dynamic dimension 0", "give --batch N or --input-shape x="});
  }
}

// Row: mlp.onnx --input-shape x=2x17 imported a Gemm with k = 17 against a
// 16x32 weight. Now refused naming the node and both shapes; the TorchScript
// twin fails in its shape run (TorchScriptShapeRunFailureNamesTheNode).
TEST(ImportInput, OnnxWeightThatDoesNotFitItsInputIsRefused) {
  SKIP_WITHOUT_ONNX();
  for (const std::string& dir : model_dirs().dirs) {
    expect_import_error(dir + "/mlp.onnx", "--input-shape x=2x17",
                        {"(Gemm)", "inner dimensions differ: 17", "input [2,17]", "[32,16]"});
    expect_import(dir + "/mlp.onnx", "--input-shape x=2x16", "x[2,16]");
  }
}

// Row: --batch 4 --input-shape x=8x16 imported batch 8 without a word (ONNX;
// TorchScript took 4). Both importers refuse a disagreement and take agreement.
TEST(ImportInput, BatchAndInputShapeMustAgree) {
  if (reads(kFixtures + "/mlp.onnx", "--batch 2")) {
    expect_import_error(kFixtures + "/mlp.onnx", "--batch 4 --input-shape x=8x16",
                        {"--batch 4 and --input-shape x=8x16 disagree", "(4 vs 8)"});
    expect_import(kFixtures + "/mlp.onnx", "--batch 8 --input-shape x=8x16", "x[8,16]");
    expect_import(kFixtures + "/mlp.onnx", "--batch 4", "x[4,16]");
  }
  if (reads(kFixtures + "/mlp_traced.pt", "--input-shape input=2x16")) {
    expect_import_error(kFixtures + "/mlp_traced.pt", "--batch 4 --input-shape input=8x16",
                        {"--batch 4 and --input-shape input=8x16 disagree"});
    expect_import(kFixtures + "/mlp_traced.pt", "--batch 8 --input-shape input=8x16",
                  "input[8,16]");
  }
}

}  // namespace
