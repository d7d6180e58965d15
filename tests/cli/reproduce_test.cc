// `aware reproduce`: a smoke run's report, resumption cell by cell, and a folder
// of another build refused.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <zlib.h>

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

// The whole smoke budget: every table's section, every figure drawn (non-empty
// PNGs), the HTML page with the figures inlined, and a second run that computes
// nothing.
TEST(Reproduce, SmokeRunWritesEverySectionAndFigure) {
  const std::string dir = tmp("reproduce-smoke-all");
  fs::remove_all(dir);
  const Outcome first = aware("reproduce --budget smoke --jobs 2 -o " + dir);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const nlohmann::json s = summary(dir);
  EXPECT_EQ(s["failed"], 0);
  EXPECT_EQ(s["skipped"], 0);
  EXPECT_EQ(s["computed"], s["cells"]);
  const std::string report = read_all(fs::path(dir) / "REPORT.md");
  std::vector<std::string> sections = {"## compare", "## fusion", "## strategies", "## mesh"};
  std::vector<std::string> figures = {"strategies-k40x4", "mesh-traffic"};
  EXPECT_TRUE(contains(report, "**Claim (seed family F6)")) << report;
  // The strategy table's one row: ResNet-50 on four K40s, data parallel wins.
  EXPECT_TRUE(contains(report, "| resnet50 | k40x4 | 349.81 | 349.81 (single) | 92.93 | 186.73 | 129.74 | dp:ring | 3.76x |"))
      << report;
#ifdef AWARE_TEST_HAVE_SIMGRID
  sections.push_back("## simgrid");
  figures.push_back("simgrid-scatter");
#endif
#ifdef AWARE_TEST_HAVE_HW
  sections.push_back("## hardware");
  figures.push_back("hardware-scatter");
  // Three simulators on the measured run, and the predict-again row.
  for (const char* sim : {"| analytic |", "| uncalibrated |", "| analytic, slowdowns + copies on the consumer |"})
    EXPECT_TRUE(contains(report, sim)) << sim;
  // The measuring cells ran alone: every other cell had finished when the
  // first of them started, and each finished before the next started.
  {
    const size_t alone = first.output.find("measures on this machine's cores: it runs alone");
    ASSERT_NE(alone, std::string::npos) << first.output;
    int finished_before = 0;
    for (size_t at = first.output.find("\n["); at < alone; at = first.output.find("\n[", at + 1)) ++finished_before;
    EXPECT_EQ(finished_before, s["cells"].get<int>() - 3 - 2) << "all but the hardware and mesh cells (after it)\n"
                                                            << first.output;
  }
#endif
#ifdef AWARE_TEST_HAVE_RL
  for (const char* t : {"## claims", "## agents", "## table1", "## presets", "## transfer", "### Table 2",
                        "### Table 3", "## ablation"})
    sections.push_back(t);
  for (const char* f : {"curves-resnet50-k40x2", "table1-bars", "evals-to-target", "transfer-curves-cifar10-4"})
    figures.push_back(f);
  // The simgrid and strategy tables share m-ETF's placement of resnet50; the
  // hardware table adds calibrate, measure and predict-again, the mesh table two;
  // each held-out family member is placed zero-shot with both decodes; the
  // presets table runs the three paper presets on Table 1's one row, per seed.
#ifdef AWARE_TEST_HAVE_HW
  EXPECT_EQ(s["cells"], 82);
#else
  EXPECT_EQ(s["cells"], 79);
#endif
  // Each paper preset ran for its seconds, and its row carries the episodes played.
  EXPECT_TRUE(contains(report, "each run given 3 s of wall-clock")) << report;
  EXPECT_TRUE(fs::exists(fs::path(dir) / "cells" / "search__resnet50__k40x2__placeto__paper-t3__s1__e0.json"));
  EXPECT_TRUE(contains(report, "zero-shot, balanced decode ms")) << report;
  // The claims checklist gives a verdict per claim.
  for (const char* claim : {"lower than Placeto", "lower than Hierarchical", "transplants", "speeds up convergence",
                            "paper presets at equal wall-clock (paper-t3) | not enough evidence at this budget"})
    EXPECT_TRUE(contains(report, claim)) << claim;
  EXPECT_FALSE(contains(report, "| not run |")) << report;
  // Fine-tuning ran after its pre-trained policy was written, and found it.
  EXPECT_TRUE(fs::exists(fs::path(dir) / "cells" / "pretrain__cifar10__dgx-v100__aware__n4__s1__e30.pt"));
  EXPECT_TRUE(fs::exists(fs::path(dir) / "cells" / "search__cifar10-4__dgx-v100__aware__pretrained__s1__e20.json"));
#else
  EXPECT_TRUE(contains(report, "## left out")) << report;
#endif
  for (const std::string& section : sections) EXPECT_TRUE(contains(report, "\n" + section)) << section << "\n" << report;
  EXPECT_FALSE(contains(report, "was not drawn")) << report;
#ifdef AWARE_PLOT_BIN
  for (const std::string& f : figures) {
    const fs::path png = fs::path(dir) / "figures" / (f + ".png");
    ASSERT_TRUE(fs::exists(png)) << f;
    EXPECT_GT(fs::file_size(png), 5000u) << f;
    EXPECT_TRUE(contains(report, "(figures/" + f + ".png)")) << f;
  }
#endif
#ifdef AWARE_GUI_BIN
  EXPECT_GT(fs::file_size(fs::path(dir) / "figures" / "compare-k40x4.png"), 5000u);
#endif
  const std::string html = read_all(fs::path(dir) / "report.html");
  EXPECT_TRUE(contains(html, "<table>"));
  EXPECT_TRUE(contains(html, "<h2>compare: step time (ms) per placer</h2>")) << html.substr(0, 2000);
#ifdef AWARE_GUI_BIN
  EXPECT_TRUE(contains(html, "src=\"data:image/png;base64,iVBORw0KGgo")) << "PNGs inlined";
#endif

  const Outcome again = aware("reproduce --budget smoke --jobs 2 -o " + dir);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(summary(dir)["computed"], 0);
  EXPECT_EQ(summary(dir)["skipped"], s["cells"]);
  const std::string rerun = read_all(fs::path(dir) / "REPORT.md");
  EXPECT_EQ(rerun.substr(rerun.find("## ")), report.substr(report.find("## "))) << "same tables from the same cells";
}

