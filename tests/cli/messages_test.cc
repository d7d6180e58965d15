// Issue 39's general rows: how errors are printed, `aware list`, the help texts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace {

TEST(CliMessages, ErrorIsOneLineWithoutBlankLineBeforeIt) {
  const Outcome r = aware("graph info " + tmp("no-such-graph.json"));
  EXPECT_EQ(r.exit_code, 1);
  // The first byte is the message itself: no blank line "in case a progress line was open".
  EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << r.output;
  EXPECT_TRUE(contains(r.output, "no-such-graph.json")) << r.output;
}

TEST(CliMessages, JsonErrorsAreJsonOnStdout) {
  const Outcome r = aware("graph info " + tmp("no-such-graph.json") + " --json", /*stdout_only=*/true);
  EXPECT_EQ(r.exit_code, 1);
  const nlohmann::json doc = nlohmann::json::parse(r.output);  // throws (fails) on anything else
  ASSERT_TRUE(doc.contains("error")) << r.output;
  EXPECT_TRUE(contains(doc["error"].get<std::string>(), "no-such-graph.json"));
  // A parse error of the command line too.
  const Outcome p = aware("simulate --json", /*stdout_only=*/true);
  EXPECT_NE(p.exit_code, 0);
  EXPECT_TRUE(nlohmann::json::parse(p.output).contains("error")) << p.output;
  // An unknown command.
  const Outcome u = aware("simulat --json", /*stdout_only=*/true);
  EXPECT_EQ(u.exit_code, 1);
  EXPECT_TRUE(contains(nlohmann::json::parse(u.output).at("error").get<std::string>(), "simulat"));
}

