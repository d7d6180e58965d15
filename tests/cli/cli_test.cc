// The `aware` command end to end: results, --json, and bad input (one clear
// line naming the file / op / field, a non-zero exit, no partial output file).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace {

TEST(Cli, SimulatePrintsStepTimeAndJson) {
  const Outcome text = aware("simulate --graph zoo:resnet50 --cluster preset:k40x2 --placement round-robin");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "step time")) << text.output;
  EXPECT_TRUE(contains(text.output, "ratio to bound")) << text.output;
  const Outcome json = aware("simulate --graph zoo:resnet50 --cluster preset:k40x2 --placement single --json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto doc = nlohmann::json::parse(json.output);
  EXPECT_GT(doc["step_time_us"].get<double>(), 0);
  EXPECT_GE(doc["ratio_to_lower_bound"].get<double>(), 1.0);
  EXPECT_EQ(doc["devices"].size(), 2u);
}

TEST(Cli, BenchSimulateMeasuresEveryThreadCountInOneRun) {
  const std::string out = tmp("bench-threads.json");
  const Outcome run = aware("bench simulate --graph random:60:1 --cluster preset:k40x2 --threads 1,2 "
                            "--seconds 0.2 --json -o " + out, true);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto doc = nlohmann::json::parse(run.output);
  ASSERT_EQ(doc["by_threads"].size(), 2u);
  EXPECT_EQ(doc["by_threads"][0]["threads"], 1);
  EXPECT_EQ(doc["by_threads"][1]["threads"], 2);
  EXPECT_DOUBLE_EQ(doc["by_threads"][0]["speedup"].get<double>(), 1.0);
  EXPECT_GT(doc["by_threads"][1]["evaluations"].get<long long>(), 0);
  EXPECT_TRUE(std::filesystem::exists(out));
  for (const char* bad : {"0", "two", "-1", "1,300"}) {
    const Outcome r = aware(std::string("bench simulate --graph random:60:1 --seconds 0.1 --threads ") + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_TRUE(contains(r.output, "--threads")) << bad << ": " << r.output;
  }
}

// Without -o a benchmark prints its figures and writes nothing: a benchmark run
// must not leave a file in the working directory (it used to write
// bench-simulate.json there by default).
TEST(Cli, BenchSimulateWithoutOutputWritesNoFile) {
  const std::filesystem::path dir = tmp("bench-no-output");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const Outcome run = aware("bench simulate --graph random:40:1 --cluster preset:k40x2 --seconds 0.05 --json", true);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_GT(nlohmann::json::parse(run.output)["evaluations"].get<long long>(), 0);
  // Both benchmarks run with the empty folder as their working directory.
  const std::string bin = AWARE_BIN;
  const Outcome in_dir = aware("--help >/dev/null && cd " + dir.string() + " && " + bin +
                               " bench simulate --graph random:40:1 --cluster preset:k40x2 --seconds 0.05 && " +
                               bin + " bench moves --graph random:40:1 --cluster preset:k40x2 --seconds 0.05");
  ASSERT_EQ(in_dir.exit_code, 0) << in_dir.output;
  EXPECT_FALSE(contains(in_dir.output, "wrote")) << in_dir.output;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(Cli, TraceOpensAsChromeTraceEvents) {
  const std::string trace = tmp("trace.json");
  std::filesystem::remove(trace);
  const Outcome r = aware("simulate --graph zoo:inception_v3 --cluster preset:k40x4 --placement round-robin --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(trace);
  const auto doc = nlohmann::json::parse(in);
  int ops = 0, transfers = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    (e["cat"] == "transfer" ? transfers : ops)++;
  }
  EXPECT_GT(ops, 1000);
  EXPECT_GT(transfers, 0);
}

TEST(Cli, GraphBuildWritesAFileThatReadsBack) {
  const std::string out = tmp("nmt2.json");
  const Outcome build = aware("graph build --model nmt2 --batch 16 -o " + out);
  ASSERT_EQ(build.exit_code, 0) << build.output;
  const Outcome info = aware("graph info " + out + " --json");
  ASSERT_EQ(info.exit_code, 0) << info.output;
  const auto doc = nlohmann::json::parse(info.output);
  EXPECT_GT(doc["ops"].get<int>(), 100);
  EXPECT_GT(doc["lower_bound_us"].get<double>(), 0);
}

TEST(Cli, GraphFamilyWritesGraphsAndSplit) {
  const std::string dir = tmp("family");
  std::filesystem::remove_all(dir);
  const Outcome r = aware("graph family --family cifar10 --count 4 --seed 1 -o " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int graphs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) graphs += entry.path().filename() != "split.json";
  EXPECT_EQ(graphs, 4);
  std::ifstream in(dir + "/split.json");
  const auto split = nlohmann::json::parse(in);
  EXPECT_EQ(split["test"].size(), 1u);  // seed 4
  EXPECT_EQ(split["train"].size(), 3u);
}

TEST(Cli, UnknownModelListsTheKnownOnes) {
  const Outcome r = aware("graph info zoo:alexnet");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "inception_v3")) << r.output;
}