// One table: resumption cell by cell.
TEST(Reproduce, OneTableResumesCellByCell) {
  const std::string dir = tmp("reproduce-smoke");
  fs::remove_all(dir);
  const Outcome first = aware("reproduce --budget smoke --only compare --jobs 2 -o " + dir);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(summary(dir)["computed"], 10);
  EXPECT_EQ(summary(dir)["skipped"], 0);
  const std::string report = read_all(fs::path(dir) / "REPORT.md");
  EXPECT_TRUE(contains(report, "## compare")) << report;
  EXPECT_FALSE(contains(report, "## table1")) << report;
  EXPECT_TRUE(contains(report, "| resnet50 |")) << report;
  EXPECT_TRUE(contains(report, "| nmt2 |")) << report;
  EXPECT_TRUE(contains(report, "**")) << "a best cell per row";
  EXPECT_TRUE(contains(first.output, "[10/10]")) << first.output;
  EXPECT_TRUE(fs::exists(fs::path(dir) / "compare-k40x4.json"));
  // The cells record their files relative to the report's folder, never the
  // absolute -o path: a folder moved or committed elsewhere reads the same.
  const std::string absolute = fs::absolute(dir).string();
  int recorded = 0;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "cells")) {
    const std::string text = read_all(e.path());
    EXPECT_FALSE(contains(text, absolute)) << e.path();
    recorded += contains(text, "cells/place__");
  }
  EXPECT_GT(recorded, 0) << "the placements are named relative to the report";
#ifdef AWARE_GUI_BIN
  // With the GUI built, the chart is drawn and linked from the report.
  const fs::path png = fs::path(dir) / "figures" / "compare-k40x4.png";
  ASSERT_TRUE(fs::exists(png)) << report;
  EXPECT_GT(fs::file_size(png), 5000u);
  EXPECT_TRUE(contains(report, "![compare on k40x4](figures/compare-k40x4.png)")) << report;
#else
  EXPECT_TRUE(contains(report, "No compare charts")) << report;
