// Golden outputs, as SimGrid keeps .tesh files: for every tests/golden/CASE.args,
// `aware ARGS` run from the repository root must print CASE.expected.json (and
// write CASE.trace.expected.json where ARGS has {trace}) exactly, but for the
// wall-clock fields (a key ending in "_s" or "seconds"), which no run repeats, and
// the evaluator's settings line (SimGrid's names its worker count, the cores').
// {out} in ARGS is a fresh scratch folder, written as "{out}" in the output. A
// case that runs the SimGrid evaluator is skipped in a build without it. A change in what
// a model predicts shows as a failing case and, after scripts/update-golden, as a
// diff to review.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> golden_cases() {
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator(fs::path(AWARE_SOURCE_DIR) / "tests/golden"))
    if (entry.path().extension() == ".args") cases.push_back(entry.path().stem().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

// Drops the wall-clock fields, recursively.
void drop_timings(nlohmann::json& doc) {
  if (doc.is_object()) {
    for (auto it = doc.begin(); it != doc.end();) {
      const std::string& key = it.key();
      // evaluator_settings names the worker processes, as many as the machine's cores.
      const bool timing = (key.size() > 2 && key.compare(key.size() - 2, 2, "_s") == 0) ||
                          (key.size() >= 7 && key.compare(key.size() - 7, 7, "seconds") == 0) ||
                          key == "evaluator_settings";
      if (timing) {
        it = doc.erase(it);
      } else {
        drop_timings(*it);
        ++it;
      }
    }
  } else if (doc.is_array()) {
    for (auto& item : doc) drop_timings(item);
  }
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, OutputMatches) {
  const fs::path dir = fs::path(AWARE_SOURCE_DIR) / "tests/golden";
  std::string args = read_file(dir / (GetParam() + ".args"));
  while (!args.empty() && (args.back() == '\n' || args.back() == ' ')) args.pop_back();
  const std::string trace_path = (fs::path(AWARE_TEST_TMPDIR) / (GetParam() + ".trace.json")).string();
  const bool wants_trace = args.find("{trace}") != std::string::npos;
  if (wants_trace) args.replace(args.find("{trace}"), 7, trace_path);
  const std::string out_dir = (fs::path(AWARE_TEST_TMPDIR) / (GetParam() + ".out")).string();
  fs::remove_all(out_dir);
  replace_all(args, "{out}", out_dir);
#ifndef AWARE_TEST_HAVE_SIMGRID
  if (args.find("--evaluator simgrid") != std::string::npos) GTEST_SKIP() << "SimGrid is not built here";
#endif

  const std::string cmd = "cd '" + std::string(AWARE_SOURCE_DIR) + "' && '" + AWARE_BIN + "' " + args;
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd << "\n" << out;

  replace_all(out, out_dir, "{out}");
  nlohmann::json got = nlohmann::json::parse(out);
  nlohmann::json want = nlohmann::json::parse(read_file(dir / (GetParam() + ".expected.json")));
  drop_timings(got);
  drop_timings(want);
  got.erase("trace");  // the path differs; the file is compared below
  want.erase("trace");
  EXPECT_EQ(got, want) << "diff: " << nlohmann::json::diff(want, got).dump()
                       << "\n(if the change is intended: scripts/update-golden, then review the diff)";
  if (wants_trace) {
    EXPECT_EQ(nlohmann::json::parse(read_file(trace_path)),
              nlohmann::json::parse(read_file(dir / (GetParam() + ".trace.expected.json"))))
        << "trace of " << GetParam();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(golden_cases()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

}  // namespace