TEST(Cli, BadGraphFileNamesTheFileAndLeavesNoTrace) {
  const std::string graph = tmp("broken.json");
  const std::string trace = tmp("never.json");
  std::filesystem::remove(trace);
  write(graph, "{\"format\":\"aware-graph\",");
  const Outcome r = aware("simulate --graph " + graph + " --trace " + trace);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, graph)) << r.output;
  EXPECT_FALSE(std::filesystem::exists(trace));
}

// Regressions from the bad-input sweep (issue: bad input and faults): each is one
// clear line and a non-zero exit, before any work.
TEST(Cli, BadNumbersAndNamesAreRefusedUpFront) {
  struct Case {
    std::string args;
    std::vector<std::string> fragments;
  };
  const std::string tiny = tmp("tiny-flops.json");
  write(tiny, R"({"format":"aware-cluster","version":1,"devices":[
    {"name":"a","peak_flops":1e-300,"memory_bytes":1e12,"memory_Bps":1e11}]})");
  const std::vector<Case> cases = {
      {"graph build --model inception_v3 --batch 0 -o " + tmp("b0.json"), {"--batch", "1"}},
      {"graph build --model inception_v3 --batch -8 -o " + tmp("b8.json"), {"--batch"}},
      {"compare --models alexnet --cluster k40x4", {"alexnet", "inception_v3"}},
      {"compare --models nmt2 --cluster k40x4 --devices 0", {"--devices", "'0'"}},
      {"compare --models nmt2 --cluster k40x4 --devices 2,,4", {"--devices", "2,,4"}},
      {"compare --models nmt2 --cluster k40x4 --devices -3", {"--devices"}},
      {"simulate --graph zoo:nmt2 --cluster " + tiny, {tiny, "peak_flops", "not finite"}},
      {"graph info " + std::string(AWARE_TEST_TMPDIR), {"is a directory"}},
  };
  for (const Case& c : cases) {
    const Outcome r = aware(c.args);
    EXPECT_NE(r.exit_code, 0) << c.args << "\n" << r.output;
    for (const std::string& f : c.fragments) EXPECT_TRUE(contains(r.output, f)) << c.args << "\n" << r.output;
    EXPECT_FALSE(contains(r.output, "inf ms")) << c.args;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp("b0.json")));
}

// Outputs: an unwritable path fails before the work, and a command with two
// outputs writes both or neither.
TEST(Cli, UnwritableOutputsFailFirstAndLeaveNothing) {
  const std::string placement = tmp("never-placement.json");
  std::filesystem::remove(placement);
  const Outcome place = aware("place --graph zoo:nmt2 --cluster preset:k40x2 --method m-etf -o " +
                              placement + " --trace /proc/no-such-dir/trace.json");
  EXPECT_NE(place.exit_code, 0);
  EXPECT_TRUE(contains(place.output, "--trace")) << place.output;
  EXPECT_FALSE(std::filesystem::exists(placement)) << "a half-written result was left";
  const Outcome compare = aware("compare --models nmt2 --cluster k40x2 --methods anneal "
                                "--budget-evals 100000 -o /proc/no-such-dir/c.md");
  EXPECT_NE(compare.exit_code, 0);
  EXPECT_TRUE(contains(compare.output, "-o /proc/no-such-dir/c.md")) << compare.output;
  EXPECT_FALSE(contains(compare.output, "anneal")) << "the work ran before the check";
  // Missing folders are created, for -o as for --save-policy.
  const std::string nested = tmp("new-folder/sub/p.json");
  std::filesystem::remove_all(tmp("new-folder"));
  const Outcome made = aware("place --graph zoo:nmt2 --cluster preset:k40x2 --method m-etf -o " + nested);
  EXPECT_EQ(made.exit_code, 0) << made.output;
  EXPECT_TRUE(std::filesystem::exists(nested));
}