TEST(CliMessages, ListWithoutKindPrintsEveryKind) {
  const Outcome r = aware("list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* kind : {"evaluators", "placers", "agents", "strategies", "clusters", "models", "plugins"})
    EXPECT_TRUE(contains(r.output, std::string("== ") + kind)) << kind;
  const Outcome j = aware("list --json", true);
  ASSERT_EQ(j.exit_code, 0);
  const nlohmann::json doc = nlohmann::json::parse(j.output);
  EXPECT_EQ(doc.size(), 7u);
  EXPECT_FALSE(doc.at("placers").empty());
}

TEST(CliMessages, ListStrategiesClustersModels) {
  const Outcome s = aware("list strategies");
  ASSERT_EQ(s.exit_code, 0) << s.output;
  EXPECT_TRUE(contains(s.output, "dp\n")) << s.output;
  EXPECT_TRUE(contains(s.output, "pipeline")) << s.output;
  const Outcome c = aware("list clusters");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_TRUE(contains(c.output, "preset:k40x4\n    4 devices, K40")) << c.output;
  const Outcome m = aware("list models");
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_TRUE(contains(m.output, "zoo:resnet50\n    keys: batch, image_size")) << m.output;
  EXPECT_TRUE(contains(m.output, "family:cifar10:SEED")) << m.output;
  const Outcome bad = aware("list everything");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(contains(bad.output, "unknown kind 'everything'")) << bad.output;
  EXPECT_TRUE(contains(bad.output, "models")) << bad.output;
}

TEST(CliMessages, GraphHelpNamesTheZooInsteadOfItself) {
  const Outcome r = aware("graph info --help");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_FALSE(contains(r.output, "(aware graph info --help)")) << r.output;
  for (const char* model : {"inception_v3", "resnet50", "nmt4", "gnmt", "rnnlm", "transformer"})
    EXPECT_TRUE(contains(r.output, model)) << model;
}


TEST(CliMessages, OutputFolderIsNotCreatedAtTheTopOfTheFileSystem) {
  const std::string top = "/aware-no-such-top-folder-39";
  const Outcome r = aware("graph build --model resnet50 -o " + top + "/dir/g.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "no such folder '" + top + "/dir'")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(top));
  // The commands that write a folder of files follow the same rule.
  for (const std::string& cmd :
       {std::string("strategy apply --graph zoo:resnet50:batch=2,image_size=32 --cluster preset:k40x2 --strategy dp:2 -o "),
        std::string("reproduce --budget smoke --only compare -o ")}) {
    const Outcome dir = aware(cmd + top + "/run");
    EXPECT_EQ(dir.exit_code, 1) << cmd;
    EXPECT_TRUE(contains(dir.output, "no such folder '" + top + "/run'")) << dir.output;
    EXPECT_FALSE(std::filesystem::exists(top)) << cmd;
  }
  // Below a folder that exists, missing folders are made as before.
  std::filesystem::remove_all(tmp("made-39"));
  const Outcome ok = aware("graph build --model resnet50 -o " + tmp("made-39/sub/g.json"));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_TRUE(std::filesystem::exists(tmp("made-39/sub/g.json")));
  // A file where a folder should be.
  write(tmp("plain-file-39"), "x");
  const Outcome file = aware("graph build --model resnet50 -o " + tmp("plain-file-39/g.json"));
  EXPECT_EQ(file.exit_code, 1);
  EXPECT_TRUE(contains(file.output, "exists and is not a folder")) << file.output;
}

TEST(CliMessages, InfeasibleStepSaysWhyInText) {
  write(tmp("huge-params-39.json"), R"({"format":"aware-graph","version":1,"name":"big","ops":[
    {"name":"a","type":"MatMul","flops":1e9,"output_bytes":[1e6],"param_bytes":1e15},
    {"name":"b","type":"MatMul","flops":1e9,"output_bytes":[1e6]}],"edges":[{"src":"a","dst":"b"}]})");
  const Outcome r = aware("simulate --graph " + tmp("huge-params-39.json") + " --cluster preset:k40x2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "(INFEASIBLE)")) << r.output;
  EXPECT_TRUE(contains(r.output, "infeasible     device 'gpu0' out of memory at op 'a': needs 1000000.000 GB, has 12.000 GB"))
      << r.output;
}


bool has_command(const std::string& name) { return aware(name + " --help").exit_code == 0; }

TEST(CliMessages, CalibrateRefusesDeviceCountsBelowOneAndOtherDevices) {
  if (!has_command("calibrate")) GTEST_SKIP() << "this build has no hardware executors";
  for (const char* count : {"0", "-2"}) {
    const Outcome r = aware(std::string("calibrate --devices ") + count + " -o " + tmp("cal-39.json"));
    EXPECT_EQ(r.exit_code, 1) << count;
    EXPECT_TRUE(contains(r.output, std::string("--devices ") + count + ": give a count of 1 or more")) << r.output;
  }
  const Outcome k40 = aware("calibrate --devices 1 --cluster preset:k40x4 -o " + tmp("cal-39.json"));
  EXPECT_EQ(k40.exit_code, 1);
  EXPECT_TRUE(contains(k40.output, "device 'gpu0' is a K40, but --backend cpu runs on this machine's CPU cores"))
      << k40.output;
  EXPECT_FALSE(std::filesystem::exists(tmp("cal-39.json")));
}

TEST(CliMessages, ValidateNamesTheUncalibratedClusterItDefaultedTo) {
  if (!has_command("validate")) GTEST_SKIP() << "this build has no hardware executors";
  // A cluster of GPUs is refused for the cpu backend, naming the device.
  const Outcome k40 = aware("validate --graph zoo:resnet50:batch=1,image_size=32 --cluster preset:k40x4 "
                            "--methods m-etf --random 0 --rounds 1 --simulators analytic");
  EXPECT_EQ(k40.exit_code, 1);
  EXPECT_TRUE(contains(k40.output, "device 'gpu0' is a K40, but --backend cpu runs on this machine's CPU cores"))
      << k40.output;
  // Four cpu devices: more than the default uncalibrated cluster (preset:cpu-host,
  // two cores) gives, and the message names both, and which one the user did not give.
  std::string devices, links;
  for (int d = 0; d < 4; ++d) {
    const std::string name = "cpu" + std::to_string(d);
    devices += std::string(d ? "," : "") + R"({"name":")" + name +
               R"(","kind":"cpu","peak_flops":1e11,"memory_bytes":1e10,"memory_Bps":1e10})";
    links += std::string(d ? "," : "") + R"({"name":"l)" + std::to_string(d) + R"(","a":")" + name +
             R"(","b":"mem","bandwidth_Bps":1e10,"latency_us":1})";
  }
  write(tmp("cpu4-39.json"), R"({"format":"aware-cluster","version":1,"name":"cpu4","devices":[)" + devices +
                                 R"(],"switches":["mem"],"links":[)" + links + "]}");
  const Outcome r = aware("validate --graph zoo:resnet50:batch=1,image_size=32 --cluster " + tmp("cpu4-39.json") +
                          " --methods m-etf --random 0 --rounds 1 --simulators analytic");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "cpu4-39.json has 4 devices")) << r.output;
  EXPECT_TRUE(contains(r.output, "preset:cpu-host (the default for --backend cpu)")) << r.output;
}


