// `aware` on the command line, for the systems beside placement: parallel
// strategies, the hardware commands (hw/) and the mesh mapper. Placement,
// simulation and bad input in general are in cli_test.cc.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace {

// ---------------------------------------------------------------- strategies

TEST(Cli, StrategyApplyWritesGraphPlacementAndSummary) {
  const std::string dir = tmp("strategy-dp");
  std::filesystem::remove_all(dir);
  const Outcome r = aware("strategy apply --graph zoo:resnet50:batch=8 --cluster preset:k40x4 "
                          "--strategy dp:4,collective=tree -o " + dir + " --json", true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto summary = nlohmann::json::parse(r.output);
  EXPECT_EQ(summary["spec"], "dp:4,collective=tree,bucket_mb=25,overlap=on");
  EXPECT_EQ(summary["replicas"], 4);
  EXPECT_GT(summary["samples_per_s"].get<double>(), 0);
  // The files read back: the rewritten graph simulates with its placement.
  const Outcome sim = aware("simulate --graph " + dir + "/graph.json --cluster preset:k40x4 --placement " +
                            dir + "/placement.json --json", true);
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_NEAR(nlohmann::json::parse(sim.output)["step_time_us"].get<double>(),
              summary["step"]["step_time_us"].get<double>(), 1e-6);
}

// A data-parallel step's collectives run on each device's communication stream,
// beside its compute: the busy column sums both and may pass the step, which the
// table says. A plain placement has one stream per device and no such note.
TEST(Cli, BusyPastTheStepIsExplainedByTheTwoStreams) {
  const Outcome dp = aware("simulate --graph zoo:resnet50 --cluster preset:k40x4 --strategy dp:4");
  ASSERT_EQ(dp.exit_code, 0) << dp.output;
  const Outcome json = aware("simulate --graph zoo:resnet50 --cluster preset:k40x4 --strategy dp:4 --json", true);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto doc = nlohmann::json::parse(json.output);
  bool past = false;
  for (const auto& d : doc["devices"]) past = past || d["busy_us"].get<double>() > doc["step_time_us"].get<double>();
  ASSERT_TRUE(past) << "this case no longer has a device busy past the step: pick another";
  EXPECT_TRUE(contains(dp.output, "busy sums a device's compute and communication streams")) << dp.output;
  const Outcome plain = aware("simulate --graph zoo:resnet50 --cluster preset:k40x4 --placement round-robin");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_FALSE(contains(plain.output, "busy sums")) << plain.output;
}

TEST(Cli, StrategyFlagOnSimulatePlaceAndCompare) {
  const Outcome sim = aware("simulate --graph zoo:resnet50:batch=8 --cluster preset:k40x2 --strategy dp:2");
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_TRUE(contains(sim.output, "samples/s")) << sim.output;
  const std::string out = tmp("strategy-place.json");
  std::filesystem::remove(out);
  std::filesystem::remove(out + ".graph.json");
  const Outcome place = aware("place --graph zoo:resnet50:batch=8 --cluster preset:k40x2 --strategy dp:2 "
                              "--method m-etf -o " + out);
  ASSERT_EQ(place.exit_code, 0) << place.output;
  EXPECT_TRUE(std::filesystem::exists(out + ".graph.json"));
  const Outcome cmp = aware("compare --models resnet50 --cluster k40x4 --methods single "
                            "--strategies dp:ring,dp:4,collective=ps,bagging --json", true);
  ASSERT_EQ(cmp.exit_code, 0) << cmp.output;
  const auto doc = nlohmann::json::parse(cmp.output);
  EXPECT_EQ(doc["methods"].size(), 4u);
  EXPECT_EQ(doc["strategies"].size(), 3u);
  EXPECT_EQ(doc["rows"][0]["results"][2]["method"], "dp:4,collective=ps");
  EXPECT_NE(doc["rows"][0]["winner"], "bagging");  // trains other models: never the winner
}

TEST(Cli, StrategySearchRanksCandidatesAndWritesTheWinner) {
  const std::string dir = tmp("strategy-search");
  std::filesystem::remove_all(dir);
  const Outcome r = aware("strategy search --graph zoo:resnet50:batch=8 --cluster preset:k40x2 "
                          "--collectives ring,ps --no-pipelines -o " + dir + " --json", true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output);
  // place:m-etf, dp:2 x {ring, ps}; no hybrid leaves two devices per group on 2 GPUs.
  EXPECT_EQ(doc["candidates"].size(), 3u);
  double best = 1e300;
  for (const auto& c : doc["candidates"])
    if (c["status"] == "ok") best = std::min(best, c["step_time_us"].get<double>());
  EXPECT_DOUBLE_EQ(doc["best_step_time_us"].get<double>(), best);
  std::ifstream summary(dir + "/strategy.json");
  ASSERT_TRUE(summary.good());
  EXPECT_EQ(nlohmann::json::parse(summary)["spec"], doc["best"]);
  const Outcome bad = aware("strategy search --graph zoo:resnet50 --collectives mesh -o " + dir + "-bad");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(contains(bad.output, "collective 'mesh'")) << bad.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "-bad"));
}