TEST(Cli, OneConsistentCommandLine) {
  const Outcome unknown = aware("frobnicate");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(contains(unknown.output, "unknown command 'frobnicate'")) << unknown.output;
  EXPECT_TRUE(contains(unknown.output, "simulate")) << unknown.output;

  const Outcome list = aware("cluster list --json", true);
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_TRUE(nlohmann::json::parse(list.output).is_array());

  const Outcome json = aware("compare --models nmt2 --cluster preset:k40x2 --methods single,m-etf --json", true);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto table = nlohmann::json::parse(json.output);
  EXPECT_EQ(table.at("rows").size(), 1u) << json.output;  // nmt2 on the two-GPU box

  const std::string md = tmp("inferred.md");
  const Outcome by_extension =
      aware("compare --models nmt2 --cluster k40x2 --methods single,m-etf -o " + md);
  ASSERT_EQ(by_extension.exit_code, 0) << by_extension.output;
  std::ifstream in(md);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(contains(text, "|---")) << "-o *.md writes Markdown\n" << text;

  const Outcome disagree = aware("compare --models nmt2 --json --format csv");
  EXPECT_NE(disagree.exit_code, 0);

  // Progress to a log (stderr is not a terminal here): whole lines, no escapes.
  const Outcome progress = aware("place --graph zoo:nmt2 --cluster preset:k40x2 --method anneal --budget-evals 50");
  ASSERT_EQ(progress.exit_code, 0) << progress.output;
  EXPECT_FALSE(contains(progress.output, "\r")) << progress.output;
  EXPECT_FALSE(contains(progress.output, "\033[K")) << progress.output;

  const Outcome help = aware("simulate --help");
  EXPECT_TRUE(contains(help.output, "random:N:SEED")) << help.output;
}

// compare --resume: finished cells come from the journal, a torn last line (a
// kill mid-write) runs again, and the table equals an uninterrupted run's.
TEST(Cli, CompareResumesFromItsCellJournal) {
  const std::string journal = tmp("cells.jsonl");
  std::filesystem::remove(journal);
  const std::string args = "compare --models nmt2 --cluster k40x2 --devices 1,2 --methods m-etf,anneal "
                           "--budget-evals 40 --format csv";
  const Outcome reference = aware(args, true);
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  ASSERT_EQ(aware(args + " --resume " + journal, true).exit_code, 0);
  // Keep two whole cells and half of the third, as a kill would.
  std::ifstream in(journal);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  write(journal, lines[0] + "\n" + lines[1] + "\n" + lines[2].substr(0, lines[2].size() / 2));
  const Outcome resumed = aware(args + " --resume " + journal);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "2 cells taken from")) << resumed.output;
  // Same step times; the placement-time column is wall-clock and may differ.
  const auto step_columns = [](const std::string& csv) {
    std::string out;
    std::istringstream rows(csv);
    for (std::string row; std::getline(rows, row);) {
      if (row.rfind("nmt2,", 0) != 0) continue;
      std::istringstream cells(row);
      std::string cell;
      for (int c = 0; c < 8 && std::getline(cells, cell, ','); ++c) out += cell + ",";
      out += "\n";
    }
    return out;
  };
  EXPECT_EQ(step_columns(resumed.output), step_columns(reference.output));
  // After the resumed run every cell is in the journal, the torn line notwithstanding.
  const Outcome again = aware(args + " --resume " + journal);
  EXPECT_TRUE(contains(again.output, "4 cells taken from")) << again.output;
  EXPECT_FALSE(step_columns(reference.output).empty());
}

TEST(Cli, NegativeCostNamesOpAndField) {
  const std::string graph = tmp("negative.json");
  write(graph, R"({"format":"aware-graph","version":1,"ops":[{"name":"conv1","flops":-5}],"edges":[]})");
  const Outcome r = aware("graph info " + graph);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "conv1")) << r.output;
  EXPECT_TRUE(contains(r.output, "flops")) << r.output;
}