#endif

  // Run again: nothing to compute. Lose one cell: exactly that one runs.
  const Outcome again = aware("reproduce --budget smoke --only compare --jobs 2 -o " + dir);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(summary(dir)["computed"], 0);
  EXPECT_EQ(summary(dir)["skipped"], 10);
  ASSERT_TRUE(fs::remove(fs::path(dir) / "cells" / "place__nmt2__k40x4__m-etf__s1__e50.json"));
  const Outcome one = aware("reproduce --budget smoke --only compare --jobs 2 -o " + dir);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(summary(dir)["computed"], 1);
  EXPECT_EQ(summary(dir)["skipped"], 9);
  // The same tables from resumed cells (the header counts differ).
  const std::string resumed = read_all(fs::path(dir) / "REPORT.md");
  EXPECT_EQ(resumed.substr(resumed.find("## compare")), report.substr(report.find("## compare")));

  // --report-only: the report again from the cells, also when they are another
  // build's; nothing runs, no cell and no manifest changes, and it says whose.
  write(dir + "/manifest.json", R"({"tool": "aware reproduce", "build": "00000000000000aa"})");
  const auto stamp = fs::last_write_time(fs::path(dir) / "cells" / "place__nmt2__k40x4__m-etf__s1__e50.json");
  const Outcome only = aware("reproduce --budget smoke --only compare --report-only -o " + dir);
  ASSERT_EQ(only.exit_code, 0) << only.output;
  const std::string again_report = read_all(fs::path(dir) / "REPORT.md");
  EXPECT_TRUE(contains(again_report, "no cell was run")) << again_report;
  EXPECT_TRUE(contains(again_report, "build 00000000000000aa's")) << again_report;
  EXPECT_EQ(again_report.substr(again_report.find("## compare")), report.substr(report.find("## compare")));
  EXPECT_EQ(fs::last_write_time(fs::path(dir) / "cells" / "place__nmt2__k40x4__m-etf__s1__e50.json"), stamp);
  EXPECT_TRUE(contains(read_all(fs::path(dir) / "manifest.json"), "00000000000000aa"));
  EXPECT_EQ(summary(dir)["computed"], 1) << "the run's record is kept";
  // A missing cell is reported, not run.
  ASSERT_TRUE(fs::remove(fs::path(dir) / "cells" / "place__nmt2__k40x4__heft__s1__e50.json"));
  const Outcome gap = aware("reproduce --budget smoke --only compare --report-only -o " + dir);
  EXPECT_NE(gap.exit_code, 0);
  EXPECT_TRUE(contains(gap.output, "1 cells missing")) << gap.output;
  EXPECT_FALSE(fs::exists(fs::path(dir) / "cells" / "place__nmt2__k40x4__heft__s1__e50.json"));
}

int finished_cells(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "cells", ec))
    n += e.path().extension() == ".json" && e.path().filename().string()[0] != '.' &&
         e.path().stem().extension() != ".placement";  // a cell's placement is a side file
  return n;
}