TEST(Cli, StrategyBadInputFailsInOneLineAndWritesNothing) {
  const std::string dir = tmp("strategy-bad");
  std::filesystem::remove_all(dir);
  const std::string graph = tmp("nobatch.json");
  write(graph, kSmallGraph);
  struct Case {
    std::string args, says;
  } cases[] = {
      {"--graph zoo:resnet50 --strategy dq:4", "unknown kind 'dq'"},
      {"--graph zoo:resnet50 --strategy dp:8", "cluster 'k40x4' has 4"},
      {"--graph zoo:resnet50 --strategy dp:4,micro=3", "takes no option 'micro'"},
      {"--graph zoo:resnet50:batch=2 --strategy dp:4", "cannot be split into 4"},
      {"--graph " + graph + " --strategy dp:2", "records no batch size"},
      {"--graph zoo:resnet50 --strategy hybrid:2xnope", "unknown method 'nope'"},
  };
  for (const Case& c : cases) {
    const Outcome r = aware("strategy apply --cluster preset:k40x4 -o " + dir + " " + c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_TRUE(contains(r.output, c.says)) << c.args << ": " << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir)) << c.args;
  }
  const Outcome both = aware("simulate --graph zoo:resnet50 --strategy dp:2 --placement single");
  EXPECT_NE(both.exit_code, 0);
  EXPECT_TRUE(contains(both.output, "--placement and --strategy")) << both.output;
}

}  // namespace

namespace {

// ---------------------------------------------------------------- hardware (hw/)

const char* kTimedGraph = R"({"format":"aware-graph","version":1,"name":"timed","ops":[
  {"name":"a","compute_us":800,"output_bytes":[65536]},
  {"name":"b","compute_us":1200,"output_bytes":[65536]},
  {"name":"c","compute_us":900,"output_bytes":[65536]},
  {"name":"d","compute_us":300,"output_bytes":[4096]}],
  "edges":[{"src":"a","dst":"b"},{"src":"a","dst":"c"},{"src":"b","dst":"d"},{"src":"c","dst":"d"}]})";