TEST(Cli, PlacementWithUnknownDeviceIsRefused) {
  const std::string graph = tmp("small.json");
  write(graph, kSmallGraph);
  const std::string placement = tmp("bad-placement.json");
  write(placement, R"({"format":"aware-placement","version":1,"devices":{"a":"gpu0","b":"gpu7","c":"gpu0"}})");
  const Outcome r = aware("simulate --graph " + graph + " --cluster preset:k40x2 --placement " + placement);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "op 'b'")) << r.output;
  EXPECT_TRUE(contains(r.output, "gpu7")) << r.output;
  write(placement, R"({"format":"aware-placement","version":1,"devices":{"a":"gpu0","c":"gpu0"}})");
  const Outcome missing = aware("simulate --graph " + graph + " --cluster preset:k40x2 --placement " + placement);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(contains(missing.output, "op 'b'")) << missing.output;
}

TEST(Cli, BadClusterFileIsRefused) {
  const std::string cluster = tmp("zero-link.json");
  write(cluster, R"({"format":"aware-cluster","version":1,"devices":[
    {"name":"a","peak_flops":1e12,"memory_bytes":1e9,"memory_Bps":1e11},
    {"name":"b","peak_flops":1e12,"memory_bytes":1e9,"memory_Bps":1e11}],
    "links":[{"name":"ab","a":"a","b":"b","bandwidth_Bps":0}]})");
  const Outcome r = aware("cluster show " + cluster);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "link 'ab'")) << r.output;
  EXPECT_TRUE(contains(r.output, "bandwidth_Bps")) << r.output;
}

TEST(Cli, PlaceRejectsUnknownMethodsAndBadNumbers) {
  const Outcome unknown = aware("place --graph zoo:resnet50 --method magic");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(contains(unknown.output, "heft")) << unknown.output;
  const Outcome budget = aware("place --graph zoo:resnet50 --method anneal --budget-evals -5");
  EXPECT_NE(budget.exit_code, 0);
  EXPECT_TRUE(contains(budget.output, "budget")) << budget.output;
  const Outcome seed = aware("place --graph zoo:resnet50 --method random --seed -1");
  EXPECT_NE(seed.exit_code, 0);
  EXPECT_TRUE(contains(seed.output, "seed")) << seed.output;
}

TEST(Cli, PlaceWritesAPlacementThatSimulatesToTheSameStep) {
  const std::string out = tmp("heft.json");
  const Outcome place = aware("place --graph zoo:resnet50 --cluster preset:k40x4 --method heft --json -o " + out);
  ASSERT_EQ(place.exit_code, 0) << place.output;
  const auto placed = nlohmann::json::parse(place.output);
  const Outcome sim = aware("simulate --graph zoo:resnet50 --cluster preset:k40x4 --json --placement " + out);
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(sim.output)["step_time_us"].get<double>(),
                   placed["step_time_us"].get<double>());
}

// --curve: a search's best step so far, one row per progress report: counts
// rising to the budget, the best never rising, the last row the placed step.
TEST(Cli, PlaceWritesTheSearchCurve) {
  const std::string curve = tmp("anneal-curve.csv");
  std::filesystem::remove(curve);
  const Outcome place = aware("place --graph zoo:resnet50 --cluster preset:k40x4 --method anneal-graph "
                              "--budget-evals 400 --seed 3 --json --curve " + curve, true);
  ASSERT_EQ(place.exit_code, 0) << place.output;
  const auto placed = nlohmann::json::parse(place.output);
  std::ifstream in(curve);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "evaluations,seconds,best_step_us");
  long long last_done = 0;
  double last_best = 1e300;
  int rows = 0;
  while (std::getline(in, line)) {
    long long done = 0;
    double seconds = 0, best = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lld,%lf,%lf", &done, &seconds, &best), 3) << line;
    EXPECT_GT(done, last_done) << line;
    EXPECT_LE(best, last_best) << line;
    last_done = done;
    last_best = best;
    ++rows;
  }
  EXPECT_EQ(rows, 200);  // a report every budget / 200 evaluations
  EXPECT_EQ(last_done, 400);
  EXPECT_NEAR(last_best, placed["step_time_us"].get<double>(), 1e-3);  // 10 significant digits
  // Chains count their own evaluations: no one curve.
  const Outcome chains = aware("place --graph zoo:resnet50 --cluster preset:k40x4 --method anneal "
                               "--budget-evals 400 --chains 2 --curve " + tmp("chains-curve.csv"));
  EXPECT_NE(chains.exit_code, 0);
  EXPECT_TRUE(contains(chains.output, "--curve")) << chains.output;
  const Outcome unwritable = aware("place --graph zoo:resnet50 --method m-etf --curve /proc/no-such-dir/c.csv");
  EXPECT_NE(unwritable.exit_code, 0);
  EXPECT_TRUE(contains(unwritable.output, "--curve")) << unwritable.output;
}