// A cost table made for ResNet-50 (every op at 100 µs on cpu devices) says how
// much of another model it priced: nothing, and the step is then the roofline's.
TEST(CliMessages, SimulateSaysHowManyOpsTheCostTablePriced) {
  const Outcome built = aware("graph build --model resnet50 -o " + tmp("r50-39.json"));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const nlohmann::json graph = nlohmann::json::parse(std::ifstream(tmp("r50-39.json")));
  nlohmann::json per_op = nlohmann::json::object();
  for (const auto& op : graph.at("ops")) per_op[op.at("name").get<std::string>()] = 100.0;
  const nlohmann::json table = {{"format", "aware-cost-table"}, {"version", 1}, {"graph", "zoo:resnet50"},
                                {"backend", "cpu"}, {"costs", {{"cpu", per_op}}}};
  write(tmp("r50-costs-39.json"), table.dump());
  const std::string costs = " --cluster preset:cpu-host --option costs=" + tmp("r50-costs-39.json");

  const Outcome other = aware("simulate --graph zoo:nmt2:batch=4,seq_len=8,hidden=64,vocab=100" + costs);
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_TRUE(contains(other.output, "priced 0 of ")) << other.output;
  EXPECT_TRUE(contains(other.output, "no entry matches this graph")) << other.output;

  const Outcome same = aware("simulate --graph zoo:resnet50" + costs + " --json", true);
  ASSERT_EQ(same.exit_code, 0) << same.output;
  const nlohmann::json doc = nlohmann::json::parse(same.output);
  const int ops = static_cast<int>(graph.at("ops").size());
  EXPECT_EQ(doc.at("cost_table").at("pairs_from_table").get<int>(), 2 * ops);  // cpu-host: 2 devices
  EXPECT_EQ(doc.at("cost_table").at("ops_missed").get<int>(), 0);
}