TEST(Cli, CalibrateThenValidateThenPredictAgainWithoutRunning) {
  const std::string graph = tmp("timed.json"), cluster = tmp("calibrated.json"),
                    costs = tmp("costs.json"), report = tmp("calibration.json"),
                    validated = tmp("validate.json"), again = tmp("validate-again.json");
  write(graph, kTimedGraph);
  for (const auto& f : {cluster, costs, report, validated, again}) std::filesystem::remove(f);
  const Outcome cal = aware("calibrate --backend cpu --devices 2 --option repeats=2 --option warmup=0 -o " +
                            cluster + " --report " + report + " --profile-graph " + graph +
                            " --costs-out " + costs + " --rounds 1");
  ASSERT_EQ(cal.exit_code, 0) << cal.output;
  EXPECT_TRUE(contains(cal.output, "GFLOP/s")) << cal.output;
  const auto table = nlohmann::json::parse(std::ifstream(costs));
  EXPECT_EQ(table["costs"]["cpu"].size(), 4u);  // every op of the graph, for kind cpu
  EXPECT_GE(table["costs"]["cpu"]["b"].get<double>(), 1200);
  const auto cal_report = nlohmann::json::parse(std::ifstream(report));
  EXPECT_GT(cal_report["peak_flops"].get<double>(), 0);
  EXPECT_EQ(cal_report["copies"].size(), 2u);

  // Single on each device, round-robin, m-ETF and two random placements: 6 rows.
  const std::string common = "--graph " + graph + " --cluster " + cluster + " --costs " + costs +
                             " --methods m-etf --random 2 --simulators analytic";
  const Outcome val = aware("validate " + common + " --rounds 1 --option repeats=2 -o " + validated);
  ASSERT_EQ(val.exit_code, 0) << val.output;
  const auto doc = nlohmann::json::parse(std::ifstream(validated));
  ASSERT_EQ(doc["rows"].size(), 6u);
  for (const auto& row : doc["rows"]) {
    // A spin-only graph: measured no shorter than its critical path (a, b, d).
    EXPECT_GE(row["measured_us"].get<double>(), 800 + 1200 + 300) << row.dump();
    EXPECT_GT(row["predicted_us"]["analytic"].get<double>(), 0);
    // Memory: the executor's counted peak beside the simulator's prediction.
    EXPECT_GT(row["measured_peak_bytes"].get<double>(), 0) << row.dump();
    EXPECT_GT(row["predicted_peak_bytes"]["analytic"].get<double>(), 0) << row.dump();
  }
  EXPECT_EQ(doc["summary"]["all"]["analytic"]["count"].get<int>(), 6);
  // Every op was profiled; the calibrated cluster draws no warning.
  EXPECT_EQ(table["version"], 2);
  EXPECT_EQ(table["fits"]["cpu"].count("*"), 1u) << table.dump();
  EXPECT_EQ(doc["costs_coverage"]["timed"]["ops_unprofiled"], 0) << doc.dump();
  EXPECT_EQ(doc["cluster_calibrated"], true);
  EXPECT_FALSE(contains(val.output, "warning")) << val.output;

  // Predicting the same measurements again runs nothing and keeps them.
  const Outcome replay =
      aware("validate " + common + " --measured " + validated +
            " --sim-option analytic:slowdown.compute=2 -o " + again);
  ASSERT_EQ(replay.exit_code, 0) << replay.output;
  EXPECT_FALSE(contains(replay.output, "measured ")) << replay.output;  // no progress lines
  const auto redo = nlohmann::json::parse(std::ifstream(again));
  ASSERT_EQ(redo["rows"].size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(redo["rows"][i]["measured_us"], doc["rows"][i]["measured_us"]);
    EXPECT_EQ(redo["rows"][i]["measured_peak_bytes"], doc["rows"][i]["measured_peak_bytes"]);
  }

  // --slowdowns-from takes calibrate's two-at-once factors and the size from
  // which streaming passes compete: the same predictions as those given by hand.
  const double gemm = cal_report["concurrent_gemm_slowdown"].get<double>();
  const double stream = cal_report["concurrent_stream_slowdown"].get<double>();
  ASSERT_GT(gemm, 0);
  const Outcome from = aware("validate " + common + " --measured " + validated + " --slowdowns-from " + report + " --json", true);
  const Outcome by_hand = aware("validate " + common + " --measured " + validated +
                                " --sim-option analytic:slowdown.compute=" + std::to_string(gemm) +
                                " --sim-option analytic:slowdown.memory=" + std::to_string(stream) +
                                " --sim-option analytic:slowdown.memory_from_bytes=" +
                                std::to_string(cal_report["concurrent_stream_from_bytes"].get<double>()) + " --json",
                                true);
  ASSERT_EQ(from.exit_code, 0) << from.output;
  ASSERT_EQ(by_hand.exit_code, 0) << by_hand.output;
  const auto a = nlohmann::json::parse(from.output);
  const auto b = nlohmann::json::parse(by_hand.output);
  ASSERT_EQ(a["rows"].size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(a["rows"][i]["predicted_us"], b["rows"][i]["predicted_us"]) << i;
  EXPECT_EQ(a["sim_options"], b["sim_options"]);

  // Against a preset nobody calibrated: one warning line, naming the command.
  const Outcome preset = aware("validate --graph " + graph + " --cluster preset:cpu-host --costs " + costs +
                               " --methods m-etf --random 2 --simulators analytic --measured " + validated);
  ASSERT_EQ(preset.exit_code, 0) << preset.output;
  EXPECT_TRUE(contains(preset.output, "warning: --cluster preset:cpu-host was not calibrated")) << preset.output;
  EXPECT_TRUE(contains(preset.output, "aware calibrate --backend cpu")) << preset.output;
}

TEST(Cli, CostFitsPriceUnprofiledOpsAndAnUncalibratedClusterIsNamed) {
  // A table of two MatMuls measured by hand, fitted, then a graph of a third size.
  const std::string graph = tmp("mm.json"), costs = tmp("mm-costs.json"), fitted = tmp("mm-fitted.json"),
                    bigger = tmp("mm-bigger.json");
  write(graph, R"({"format":"aware-graph","version":1,"name":"mm","ops":[
    {"name":"a","type":"MatMul","flops":1e9,"output_bytes":[4]},
    {"name":"b","type":"MatMul","flops":3e9,"output_bytes":[4]},
    {"name":"c","type":"MatMul","flops":2e9,"output_bytes":[4]},
    {"name":"d","type":"MatMul","flops":4e9,"output_bytes":[4]}],"edges":[]})");
  // 10 us + flops at 1 TFLOP/s.
  write(costs, R"({"format":"aware-cost-table","version":1,"costs":{"cpu":{"a":1010,"b":3010,"c":2010,"d":4010}}})");
  write(bigger, R"({"format":"aware-graph","version":1,"name":"mm2","ops":[
    {"name":"e","type":"MatMul","flops":8e9,"output_bytes":[4]}],"edges":[]})");
  std::filesystem::remove(fitted);
  const Outcome fit = aware("costs fit --costs " + costs + " --graph " + graph + " -o " + fitted);
  ASSERT_EQ(fit.exit_code, 0) << fit.output;
  EXPECT_TRUE(contains(fit.output, "MatMul")) << fit.output;
  const Outcome sim = aware("simulate --graph " + bigger + " --cluster preset:cpu-host --option costs=" + fitted +
                            " --json", true);
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_NEAR(nlohmann::json::parse(sim.output)["step_time_us"].get<double>(), 8010, 1e-3);
  const Outcome text = aware("simulate --graph " + bigger + " --cluster preset:cpu-host --option costs=" + fitted);
  EXPECT_TRUE(contains(text.output, "1 priced by the table's per-type fits")) << text.output;
  // Bad input: graphs the table does not price, in one line.
  const Outcome none = aware("costs fit --costs " + costs + " --graph " + bigger + " -o " + tmp("none.json"));
  EXPECT_NE(none.exit_code, 0);
  EXPECT_TRUE(contains(none.output, "no entry of the table")) << none.output;
  EXPECT_FALSE(std::filesystem::exists(tmp("none.json")));
}

