// Issue 39's rows as regression tests: the binary run as a new user would run it.
#include <gtest/gtest.h>

#include "cli_run.h"

// strategy search, compare, reproduce rows
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

// A refusal: exit 1 and one line, "error: ..." naming `what`.
void expect_one_line_error(const Outcome& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::vector<std::string> lines = lines_of(r.output);
  ASSERT_EQ(lines.size(), 1u) << r.output;
  EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << r.output;
  EXPECT_TRUE(contains(lines[0], what)) << r.output;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// --budget-evals 3 of 12 candidates: 3 evaluations, the 9 others listed as not
// tried, progress that does not claim 12/12, and (most promising first) the same
// winner as the whole search: dp over all four GPUs, not dp:2.
TEST(BadInput, StrategySearchBudgetTriesTheMostPromisingAndSaysWhatItSkipped) {
  const std::string search = "strategy search --graph zoo:resnet50 --cluster preset:k40x4";
  const Outcome all = aware(search + " --json", true);
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const auto whole = nlohmann::json::parse(all.output);
  EXPECT_EQ(whole["candidates"].size(), 12u);
  EXPECT_TRUE(whole["not_tried"].empty());

  const Outcome cut = aware(search + " --budget-evals 3 --json", true);
  ASSERT_EQ(cut.exit_code, 0) << cut.output;
  const auto doc = nlohmann::json::parse(cut.output);
  EXPECT_EQ(doc["evaluations"], 3);
  EXPECT_EQ(doc["candidates"].size(), 3u);
  EXPECT_EQ(doc["not_tried"].size(), 9u);
  EXPECT_EQ(doc["best"], whole["best"]);
  EXPECT_EQ(doc["best"].get<std::string>().rfind("dp:4,", 0), 0u) << doc.dump(1);

  const Outcome text = aware(search + " --budget-evals 3");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_FALSE(contains(text.output, "12/12")) << text.output;
  EXPECT_TRUE(contains(text.output, "9 of 12 candidates")) << text.output;
  const std::regex untried_row(R"(^\S+\s+not tried\s+-\s+-$)");
  int untried = 0;
  for (const std::string& line : lines_of(text.output)) untried += std::regex_match(line, untried_row);
  EXPECT_EQ(untried, 9) << text.output;
}

// The budget is never exceeded: not by the refiner's final step (200, not 201),
// not by a searching method inside the candidates. The printed path has one slash.
TEST(BadInput, StrategySearchNeverSpendsMoreThanItsBudget) {
  const Outcome refined = aware(
      "strategy search --graph zoo:resnet50:batch=8,image_size=32 --cluster preset:k40x4 --budget-evals 200 "
      "--refine anneal --json", true);
  ASSERT_EQ(refined.exit_code, 0) << refined.output;
  EXPECT_EQ(nlohmann::json::parse(refined.output)["evaluations"], 200);

  const Outcome searching = aware(
      "strategy search --graph zoo:resnet50:batch=8,image_size=32 --cluster preset:k40x4 --methods anneal "
      "--budget-evals 40 --json", true);
  ASSERT_EQ(searching.exit_code, 0) << searching.output;
  const auto doc = nlohmann::json::parse(searching.output);
  EXPECT_LE(doc["evaluations"].get<long long>(), 40);
  EXPECT_EQ(doc["candidates"].size() + doc["not_tried"].size(), 12u);

  const std::string dir = tmp("strategy-search-slash");
  fs::remove_all(dir);
  const Outcome wrote = aware("strategy search --graph zoo:resnet50:batch=8,image_size=32 --cluster preset:k40x4 "
                              "--no-pipelines -o " + dir + "/");
  ASSERT_EQ(wrote.exit_code, 0) << wrote.output;
  EXPECT_TRUE(contains(wrote.output, dir + "/{graph,placement,strategy}.json")) << wrote.output;
  EXPECT_FALSE(contains(wrote.output, "//")) << wrote.output;
}

// util is the share of the step a device is busy on either stream: never past
// 100%, though busy (both streams summed) passes the step under dp's overlap.
TEST(BadInput, StrategyApplyUtilNeverPassesTheStep) {
  const std::string dir = tmp("strategy-apply-util");
  fs::remove_all(dir);
  const Outcome r = aware("strategy apply --graph zoo:resnet50 --cluster preset:k40x4 --strategy dp:4 -o " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::regex row(R"(^gpu\d+\s+[\d.]+ ms\s+([\d.]+)%)");
  int rows = 0;
  for (const std::string& line : lines_of(r.output)) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    ++rows;
    EXPECT_LE(std::stod(m[1]), 100.0) << line;
  }
  EXPECT_EQ(rows, 4) << r.output;
}

TEST(BadInput, StrategySearchRefusesAnEmptyCollectiveListAndARefinerThatCannotRefine) {
  const std::string dir = tmp("strategy-search-refused");
  fs::remove_all(dir);
  const std::string search = "strategy search --graph zoo:resnet50:batch=8,image_size=32 --cluster preset:k40x4 ";
  expect_one_line_error(aware(search + "--collectives \"\" -o " + dir), "--collectives");
  expect_one_line_error(aware(search + "--collectives , -o " + dir), "--collectives");
  const Outcome refine = aware(search + "--refine m-etf --budget-evals 100 -o " + dir);
  expect_one_line_error(refine, "'m-etf'");
  EXPECT_TRUE(contains(refine.output, "anneal")) << refine.output;  // names those that can
  EXPECT_FALSE(fs::exists(dir));
}

// A graph without a batch: every split candidate fails for the one reason, which
// the text output gives once (the JSON keeps it per candidate).
TEST(BadInput, StrategySearchGivesACommonFailureReasonOnce) {
  const std::string graph = tmp("strategy-search-nobatch.json");
  write(graph, kSmallGraph);
  const Outcome r = aware("strategy search --graph " + graph + " --cluster preset:k40x4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "records no batch size"), 1u) << r.output;
  EXPECT_TRUE(contains(r.output, "alike for 10 more candidates")) << r.output;
  EXPECT_TRUE(contains(r.output, "no batch recorded")) << r.output;
}

TEST(BadInput, AStrategyCountPastAnIntSaysTheLimit) {
  const std::string dir = tmp("strategy-apply-huge");
  fs::remove_all(dir);
  for (const std::string& spec : {"dp:99999999999999999999999", "pipeline:4,micro=99999999999"}) {
    const Outcome r = aware("strategy apply --graph zoo:resnet50 --strategy " + spec + " -o " + dir);
    expect_one_line_error(r, "too large (at most 2147483647");
    EXPECT_FALSE(contains(r.output, "not a whole number")) << r.output;
  }
  EXPECT_FALSE(fs::exists(dir));
}

// compare checks every strategy spec before any cell, as strategy apply does.
TEST(BadInput, CompareRefusesABadStrategySpecBeforeAnyWork) {
  const std::string out = tmp("compare-bad-spec.csv");
  fs::remove(out);
  const std::string compare = "compare --models resnet50 --cluster k40x4 --methods none -o " + out + " --strategies ";
  expect_one_line_error(aware(compare + "\"dp:4,collective=ps,pipeline,dp:0\""), "strategy 'dp:0'");
  expect_one_line_error(aware(compare + "\"pipeline:2,micro=0\""), "micro-batch count");
  expect_one_line_error(aware(compare + "hybrid:2xno-such-placer"), "no-such-placer");
  expect_one_line_error(aware(compare + "\"dp:2,bucket_mb=-1\""), "bucket_mb");
  EXPECT_FALSE(fs::exists(out));
}

// With stderr a log file, a search that ends prints its last progress state once,
// not once for its last step and again for "done".
TEST(BadInput, CompareProgressInALogHasNoRepeatedLines) {
  const std::string err = tmp("compare-progress.err");
  const std::string cmd = std::string(AWARE_BIN) +
                          " compare --models resnet50 --cluster k40x4 --methods m-etf,anneal "
                          "--budget-evals 50 >/dev/null 2>" + err;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_text(err);
  const std::vector<std::string> lines = lines_of(read_text(err));
  ASSERT_FALSE(lines.empty());
  // A state is the task and its count ("anneal on resnet50 50/50 (100%)"); the
  // time and a trailing "done" may differ between the repeats.
  const std::regex state(R"(^.*? \d+/\d+ \(\d+%\))");
  std::set<std::string> seen;
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find('\r'), std::string::npos) << line;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, state)) << line;
    EXPECT_TRUE(seen.insert(m[0]).second) << "repeated: " << line;
  }
  EXPECT_TRUE(contains(read_text(err), "anneal on ")) << read_text(err);
}