// simulate and place compute util from the timeline, as strategy apply does: a
// data-parallel step's compute and communication streams overlap, and their
// summed busy time passes the step, but util (the share of the step in which
// either runs) cannot.
TEST(CliMessages, SimulateUtilNeverPassesTheStep) {
  const Outcome r = aware("simulate --graph zoo:resnet50 --cluster preset:k40x4 --strategy dp:4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int rows = 0;
  for (const std::string& line : lines_of(r.output)) {
    if (line.rfind("gpu", 0) != 0) continue;
    ++rows;
    const size_t pct = line.find('%');
    ASSERT_NE(pct, std::string::npos) << line;
    const size_t from = line.rfind(' ', pct);
    EXPECT_LE(std::stod(line.substr(from + 1, pct - from - 1)), 100.0) << line;
  }
  EXPECT_EQ(rows, 4) << r.output;
}


TEST(CliMessages, CompareDeviceCountsSayTheRange) {
  for (const char* bad : {"99999999999", "0,2"}) {
    const Outcome r = aware(std::string("compare --models resnet50 --cluster k40x4 --methods m-etf --devices ") + bad);
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_TRUE(contains(r.output, "is out of range: --devices takes 1..4096")) << r.output;
  }
  const Outcome word = aware("compare --models resnet50 --cluster k40x4 --methods m-etf --devices 2x");
  EXPECT_EQ(word.exit_code, 1);
  EXPECT_TRUE(contains(word.output, "'2x' is not a device count")) << word.output;
}


// Fresh-corpus rows: command-line parse errors are one `error:` line naming the
// command's help; numbers are checked as numbers; a table's format and -o's
// extension agree; an option is not given twice or two ways.
TEST(CliMessages, ParseErrorsAreOneErrorLine) {
  const Outcome missing = aware("graph build -o " + tmp("x.json"));
  EXPECT_EQ(missing.output, "error: --model is required (see aware graph build --help)\n");
  EXPECT_NE(missing.exit_code, 0);
  const Outcome word = aware("graph build --model resnet50 --batch abc -o " + tmp("x.json"));
  EXPECT_EQ(word.output, "error: --batch: 'abc' is not a whole number (see aware graph build --help)\n");
  const Outcome half = aware("graph build --model resnet50 --batch 2.5 -o " + tmp("x.json"));
  EXPECT_TRUE(contains(half.output, "'2.5' is not a whole number")) << half.output;
  const Outcome big = aware("graph build --model resnet50 --batch 99999999999999999999 -o " + tmp("x.json"));
  EXPECT_TRUE(contains(big.output, "is too large (1..1000000)")) << big.output;
  EXPECT_FALSE(std::filesystem::exists(tmp("x.json")));
}

TEST(CliMessages, TableFormatAndExtensionAgree) {
  const std::string place = "compare --models resnet50 --cluster k40x2 --methods m-topo ";
  const Outcome xml = aware(place + "-o " + tmp("cmp-39.xml"));
  EXPECT_EQ(xml.exit_code, 1);
  EXPECT_TRUE(contains(xml.output, "'.xml' is not a table file's extension")) << xml.output;
  const Outcome clash = aware(place + "--format csv -o " + tmp("cmp-39.json"));
  EXPECT_EQ(clash.exit_code, 1);
  EXPECT_TRUE(contains(clash.output, "--format csv and -o " + tmp("cmp-39.json") + " (a json file by its extension) disagree"))
      << clash.output;
  EXPECT_FALSE(std::filesystem::exists(tmp("cmp-39.xml")));
  EXPECT_FALSE(std::filesystem::exists(tmp("cmp-39.json")));
  // An explicit --format with an extension of its own choosing is the user's call.
  const Outcome ok = aware(place + "--format csv -o " + tmp("cmp-39.dat"));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

TEST(CliMessages, EvaluatorOptionsAreGivenOnce) {
  const std::string sim = "simulate --graph zoo:resnet50:batch=1,image_size=32 --cluster preset:k40x2 ";
  const Outcome both = aware(sim + "--mode contention --option mode=placeto");
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_TRUE(contains(both.output, "--mode contention and --option mode=placeto disagree")) << both.output;
  const Outcome twice = aware(sim + "--option mode=contention --option mode=placeto");
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_TRUE(contains(twice.output, "--option: key 'mode' is given twice")) << twice.output;
  EXPECT_EQ(aware(sim + "--mode placeto --option mode=placeto").exit_code, 0);  // agreeing is fine
}

TEST(CliMessages, CpuEvaluatorRefusesAClusterOfGpus) {
  if (!has_command("calibrate")) GTEST_SKIP() << "this build has no hardware executors";
  const Outcome r = aware("simulate --graph zoo:resnet50:batch=1,image_size=32 --cluster preset:k40x2 --evaluator cpu");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "device 'gpu0' is a K40, but --evaluator cpu runs on this machine's CPU cores"))
      << r.output;
}