TEST(Cli, ValidateOutOfSampleProfilesThenPredictsWhatItDidNotProfile) {
  // The default without --costs: profile rnnlm, then measure and predict its
  // placements, rnnlm at twice the batch and nmt2 (never profiled).
  const std::string out = tmp("oos.json"), costs = tmp("oos-costs.json");
  std::filesystem::remove(out);
  std::filesystem::remove(costs);
  const std::string common = "validate --graph zoo:rnnlm:batch=2,hidden=64,vocab=500,seq_len=4 "
                             "--cluster preset:cpu-host --methods m-etf --random 2 --rounds 1 --option repeats=1 "
                             "--option warmup=0 --simulators analytic --bootstrap 50";
  const Outcome o = aware(common + " --profile-rounds 1 --holdout zoo:nmt2:batch=2,vocab=500,hidden=64,seq_len=4 "
                          "--costs-out " + costs + " -o " + out);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto doc = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(doc["protocol"], "out-of-sample");
  std::set<std::string> sets;
  for (const auto& s : doc["summary"]) {
    sets.insert(s["set"].get<std::string>());
    EXPECT_LE(s["kendall_tau_90"][0].get<double>(), s["kendall_tau_90"][1].get<double>()) << s.dump();
    EXPECT_TRUE(s.contains("mean_step_median_abs_rel_error"));
    EXPECT_TRUE(s.contains("cut_edges_kendall_tau"));
  }
  EXPECT_EQ(sets, (std::set<std::string>{"held-out placements", "batch 2B, not profiled", "model never profiled"}));
  const auto table = nlohmann::json::parse(std::ifstream(costs));
  // The profile, with its fits, and (two or more cores) rnnlm beside a copy of
  // itself: a contention factor per op type (version 3).
  EXPECT_TRUE(table.contains("fits"));
  EXPECT_EQ(table["version"], table.contains("pair_slowdowns") ? 3 : 2);
  EXPECT_EQ(doc["pair_slowdown_types"].get<int>() > 0, table.contains("pair_slowdowns"));
  std::set<std::string> graphs;
  for (const auto& r : doc["rows"]) graphs.insert(r["graph"].get<std::string>());
  EXPECT_EQ(graphs, (std::set<std::string>{"rnnlm", "rnnlm@2B", "nmt2"}));
  EXPECT_TRUE(contains(o.output, "rnnlm@2B: ")) << o.output;  // its ops priced by their profile, scaled
  EXPECT_TRUE(contains(o.output, "scaled by their type's fit")) << o.output;
  // A replay: the same measurements and profile, predicted again (nothing run):
  // with the same settings, the same predictions.
  const std::string again = tmp("oos-replay.json");
  const Outcome r = aware(common + " --holdout zoo:nmt2:batch=2,vocab=500,hidden=64,seq_len=4 --measured " + out +
                          " --costs " + costs + " -o " + again);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto replayed = nlohmann::json::parse(std::ifstream(again));
  EXPECT_EQ(replayed["measured_from"], out);
  ASSERT_EQ(replayed["rows"].size(), doc["rows"].size());
  for (size_t i = 0; i < doc["rows"].size(); ++i) {
    const auto& a = doc["rows"][i];
    const auto& b = replayed["rows"][i];
    EXPECT_EQ(a["placement"], b["placement"]);
    EXPECT_EQ(a["measured_us"], b["measured_us"]);
    EXPECT_NEAR(a["predicted_us"]["analytic"].get<double>(), b["predicted_us"]["analytic"].get<double>(),
                1e-6 * a["predicted_us"]["analytic"].get<double>())
        << a["graph"] << " " << a["placement"];
  }
  // Bad combinations are one line each.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {common + " --protocol out-of-sample --costs " + costs, "leave out --costs"},
      {common + " --protocol out-of-sample --measured " + out, "give its profiled table as --costs"},
      {common + " --protocol out-of-sample --measured " + costs + " --costs " + costs, "not an aware validate JSON"},
      {common + " --protocol sideways", "--protocol must be in-sample or out-of-sample"},
      {common + " --costs " + costs + " --holdout zoo:nmt2", "--holdout"},
  };
  for (const auto& [args, message] : bad) {
    const Outcome b = aware(args);
    EXPECT_NE(b.exit_code, 0) << args;
    EXPECT_TRUE(contains(b.output, message)) << args << "\n" << b.output;
  }
}