// Placeto's memory grows with the square of the graph: a graph whose estimate
// passes the limit (the machine's memory, or memory_limit_gb) is refused before
// any work, with the estimate and what to use instead; -1 lifts the limit.
TEST(Cli, PlacetoRefusesAGraphTooLargeForItsMemoryLimit) {
  const Outcome help = aware("search --help");
  if (help.exit_code != 0 || !contains(help.output, "Train a learned placement agent"))
    GTEST_SKIP() << "built without the learned agents (LibTorch)";
  const std::string out = tmp("placeto-refused.json");
  std::filesystem::remove(out);
  const Outcome refused = aware("search --agent placeto --graph random:300:1 --cluster preset:k40x2 "
                                "--budget-evals 8 --agent-option memory_limit_gb=0.001 -o " + out);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_TRUE(contains(refused.output, "has 300 ops")) << refused.output;
  EXPECT_TRUE(contains(refused.output, "about 0.0115 GB")) << refused.output;  // 128 x 300^2 bytes
  EXPECT_TRUE(contains(refused.output, "memory_limit_gb")) << refused.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  const Outcome unlimited = aware("search --agent placeto --graph random:300:1 --cluster preset:k40x2 "
                                  "--budget-evals 8 --agent-option memory_limit_gb=-1 -o " + out);
  EXPECT_EQ(unlimited.exit_code, 0) << unlimited.output;
  EXPECT_TRUE(std::filesystem::exists(out));
  // The default limit is this machine's memory, which 300 ops are far below.
  const Outcome fits = aware("search --agent placeto --graph random:300:1 --cluster preset:k40x2 --budget-evals 8");
  EXPECT_EQ(fits.exit_code, 0) << fits.output;
}

// A policy saved by `aware search` places another graph zero-shot with `aware place
// --policy`; a policy of another agent than --method, a budget, or a file that is not
// a policy are refused with a message.
TEST(Cli, PlaceWithAPolicyFilePlacesZeroShot) {
  // Without LibTorch there is no `search` subcommand (the main help is printed instead).
  const Outcome help = aware("search --help");
  if (help.exit_code != 0 || !contains(help.output, "Train a learned placement agent"))
    GTEST_SKIP() << "built without the learned agents (LibTorch)";
  const std::string policy = tmp("cli_policy.pt");
  std::filesystem::remove(policy);
  const Outcome train = aware("search --agent aware --graph random:40:1 --cluster preset:k40x2 "
                              "--budget-evals 18 --save-policy " + policy + " -o " + tmp("cli_trained.json"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  ASSERT_TRUE(std::filesystem::exists(policy));
  const std::string out = tmp("cli_zero_shot.json");
  std::filesystem::remove(out);
  const Outcome place = aware("place --graph random:60:2 --cluster preset:k40x2 --policy " + policy +
                              " --json -o " + out, /*stdout_only=*/true);
  ASSERT_EQ(place.exit_code, 0) << place.output;
  const auto placed = nlohmann::json::parse(place.output);
  EXPECT_EQ(placed["method"].get<std::string>(), "aware");
  const Outcome sim = aware("simulate --graph random:60:2 --cluster preset:k40x2 --json --placement " + out);
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(sim.output)["step_time_us"].get<double>(),
                   placed["step_time_us"].get<double>());

  const Outcome other = aware("place --graph random:60:2 --cluster preset:k40x2 --method placeto --policy " + policy);
  EXPECT_NE(other.exit_code, 0);
  EXPECT_TRUE(contains(other.output, "aware")) << other.output;
  const Outcome budget = aware("place --graph random:60:2 --cluster preset:k40x2 --budget-evals 5 --policy " + policy);
  EXPECT_NE(budget.exit_code, 0);
  EXPECT_TRUE(contains(budget.output, "zero-shot")) << budget.output;
  const Outcome devices = aware("place --graph random:60:2 --cluster preset:k40x4 --policy " + policy);
  EXPECT_NE(devices.exit_code, 0);
  EXPECT_TRUE(contains(devices.output, "devices")) << devices.output;
  const std::string garbage = tmp("cli_garbage.pt");
  write(garbage, "not a policy");
  const Outcome bad = aware("place --graph random:60:2 --cluster preset:k40x2 --policy " + garbage);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(contains(bad.output, garbage)) << bad.output;
  const Outcome neither = aware("place --graph random:60:2 --cluster preset:k40x2");
  EXPECT_NE(neither.exit_code, 0);
  EXPECT_TRUE(contains(neither.output, "--method or --policy")) << neither.output;
}

TEST(Cli, GraphTooBigForTheClusterIsReportedByEveryMethod) {
  const std::string cluster = tmp("tiny.json");
  write(cluster, R"({"format":"aware-cluster","version":1,"devices":[
    {"name":"a","peak_flops":1e12,"memory_bytes":1e8,"memory_Bps":1e11},
    {"name":"b","peak_flops":1e12,"memory_bytes":1e8,"memory_Bps":1e11}],
    "links":[{"a":"a","b":"b","bandwidth_Bps":1e10}]})");
  for (const char* method : {"single", "expert", "metis", "heft", "m-etf", "anneal"}) {
    const std::string out = tmp(std::string("oom-") + method + ".json");
    std::filesystem::remove(out);
    const Outcome r = aware(std::string("place --graph zoo:nmt4 --cluster ") + cluster + " --method " + method + " -o " + out);
    EXPECT_NE(r.exit_code, 0) << method << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "GB")) << method << ": " << r.output;
    EXPECT_FALSE(std::filesystem::exists(out)) << method;
  }
}