// An output never replaces an input, and two outputs are never one file.
TEST(CliMessages, OutputsAreNeitherInputsNorEachOther) {
  ASSERT_EQ(aware("graph build --model resnet50 --batch 2 --image-size 32 -o " + tmp("same-39.json")).exit_code, 0);
  const std::string before = read_text(tmp("same-39.json"));
  const Outcome place = aware("place --graph " + tmp("same-39.json") + " --cluster preset:k40x2 --method m-topo -o " +
                              AWARE_TEST_TMPDIR + "/./same-39.json");
  EXPECT_EQ(place.exit_code, 1);
  EXPECT_TRUE(contains(place.output, "is the --graph input: writing it would replace it")) << place.output;
  EXPECT_EQ(read_text(tmp("same-39.json")), before);
  const Outcome fuse = aware("fuse --graph zoo:resnet50 --target-size 1 -o " + tmp("fz-39.json") + " --mapping " +
                             tmp("fz-39.json"));
  EXPECT_EQ(fuse.exit_code, 1);
  EXPECT_TRUE(contains(fuse.output, "are one file: give each output its own")) << fuse.output;
  EXPECT_FALSE(std::filesystem::exists(tmp("fz-39.json")));
}


TEST(CliMessages, ValidateSeedAndMeshKeys) {
  if (has_command("validate")) {
    const Outcome seed = aware("validate --graph zoo:resnet50:batch=1,image_size=32 --cluster preset:cpu-host "
                               "--methods m-etf --random 0 --rounds 1 --simulators analytic --seed -1");
    EXPECT_NE(seed.exit_code, 0);
    EXPECT_TRUE(contains(seed.output, "--seed: '-1' is out of range 0..")) << seed.output;
  }
  const Outcome mesh = aware("mesh map --network snn:layered:100 --mesh mesh:4x4,capacity=64,capacity=8");
  EXPECT_EQ(mesh.exit_code, 1);
  EXPECT_TRUE(contains(mesh.output, "field 'capacity' is given twice")) << mesh.output;
}


TEST(CliMessages, ImportRefusesAnInputShapeGivenTwice) {
  const Outcome r = aware("graph import " + std::string(AWARE_SOURCE_DIR) +
                          "/tests/fixtures/models/mlp.onnx --input-shape x=2x16 --input-shape x=4x16 -o " +
                          tmp("twice-39.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "--input-shape: input 'x' is given twice")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(tmp("twice-39.json")));
}

}  // namespace

namespace {

// A misspelt input name is reported as such, before --batch is compared with its
// shape (fresh corpus row I45).
TEST(CliMessages, ImportNamesAnUnknownInputBeforeComparingTheBatch) {
  const Outcome r = aware("graph import " + std::string(AWARE_SOURCE_DIR) +
                          "/tests/fixtures/models/mlp.onnx --batch 4 --input-shape q=1x1 -o " + tmp("q-39.json"));
  if (contains(r.output, "this build has no")) GTEST_SKIP() << "this aware has no ONNX reader";
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "has no data input of that name (its inputs: x)")) << r.output;
  EXPECT_FALSE(contains(r.output, "disagree")) << r.output;
}

}  // namespace

namespace {

TEST(CliMessages, ImportInputShapeDimensionPastALongIsTooLarge) {
  const Outcome r = aware("graph import " + std::string(AWARE_SOURCE_DIR) +
                          "/tests/fixtures/models/mlp.onnx --input-shape x=99999999999999999999999x16 -o " +
                          tmp("huge-39.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "dimension '99999999999999999999999' is too large")) << r.output;
}

}  // namespace