TEST(Cli, MeasureSetsTheRealLibTorchStepBesideTheExecutorAndTheSimulator) {
  if (aware("measure --help").exit_code != 0) GTEST_SKIP() << "this build has no LibTorch step (aware measure)";
  const std::string conv = std::string(AWARE_SOURCE_DIR) + "/tests/fixtures/models/conv_traced.pt";
  const std::string out = tmp("measure.json");
  std::filesystem::remove(out);
  const Outcome m = aware("measure " + conv + " --input-shape x=4x3x16x16 --repeats 3 -o " + out);
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_TRUE(contains(m.output, "warning: --cluster preset:cpu-host was not calibrated")) << m.output;
  const auto doc = nlohmann::json::parse(std::ifstream(out));
  ASSERT_EQ(doc["rows"].size(), 3u) << doc.dump();
  EXPECT_EQ(doc["rows"][0]["what"], "libtorch");
  EXPECT_EQ(doc["rows"][1]["what"], "cpu executor");
  EXPECT_EQ(doc["rows"][2]["what"], "analytic");
  for (const auto& row : doc["rows"]) EXPECT_GT(row["step_us"].get<double>(), 0) << row.dump();
  EXPECT_EQ(doc["rows"][0]["error_vs_libtorch"], 0);
  EXPECT_EQ(doc["parameters"], 314);
  // Bad input: one line, nothing written.
  const std::string none = tmp("measure-none.json");
  const Outcome bad = aware("measure " + conv + " -o " + none);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(contains(bad.output, "--input-shape x=")) << bad.output;
  EXPECT_FALSE(std::filesystem::exists(none));
}

