// `aware reproduce`: a smoke run's report, resumption cell by cell, and a folder
// of another build refused.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;

nlohmann::json summary(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "summary.json");
  return nlohmann::json::parse(in);
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Reproduce, SmokeRunWritesTheReportAndResumesCellByCell) {
  const std::string dir = tmp("reproduce-smoke");
  fs::remove_all(dir);
  const Outcome first = aware("reproduce --budget smoke --jobs 2 -o " + dir);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(summary(dir)["computed"], 10);
  EXPECT_EQ(summary(dir)["skipped"], 0);
  const std::string report = read_all(fs::path(dir) / "REPORT.md");
  EXPECT_TRUE(contains(report, "## compare")) << report;
  EXPECT_TRUE(contains(report, "| resnet50 |")) << report;
  EXPECT_TRUE(contains(report, "| nmt2 |")) << report;
  EXPECT_TRUE(contains(report, "**")) << "a best cell per row";
  EXPECT_TRUE(contains(first.output, "[10/10]")) << first.output;
  EXPECT_TRUE(fs::exists(fs::path(dir) / "compare-k40x4.json"));
#ifdef AWARE_GUI_BIN
  // With the GUI built, the chart is drawn and linked from the report.
  const fs::path png = fs::path(dir) / "figures" / "compare-k40x4.png";
  ASSERT_TRUE(fs::exists(png)) << report;
  EXPECT_GT(fs::file_size(png), 5000u);
  EXPECT_TRUE(contains(report, "![compare on k40x4](figures/compare-k40x4.png)")) << report;
#else
  EXPECT_TRUE(contains(report, "No figures")) << report;
#endif

  // Run again: nothing to compute. Lose one cell: exactly that one runs.
  const Outcome again = aware("reproduce --budget smoke --jobs 2 -o " + dir);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(summary(dir)["computed"], 0);
  EXPECT_EQ(summary(dir)["skipped"], 10);
  ASSERT_TRUE(fs::remove(fs::path(dir) / "cells" / "compare__nmt2__k40x4__m-etf__s1__e50.json"));
  const Outcome one = aware("reproduce --budget smoke --jobs 2 -o " + dir);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(summary(dir)["computed"], 1);
  EXPECT_EQ(summary(dir)["skipped"], 9);
  // The same tables from resumed cells (the header counts differ).
  const std::string resumed = read_all(fs::path(dir) / "REPORT.md");
  EXPECT_EQ(resumed.substr(resumed.find("## compare")), report.substr(report.find("## compare")));
}

int finished_cells(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "cells", ec))
    n += e.path().extension() == ".json" && e.path().filename().string()[0] != '.';
  return n;
}

// Killed (SIGKILL) after a few cells, then run again: the finished cells are not
// run again, the rest are, and the tables come out whole.
TEST(Reproduce, AKilledRunResumesWithoutRedoingFinishedCells) {
  const std::string dir = tmp("reproduce-killed");
  fs::remove_all(dir);
  const std::string start = std::string(AWARE_BIN) + " reproduce --budget smoke --jobs 1 -o " + dir +
                            " > /dev/null 2>&1 & echo $!";
  FILE* pipe = popen(start.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  int pid = 0;
  ASSERT_EQ(fscanf(pipe, "%d", &pid), 1);
  pclose(pipe);
  for (int i = 0; i < 1200 && finished_cells(dir) < 3; ++i) usleep(50 * 1000);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  usleep(300 * 1000);
  const int before = finished_cells(dir);
  ASSERT_GE(before, 3);
  ASSERT_LT(before, 10) << "the run ended before it could be killed";
  const Outcome rest = aware("reproduce --budget smoke --jobs 2 -o " + dir);
  ASSERT_EQ(rest.exit_code, 0) << rest.output;
  EXPECT_GE(summary(dir)["skipped"].get<int>(), before);
  EXPECT_EQ(summary(dir)["computed"].get<int>() + summary(dir)["skipped"].get<int>(), 10);
  EXPECT_EQ(finished_cells(dir), 10);
  EXPECT_FALSE(contains(read_all(fs::path(dir) / "REPORT.md"), "| - |")) << "every cell present";
}

TEST(Reproduce, AnotherBuildsFolderIsRefused) {
  const std::string dir = tmp("reproduce-other");
  fs::remove_all(dir);
  fs::create_directories(dir);
  write(dir + "/manifest.json", R"({"tool": "aware reproduce", "build": "0000000000000000"})");
  const Outcome r = aware("reproduce --budget smoke -o " + dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "another build")) << r.output;
  EXPECT_FALSE(fs::exists(fs::path(dir) / "REPORT.md"));
}

TEST(Reproduce, BadArgumentsAreOneLineErrors) {
  const std::string dir = tmp("reproduce-bad");
  for (const std::string& args : {"--budget huge", "--only tables", "--seeds 0", "--seeds 1,x"}) {
    const Outcome r = aware("reproduce " + args + " -o " + dir);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "error: ")) << args << ": " << r.output;
    EXPECT_FALSE(fs::exists(fs::path(dir) / "REPORT.md")) << args;
  }
  const Outcome unwritable = aware("reproduce --budget smoke -o /proc/no-such/dir");
  EXPECT_EQ(unwritable.exit_code, 1) << unwritable.output;
  EXPECT_TRUE(contains(unwritable.output, "/proc/no-such/dir")) << unwritable.output;
}

}  // namespace