// --report-only creates nothing: not a missing folder, nor anything in an empty one.
TEST(BadInput, ReproduceReportOnlyLeavesNothingBehind) {
  const std::string missing = tmp("reproduce-report-only-missing");
  const std::string empty = tmp("reproduce-report-only-empty");
  fs::remove_all(missing);
  fs::remove_all(empty);
  fs::create_directories(empty);
  expect_one_line_error(aware("reproduce --report-only -o " + missing), "no manifest.json");
  EXPECT_FALSE(fs::exists(missing));
  expect_one_line_error(aware("reproduce --report-only -o " + empty), "no manifest.json");
  EXPECT_TRUE(fs::is_empty(empty));
}

// Given but empty --seeds, and --evals 0, are refused, not read as "the budget's".
TEST(BadInput, ReproduceRefusesEmptySeedsAndZeroEvals) {
  const std::string dir = tmp("reproduce-empty-seeds");
  fs::remove_all(dir);
  expect_one_line_error(aware("reproduce --seeds \"\" --only compare -o " + dir + " --list"), "--seeds");
  expect_one_line_error(aware("reproduce --evals 0 --only compare -o " + dir + " --list"), "--evals 0");
  expect_one_line_error(aware("reproduce --evals 0 --only compare -o " + dir), "--evals 0");
  // A whole number past the range says the range, not that it is no number.
  expect_one_line_error(aware("reproduce --seeds 99999999999 --only compare -o " + dir + " --list"),
                        "'99999999999' is out of range: --seeds takes 1..");
  EXPECT_FALSE(fs::exists(dir));
  // Left out, they are the budget's: the smoke compare cells have 50 evaluations.
  const Outcome listed = aware("reproduce --only compare -o " + dir + " --list");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_TRUE(contains(listed.output, "__s1__e50\t")) << listed.output;
}