TEST(Cli, CompareWritesEveryFormat) {
  for (const char* format : {"csv", "md", "json"}) {
    const std::string out = tmp(std::string("compare.") + format);
    const Outcome r = aware(std::string("compare --models resnet50 --cluster k40x4 --devices 2 --methods single,heft,m-etf --format ") + format + " -o " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(std::filesystem::exists(out));
  }
  const Outcome bad = aware("compare --models resnet50 --methods heft --format xml");
  EXPECT_NE(bad.exit_code, 0);
}

TEST(Cli, FuseShrinksTheGraphAndKeepsTheSingleDeviceStep) {
  const std::string coarse = tmp("resnet50-fused.json");
  const Outcome r = aware("fuse --graph zoo:resnet50 --cluster preset:k40x4 --json -o " + coarse);
  if (r.exit_code != 0 && (contains(r.output, "not expected") || contains(r.output, "subcommand is required"))) GTEST_SKIP() << "built without agents/fusion";
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output);
  EXPECT_LT(doc["stats"]["edges_after"].get<int>(), doc["stats"]["edges_before"].get<int>());
  EXPECT_NEAR(doc["expanded_single_device_step_us"].get<double>(),
              doc["fine"]["single_device_step_us"].get<double>(), 1e-6 * doc["fine"]["single_device_step_us"].get<double>());
  const Outcome info = aware("graph info " + coarse + " --json");
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_LT(nlohmann::json::parse(info.output)["ops"].get<int>(), 626);
}

TEST(Cli, FuseReportFailsOnAModelItCannotLoadAndWritesNothing) {
  const std::string out = tmp("fuse-report-bad.md");
  std::filesystem::remove(out);
  const Outcome r = aware("fuse report --models resnet50,no_such_model --method m-etf -o " + out);
  if (contains(r.output, "not expected") || contains(r.output, "subcommand is required")) GTEST_SKIP() << "built without agents/fusion";
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "no_such_model")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Cli, EverySubcommandHasHelp) {
  for (const char* sub : {"graph build", "graph family", "graph info", "graph export", "cluster show",
                          "simulate", "bench simulate", "bench scaling", "place", "compare",
                          "strategy apply", "strategy list", "strategy search"}) {
    const Outcome r = aware(std::string(sub) + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "Usage")) << sub;
  }
}

}  // namespace