// Killed (SIGKILL) after a few cells, then run again: the finished cells are not
// run again, the rest are, and the tables come out whole.
TEST(Reproduce, AKilledRunResumesWithoutRedoingFinishedCells) {
  const std::string dir = tmp("reproduce-killed");
  fs::remove_all(dir);
  const std::string start = std::string(AWARE_BIN) + " reproduce --budget smoke --only compare --jobs 1 -o " + dir +
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
  const Outcome rest = aware("reproduce --budget smoke --only compare --jobs 2 -o " + dir);
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

// The text of a gzip file (the cells pack).
std::string gunzip(const fs::path& path) {
  std::string text;
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) return text;
  char buffer[1 << 15];
  int n = 0;
  while ((n = gzread(in, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  gzclose(in);
  return text;
}

// --pack moves the cells' files into DIR/cells.pack.json.gz; the report, --report-only
// and the resume check read the packed cells as they read the loose ones, a cell
// run again after packing wins over its packed copy, and --unpack restores them.
TEST(Reproduce, PackedCellsReadAsLooseOnes) {
  const std::string dir = tmp("reproduce-pack");
  fs::remove_all(dir);
  const Outcome first = aware("reproduce --budget smoke --only compare --jobs 2 --gui none -o " + dir);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string report = read_all(fs::path(dir) / "REPORT.md");
  const int loose = finished_cells(dir);
  ASSERT_EQ(loose, 10);

  const Outcome packed = aware("reproduce --pack -o " + dir);
  ASSERT_EQ(packed.exit_code, 0) << packed.output;
  EXPECT_TRUE(contains(packed.output, "packed")) << packed.output;
  EXPECT_EQ(finished_cells(dir), 0) << "the loose files are gone";
  ASSERT_TRUE(fs::exists(fs::path(dir) / "cells.pack.json.gz"));
  const nlohmann::json doc = nlohmann::json::parse(gunzip(fs::path(dir) / "cells.pack.json.gz"));
  EXPECT_EQ(doc["format"], "aware-cells-pack");
  EXPECT_TRUE(doc["files"].contains("place__nmt2__k40x4__m-etf__s1__e50.json"));
  EXPECT_TRUE(doc["files"].contains("place__nmt2__k40x4__m-etf__s1__e50.placement.json"));

  // The same tables from the pack; a run computes nothing.
  const Outcome only = aware("reproduce --budget smoke --only compare --report-only --gui none -o " + dir);
  ASSERT_EQ(only.exit_code, 0) << only.output;
  const std::string from_pack = read_all(fs::path(dir) / "REPORT.md");
  EXPECT_EQ(from_pack.substr(from_pack.find("## compare")), report.substr(report.find("## compare")));
  const Outcome again = aware("reproduce --budget smoke --only compare --jobs 2 --gui none -o " + dir);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(summary(dir)["computed"], 0);
  EXPECT_EQ(summary(dir)["skipped"], 10);

  // A damaged pack is one error naming it.
  const fs::path pack = fs::path(dir) / "cells.pack.json.gz";
  fs::copy_file(pack, tmp("saved.pack.json.gz"), fs::copy_options::overwrite_existing);
  write(pack.string(), R"({"format": "something-else", "files": {}})");
  const Outcome bad = aware("reproduce --budget smoke --only compare --report-only --gui none -o " + dir);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(contains(bad.output, "cells.pack.json.gz")) << bad.output;
  fs::copy_file(tmp("saved.pack.json.gz"), pack, fs::copy_options::overwrite_existing);

  const Outcome unpack = aware("reproduce --unpack -o " + dir);
  ASSERT_EQ(unpack.exit_code, 0) << unpack.output;
  EXPECT_FALSE(fs::exists(pack));
  EXPECT_EQ(finished_cells(dir), 10);

  // Neither on a folder that holds no cells, and nothing is created.
  const std::string empty = tmp("reproduce-pack-none");
  fs::remove_all(empty);
  const Outcome none = aware("reproduce --pack -o " + empty);
  EXPECT_NE(none.exit_code, 0);
  EXPECT_FALSE(fs::exists(empty));
}

// --report-only over a folder that holds no cells refuses it and creates nothing.
TEST(Reproduce, ReportOnlyOnAMissingFolderCreatesNothing) {
  const std::string dir = tmp("reproduce-report-only-none");
  fs::remove_all(dir);
  const Outcome r = aware("reproduce --report-only -o " + dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "no manifest.json")) << r.output;
  EXPECT_FALSE(fs::exists(dir));
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

#ifdef AWARE_PLOT_BIN
Outcome plot(const std::string& args) {
  Outcome o;
  const std::string cmd = std::string(AWARE_PLOT_BIN) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) o.output.append(buffer, n);
  const int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

// aware-plot: a spec drawn to a PNG (and an SVG); a bad spec is an error naming
// the file and the field, and leaves no figure behind.
TEST(Plot, SpecsAreDrawnAndBadOnesNamed) {
  const fs::path dir = tmp("plot");
  fs::remove_all(dir);
  fs::create_directories(dir);
  write((dir / "ok.plot.json").string(),
        R"({"kind": "line", "title": "t", "series": [{"name": "a", "points": [[0, 3], [10, 2]],
            "band": [[0, 2.5, 3.5], [10, 1.5, 2.5]]}]})");
  const Outcome ok = plot((dir / "ok.plot.json").string());
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_GT(fs::file_size(dir / "ok.png"), 3000u);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"kind": "pie", "series": [{"points": []}]})", "field 'kind'"},
      {R"({"kind": "line", "series": [{"points": [[1]]}]})", "field 'series[0].points[0]'"},
      {R"({"kind": "bar", "categories": ["a", "b"], "series": [{"values": [1]}]})", "field 'series[0].values'"},
      {R"({"kind": "line"})", "field 'series'"},
      {"{not json", "not JSON"}};
  for (const auto& [text, field] : bad) {
    write((dir / "bad.plot.json").string(), text);
    const Outcome r = plot((dir / "bad.plot.json").string());
    EXPECT_EQ(r.exit_code, 1) << text;
    EXPECT_TRUE(contains(r.output, "error: " + (dir / "bad.plot.json").string())) << r.output;
    EXPECT_TRUE(contains(r.output, field)) << text << ": " << r.output;
    EXPECT_FALSE(fs::exists(dir / "bad.png")) << text;
  }
}
#endif

}  // namespace