TEST(Cli, HardwareCommandsRefuseBadInputInOneLine) {
  const std::string graph = tmp("timed.json");
  write(graph, kTimedGraph);
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"validate --graph " + graph + " --cluster preset:cpu-host --backend analytic",
       "not a hardware executor"},
      {"validate --graph " + graph + " --cluster preset:cpu-host --sim-option nonsense",
       "SIMULATOR:KEY=VALUE"},
      {"validate --graph " + graph + " --cluster preset:cpu-host --sim-option simgridx:a=1",
       "not among --simulators"},
      {"validate --graph " + graph + " --cluster preset:cpu-host --measured " + tmp("no-such.json"),
       "no-such.json"},
      {"validate --graph " + graph + " --cluster preset:cpu-host --slowdowns-from " + graph,
       "field 'concurrent_gemm_slowdown' missing"},
      {"validate --graph " + graph + " --cluster preset:cpu-host --simulators simgrid --slowdowns-from " + graph,
       "add analytic to --simulators"},
      {"calibrate --backend cpu -o " + tmp("c.json") + " --profile-graph " + graph,
       "--costs-out"},
      {"simulate --graph " + graph + " --cluster preset:cpu-host --evaluator cpu --option cores=9999",
       "cores"},
  };
  for (const Case& c : cases) {
    const Outcome o = aware(c.args);
    EXPECT_NE(o.exit_code, 0) << c.args;
    EXPECT_TRUE(contains(o.output, c.message)) << c.args << "\n" << o.output;
  }
  // Without a GPU the cuda evaluator is one line and a non-zero exit.
  const Outcome cuda = aware("simulate --graph " + graph + " --cluster preset:k40x2 --evaluator cuda");
  if (cuda.exit_code != 0 && contains(cuda.output, "cuda")) {
    EXPECT_TRUE(contains(cuda.output, "no CUDA device") || contains(cuda.output, "unknown"))
        << cuda.output;
    int error_lines = 0;
    std::istringstream lines(cuda.output);
    for (std::string line; std::getline(lines, line);) error_lines += line.rfind("error:", 0) == 0;
    EXPECT_EQ(error_lines, 1) << cuda.output;
  }
}

}  // namespace

