// What the model importer tests share (tests/datasets/onnx_import_test.cc,
// tests/rl/torchscript_import_test.cc): op look-ups and step figures of an
// imported graph, damaged copies of a model file, and the checks that bad files
// and bad command lines fail in one line naming the file. No ONNX or LibTorch
// header here; the files live in AWARE_TEST_TMPDIR (tests/cli/cli_run.h).
#pragma once

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/op_graph.h"
#include "datasets/model_import.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/cli/cli_run.h"

namespace aware::import_checks {

// The first op of `type` in `g`, or null.
inline const Op* find_type(const OpGraph& g, const std::string& type) {
  for (const Op& op : g.ops())
    if (op.type == type) return &op;
  return nullptr;
}

// `report` names `type` as the one op type without a cost rule, and `g` holds
// an op of it costed by the bytes it moves: no FLOPs, some bytes.
inline void expect_costed_by_bytes(const OpGraph& g, const ModelImportReport& report,
                                   const std::string& type) {
  ASSERT_EQ(report.uncosted.size(), 1u);
  EXPECT_EQ(report.uncosted.at(type), 1);
  const Op* op = find_type(g, type);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->flops, 0);
  EXPECT_GT(op->bytes_accessed, 0) << "never free: the bytes it moves";
}

// The FLOPs of the forward ops of `g`.
inline double forward_flops(const OpGraph& g) {
  double f = 0;
  for (const Op& op : g.ops())
    if (op.phase == Phase::kForward) f += op.flops;
  return f;
}

// The analytic step time of `g` in microseconds, every op on device 0 of the
// cluster preset `preset` ("k40x4"). Throws ConfigError for an unknown preset.
inline double one_device_step_us(const OpGraph& g, const std::string& preset) {
  AnalyticSimulator sim;
  return sim
      .evaluate(g, make_cluster_preset(preset),
                Placement(std::vector<int>(static_cast<size_t>(g.num_ops()), 0)))
      .step_time_us;
}

// Writes the first half of the bytes of the file `path` to tmp(name); returns that path.
inline std::string truncated_copy(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string truncated = tmp(name);
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  return truncated;
}

// For each {path, message}: `import(path)` throws an aware::Error whose one-line
// message names the path and contains `message`.
inline void expect_one_line_errors(const std::vector<std::pair<std::string, std::string>>& cases,
                                   const std::function<void(const std::string&)>& import) {
  for (const auto& [path, message] : cases) {
    try {
      import(path);
      ADD_FAILURE() << path;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find(message), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << "one line: " << what;
    }
  }
}

// Runs `aware graph import ARGS -o OUT` (OUT removed first), then `aware graph
// info OUT --json`, and checks what both tests' tiny CNN imported at batch 8
// gives: 762 trainable parameters, batch 8, one Conv2D. Returns the info
// document (null where a command failed); `import_output` gets the import's output.
inline nlohmann::json imported_tiny_cnn_info(const std::string& args, const std::string& out,
                                             std::string* import_output = nullptr) {
  std::remove(out.c_str());
  const Outcome o = run_aware("graph import " + args + " -o " + out);
  if (import_output != nullptr) *import_output = o.output;
  EXPECT_EQ(o.exit_code, 0) << o.output;
  if (o.exit_code != 0) return nullptr;
  const Outcome info = run_aware("graph info " + out + " --json", true);
  EXPECT_EQ(info.exit_code, 0) << info.output;
  if (info.exit_code != 0) return nullptr;
  const auto doc = nlohmann::json::parse(info.output);
  EXPECT_EQ(doc["trainable_params"], 762);
  EXPECT_EQ(doc["batch"], 8);
  EXPECT_EQ(doc["forward_op_types"]["Conv2D"], 1);
  return doc;
}

// For each command line: `aware ARGS` exits non-zero with an "error:" line and
// leaves no file at `out` (the -o of the command lines).
inline void expect_cli_refuses(const std::vector<std::string>& command_lines,
                               const std::string& out) {
  for (const std::string& args : command_lines) {
    const Outcome bad = run_aware(args);
    EXPECT_NE(bad.exit_code, 0) << args;
    EXPECT_TRUE(contains(bad.output, "error:")) << bad.output;
    EXPECT_FALSE(std::ifstream(out).good()) << args;
  }
}

}  // namespace aware::import_checks