// A folder holding a small run's cells and a smoke run's: the smoke report says it
// ignored the small run's cells, and its claims, on one row of 20 evaluations,
// have not enough evidence for a verdict; the small report keeps its verdicts.
// The cells are the committed small study's (the smoke keys are copies of its
// resnet50 / k40x2 cells under the smoke budget's names).
TEST(BadInput, ReproduceReportSaysItIgnoredAnotherBudgetAndWithholdsThinVerdicts) {
  const fs::path dir = tmp("reproduce-mixed");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path study = fs::path(AWARE_SOURCE_DIR) / "experiments/results/reproduce-small";
  fs::copy_file(study / "manifest.json", dir / "manifest.json");
  fs::copy_file(study / "cells.pack.json.gz", dir / "cells.pack.json.gz");
  ASSERT_EQ(aware("reproduce --unpack -o " + dir.string()).exit_code, 0);
  const Outcome plan = aware("reproduce --budget smoke --only table1 --list -o " + dir.string());
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  int copied = 0;
  for (const std::string& line : lines_of(plan.output)) {
    const std::string key = line.substr(0, line.find('\t'));
    std::string small = key;
    small.replace(small.rfind("__e20"), 5, "__e100");
    if (fs::exists(dir / "cells" / (small + ".json"))) {
      fs::copy_file(dir / "cells" / (small + ".json"), dir / "cells" / (key + ".json"));
      ++copied;
    }
  }
  ASSERT_GE(copied, 6);  // aware, placeto, hierarchical on both seeds

  const Outcome smoke = aware("reproduce --budget smoke --only table1 --report-only --gui none -o " + dir.string());
  EXPECT_TRUE(contains(smoke.output, "of another run (`--budget small`: ")) << smoke.output;
  const std::string report = read_text(dir / "REPORT.md");
  EXPECT_TRUE(contains(report, "**Mixed runs:**")) << report;
  EXPECT_TRUE(contains(report, "| Aware's step time is up to 5% lower than Placeto's | not enough evidence at this budget"))
      << report;
  EXPECT_FALSE(contains(report, "| reproduced")) << report;
  EXPECT_FALSE(contains(report, "| partly")) << report;
  EXPECT_FALSE(contains(report, "| not reproduced")) << report;

  const Outcome small = aware("reproduce --budget small --only table1 --report-only --gui none -o " + dir.string());
  const std::string small_report = read_text(dir / "REPORT.md");
  EXPECT_TRUE(contains(small_report, "of another run (`--budget smoke`: ")) << small_report;
  EXPECT_TRUE(contains(small_report, "| Aware's step time is up to 5% lower than Placeto's | partly")) << small_report;
  EXPECT_FALSE(contains(small_report, "not enough evidence at this budget (")) << small_report;
}

// The mesh claim at the smoke budget rests on two cases: not enough for a verdict.
TEST(BadInput, ReproduceSmokeMeshClaimHasNotEnoughCases) {
  const fs::path dir = tmp("reproduce-smoke-mesh");
  fs::remove_all(dir);
  const Outcome r = aware("reproduce --budget smoke --only mesh --gui none --jobs 1 -o " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string report = read_text(dir / "REPORT.md");
  EXPECT_TRUE(contains(report, "beats the simple mappings.** not enough evidence at this budget: ")) << report;
  EXPECT_TRUE(contains(report, " in 2 of 2 cases") || contains(report, " in 1 of 2 cases") ||
              contains(report, " in 0 of 2 cases"))
      << report;
}

}  // namespace