// aware mesh map: every mapping of a spiking network onto a mesh, scored by
// hop-weighted traffic and the busiest link, and one simulated biological step
// on meshes up to the cluster form's 16,384 cores.
TEST(Cli, MeshMapComparesTheMappings) {
  const std::string out = tmp("mesh.json");
  const Outcome o = aware("mesh map --network snn:layered:8000 --network snn:random:4000:fanout=6 "
                          "--mesh mesh:6x6 --mesh mesh:64x64 --json -o " + out);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto doc = nlohmann::json::parse(std::ifstream(out));
  ASSERT_EQ(doc["cases"].size(), 2u);
  const auto& small = doc["cases"][0];
  EXPECT_EQ(small["mesh"], "mesh:6x6");
  EXPECT_EQ(small["groups"], 8 * 16);
  ASSERT_EQ(small["results"].size(), 5u);
  double hilbert = -1, refined = -1;
  for (const auto& r : small["results"]) {
    EXPECT_GT(r["traffic_hops"].get<double>(), 0) << r.dump();
    EXPECT_GT(r["step_us"].get<double>(), 0) << "6x6 is simulated: " << r.dump();
    EXPECT_LE(r["max_core_neurons"].get<double>(), 256) << r.dump();
    if (r["method"] == "hilbert") hilbert = r["traffic_hops"].get<double>();
    if (r["method"] == "force-directed") refined = r["traffic_hops"].get<double>();
  }
  EXPECT_LE(refined, hilbert);
  // 64x64 (4,096 cores, routes made as crossed) is simulated too.
  const auto& big = doc["cases"][1];
  for (const auto& r : big["results"]) EXPECT_GT(r["step_us"].get<double>(), 0) << "64x64 is simulated: " << r.dump();
  EXPECT_FALSE(big.contains("step_note")) << big.dump();
  // Above the cluster form's 16,384 cores: costs, no step, and why.
  const Outcome huge = aware("mesh map --network snn:random:4000 --mesh mesh:160x110 --methods sequential --json", true);
  ASSERT_EQ(huge.exit_code, 0) << huge.output;
  const auto huge_case = nlohmann::json::parse(huge.output)["cases"][0];
  EXPECT_FALSE(huge_case["results"][0].contains("step_us"));
  EXPECT_TRUE(contains(huge_case["step_note"].get<std::string>(), "above the cluster form's 16384")) << huge_case.dump();
  // The Markdown table has a row per method and case.
  const Outcome md = aware("mesh map --network snn:lattice:3000 --mesh mesh:4x4 --methods hilbert,sequential", true);
  ASSERT_EQ(md.exit_code, 0) << md.output;
  EXPECT_TRUE(contains(md.output, "| snn:lattice:3000 | mesh:4x4 | ")) << md.output;
}

TEST(Cli, MeshMapRefusesBadInputInOneLine) {
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"mesh map --network snn:layered:100000 --mesh mesh:4x4", "holds 4096"},
      {"mesh map --network snn:layered:4800:group=300 --mesh mesh:8x8", "more than a core's capacity of 256"},
      {"mesh map --network snn:layered:1000 --mesh mesh:4y4", "size '4y4'"},
      {"mesh map --network snn:blob:1000 --mesh mesh:4x4", "topology 'blob' unknown"},
      {"mesh map --network snn:layered:1000 --mesh mesh:4x4 --methods hilbert,magic", "'magic' unknown"},
      {"mesh map --network snn:layered:1000 --network snn:layered:2000 --mesh mesh:4x4 --mesh mesh:8x8 "
       "--mesh mesh:2x2",
       "one mesh for every --network"},
  };
  for (const Case& c : cases) {
    const std::string out = tmp("mesh-bad.json");
    std::remove(out.c_str());
    const Outcome o = aware(c.args + " -o " + out);
    EXPECT_NE(o.exit_code, 0) << c.args;
    EXPECT_TRUE(contains(o.output, c.message)) << c.args << "\n" << o.output;
    EXPECT_FALSE(std::ifstream(out).good()) << "nothing written: " << c.args;
  }
}