// aware bound: every term with its name, the best is the largest that applies,
// and a placement's simulated step is not below it; a missing graph is one line.
TEST(Cli, BoundPrintsEveryTermAndTheBindingOne) {
  const Outcome b = aware("bound family:cifar10:36 --cluster preset:k40x2 --milp-seconds 2 --json");
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const auto doc = nlohmann::json::parse(b.output);
  double best = 0;
  std::string binding;
  for (const auto& t : doc["terms"]) {
    if (!t["applies"].get<bool>()) continue;
    if (t["us"].get<double>() > best) {
      best = t["us"].get<double>();
      binding = t["name"].get<std::string>();
    }
  }
  EXPECT_GT(best, 0);
  EXPECT_DOUBLE_EQ(doc["bound_us"].get<double>(), best);
  EXPECT_EQ(doc["binding"].get<std::string>(), binding);
  const Outcome sim = aware("simulate --graph family:cifar10:36 --cluster preset:k40x2 --placement round-robin --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_GE(nlohmann::json::parse(sim.output)["step_time_us"].get<double>(), best * (1 - 1e-12));

  const Outcome missing = aware("bound " + tmp("no-such-graph.json"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("no-such-graph.json"), std::string::npos) << missing.output;
}

// simulate --representative: a 3d spec priced by one replica's pipeline (the step,
// a row per stage, the throughput); what it does not represent, and a missing
// strategy, are one line each. strategy search --three-d --representative ranks its
// candidates with TFLOP/s and MFU and needs --three-d.
TEST(Cli, RepresentativeSimulationAndSearch) {
  const std::string graph = "--graph zoo:gpt:layers=4,hidden=256,heads=8,seq_len=128,vocab=1000,batch=32";
  const Outcome r = aware("simulate " + graph +
                          " --cluster preset:dgx-a100-pod:2 --strategy 3d:dp=2,tp=2,pp=4,micro=8,schedule=1f1b "
                          "--representative --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output);
  EXPECT_TRUE(doc["representative"].get<bool>());
  EXPECT_EQ(doc["stages"].size(), 4u);
  EXPECT_EQ(doc["devices_used"].get<int>(), 16);
  EXPECT_GT(doc["step_time_us"].get<double>(), 0);
  EXPECT_GT(doc["mfu"].get<double>(), 0);
  EXPECT_LT(doc["mfu"].get<double>(), 1);
  const Outcome text = aware("simulate " + graph +
                             " --cluster preset:dgx-a100-pod:2 --strategy 3d:dp=2,tp=2,pp=4,micro=8 --representative");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("one representative pipeline"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("TFLOP/s per device"), std::string::npos) << text.output;

  const Outcome no_spec = aware("simulate " + graph + " --cluster preset:dgx-a100-pod:2 --representative");
  EXPECT_NE(no_spec.exit_code, 0);
  EXPECT_NE(no_spec.output.find("--representative needs --strategy"), std::string::npos) << no_spec.output;
  const Outcome zero =
      aware("simulate " + graph + " --cluster preset:dgx-a100-pod:2 --strategy 3d:dp=2,zero=3 --representative");
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_EQ(lines_of(zero.output).size(), 1u) << zero.output;
  EXPECT_NE(zero.output.find("ZeRO"), std::string::npos) << zero.output;

  const Outcome search = aware("strategy search " + graph +
                               " --cluster preset:dgx-a100-pod:1 --three-d --representative --json",
                               true);
  ASSERT_EQ(search.exit_code, 0) << search.output;
  const auto s = nlohmann::json::parse(search.output);
  ASSERT_TRUE(s.contains("best"));
  bool best_has_mfu = false;
  for (const auto& c : s["candidates"])
    if (c["spec"] == s["best"]) best_has_mfu = c.contains("mfu") && c.contains("tensor_parallel_share");
  EXPECT_TRUE(best_has_mfu) << search.output;
  const Outcome alone = aware("strategy search " + graph + " --cluster preset:dgx-a100-pod:1 --representative");
  EXPECT_NE(alone.exit_code, 0);
  EXPECT_NE(alone.output.find("give --three-d"), std::string::npos) << alone.output;
  // --interleave 2 adds interleaved:2 candidates (4 layers: on pp = 2 only).
  const Outcome interleaved = aware("strategy search " + graph +
                                    " --cluster preset:dgx-a100-pod:1 --three-d --representative --interleave 2 --json",
                                    true);
  ASSERT_EQ(interleaved.exit_code, 0) << interleaved.output;
  int offered = 0;
  const auto with_interleaving = nlohmann::json::parse(interleaved.output);
  for (const auto& c : with_interleaving["candidates"])
    offered += c["spec"].get<std::string>().find("schedule=interleaved:2") != std::string::npos;
  EXPECT_GT(offered, 0);
  const Outcome bad = aware("strategy search " + graph + " --cluster preset:dgx-a100-pod:1 --three-d --representative "
                            "--interleave 0");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--interleave must be at least 1"), std::string::npos) << bad.output;
}
