// Bad SimGrid XML platforms (the ".xml" cluster loader). SimGrid parses them in a
// short-lived worker process, ~0.1 s each, too slow for libFuzzer; instead a
// seeded sweep of mutations of the committed example platforms (tests/sim/
// platforms/): truncations, changed bytes, deleted or repeated tags and lines,
// attribute values replaced by huge, negative or garbage ones. Every load must
// end in a Cluster whose routes are usable or in one aware::Error line naming the
// file, within the load's timeout, with no process left behind; what loads must
// also simulate or be refused. Then hand cases for what the sweep found, and the
// containment of a worker that aborts or hangs. Label: simgrid.
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "builtins/builtins.h"
#include "core/cluster.h"
#include "core/errors.h"
#include "core/op_graph.h"
#include "core/placement.h"
#include "sim/simgrid/simgrid_evaluator.h"
#include "tests/expect_error.h"
#include "tests/sim/simgrid_test_support.h"
#include "tests/test_graphs.h"

#ifndef AWARE_TEST_PLATFORMS
#error "AWARE_TEST_PLATFORMS (tests/sim/platforms) must be defined"
#endif

namespace aware {
namespace {

namespace fs = std::filesystem;
using testing::child_pids;
using testing::expect_error;

// Long enough for a loaded 2-core machine; a load that takes it is a finding.
constexpr double kLoadTimeout_s = 20;
// Mutants per committed platform: 2 x 150 loads take ~30 s on 2 shared cores.
constexpr int kMutantsPerPlatform = 150;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A fresh folder for this test's files.
std::string scratch_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("aware_platform_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return fs::absolute(dir).lexically_normal().string();
}

// Seeded mutations of an XML text, each described for the failure message.
class XmlMutator {
 public:
  explicit XmlMutator(std::uint64_t seed) : rng_(seed) {}

  std::string mutate(const std::string& text, std::string* how) {
    how->clear();
    return mutate_once(text, how, pick(8));
  }

 private:
  std::size_t pick(std::size_t n) { return n == 0 ? 0 : rng_() % n; }

  std::string mutate_once(std::string text, std::string* how, std::size_t kind) {
    if (text.empty()) {
      *how += "(empty)";
      return text;
    }
    switch (kind) {
      case 0: {  // truncated anywhere, the empty file included
        const std::size_t at = pick(text.size());
        *how += "truncated at byte " + std::to_string(at) + "; ";
        return text.substr(0, at);
      }
      case 1: {  // one bit flipped
        const std::size_t at = pick(text.size());
        text[at] = static_cast<char>(text[at] ^ (1 << pick(8)));
        *how += "bit flipped at byte " + std::to_string(at) + "; ";
        return text;
      }
      case 2: {  // one byte replaced by XML punctuation, a digit sign or a NUL
        static const char kBytes[] = "<>/\"'=&;: -09exTG\n";
        const std::size_t at = pick(text.size());
        text[at] = kBytes[pick(sizeof kBytes)];  // sizeof includes the NUL
        *how += "byte " + std::to_string(at) + " replaced; ";
        return text;
      }
      case 3: {  // one tag deleted: unbalanced elements, a lost host, link or route
        const auto tags = positions(text, '<');
        const std::size_t open = tags[pick(tags.size())];
        const std::size_t close = text.find('>', open);
        const std::size_t end = close == std::string::npos ? text.size() : close + 1;
        *how += "tag at byte " + std::to_string(open) + " deleted; ";
        return text.erase(open, end - open);
      }
      case 4:    // one line repeated: duplicate ids, a second route, a second root
      case 5: {  // one line deleted: a missing route, host, property or closing tag
        const auto starts = line_starts(text);
        const std::size_t line = pick(starts.size());
        const std::size_t begin = starts[line];
        const std::size_t end = line + 1 < starts.size() ? starts[line + 1] : text.size();
        const std::string copy = text.substr(begin, end - begin);
        *how += "line " + std::to_string(line + 1) + (kind == 4 ? " repeated; " : " deleted; ");
        return kind == 4 ? text.insert(end, copy) : text.erase(begin, end - begin);
      }
      case 6: {  // an attribute value replaced: huge, negative, empty, garbage, an id
        // clang-format off
        static const char* const kValues[] = {
            "", "0", "-1", "1e999", "1e308", "nan", "inf", "-inf", "1e-320", "0x10",
            "99999999999999999999999999Tf", "1e308GBps", "-5us", "1e999s", "x",
            "gpu0", "pcie0", "dev0", "0-100000", "3-1", "Full", "None", "YES", "NO"};
        // clang-format on
        const auto quotes = positions(text, '"');
        if (quotes.size() < 2) return mutate_once(std::move(text), how, 0);
        const std::size_t q = pick(quotes.size() / 2) * 2;
        const std::size_t begin = quotes[q] + 1, end = quotes[q + 1];
        const char* value = kValues[pick(std::size(kValues))];
        *how += "value at byte " + std::to_string(begin) + " ('" + text.substr(begin, end - begin) +
                "') set to '" + value + "'; ";
        return text.replace(begin, end - begin, value);
      }
      default: {  // two of the above
        text = mutate_once(std::move(text), how, pick(7));
        return mutate_once(std::move(text), how, pick(7));
      }
    }
  }

  static std::vector<std::size_t> positions(const std::string& text, char c) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == c) out.push_back(i);
    if (out.empty()) out.push_back(0);
    return out;
  }

  static std::vector<std::size_t> line_starts(const std::string& text) {
    std::vector<std::size_t> out{0};
    for (std::size_t i = 0; i + 1 < text.size(); ++i)
      if (text[i] == '\n') out.push_back(i + 1);
    return out;
  }

  std::mt19937_64 rng_;
};

// What a loaded platform promises the placers and simulators.
void expect_usable(const Cluster& cluster, const std::string& path, const std::string& how) {
  EXPECT_EQ(cluster.source(), path) << how;
  ASSERT_GE(cluster.num_devices(), 1) << how;
  for (int a = 0; a < cluster.num_devices(); ++a) {
    for (int b = 0; b < cluster.num_devices(); ++b) {
      if (a == b) continue;
      const double bandwidth = cluster.route_bandwidth_Bps(a, b);
      const double latency = cluster.route_latency_us(a, b);
      EXPECT_TRUE(std::isfinite(bandwidth) && bandwidth > 0) << how << " " << bandwidth;
      EXPECT_TRUE(std::isfinite(latency) && latency >= 0) << how << " " << latency;
    }
  }
}

// a(100 us) -> b(100 us) with a 1 MB tensor: a transfer on any two devices.
OpGraph two_op_graph() {
  OpGraph g("xml-mutants");
  const int a = g.add_op(testing::timed_op("a", 100, 1e6));
  const int b = g.add_op(testing::timed_op("b", 100, 1));
  g.add_edge(a, b);
  return g;
}

struct SweepCounts {
  int loaded = 0, simulated = 0, refused = 0, contained_crashes = 0;
  std::map<std::string, int> by_class;
};

std::string error_class(const Error& e) {
  if (dynamic_cast<const ParseError*>(&e)) return "ParseError";
  if (dynamic_cast<const DeviceError*>(&e)) return "DeviceError";
  if (dynamic_cast<const ConfigError*>(&e)) return "ConfigError";
  return "Error";
}

void sweep(const std::string& platform, std::uint64_t seed, SweepCounts* counts) {
  const std::string original = read_file(std::string(AWARE_TEST_PLATFORMS) + "/" + platform);
  ASSERT_FALSE(original.empty()) << platform;
  const std::string dir = scratch_dir(fs::path(platform).stem().string());
  const OpGraph graph = two_op_graph();
  SimGridOptions options;
  options.workers = 1;
  options.timeout_s = kLoadTimeout_s;
  SimGridEvaluator simulator(options);
  XmlMutator mutator(seed);
  for (int i = 0; i < kMutantsPerPlatform; ++i) {
    std::string how;
    const std::string text = mutator.mutate(original, &how);
    const std::string path = dir + "/mutant" + std::to_string(i) + ".xml";
    write_file(path, text);
    how = platform + " mutant " + std::to_string(i) + " (" + how + "kept in " + path + ")";
    const auto start = std::chrono::steady_clock::now();
    try {
      const Cluster cluster = cluster_from_simgrid_xml(path, kLoadTimeout_s);
      ++counts->loaded;
      expect_usable(cluster, path, how);
      // The serve worker parses the file again, as its platform.
      try {
        const StepResult r =
            simulator.evaluate(graph, cluster, Placement({0, cluster.num_devices() - 1}));
        EXPECT_TRUE(std::isfinite(r.step_time_us) && r.step_time_us > 0) << how;
        ++counts->simulated;
      } catch (const Error& e) {
        ++counts->by_class["simulate: " + error_class(e)];
      }
    } catch (const Error& e) {
      const std::string what = e.what();
      ++counts->refused;
      ++counts->by_class[error_class(e)];
      if (what.find("SimGrid could not load the platform (worker ") != std::string::npos) {
        // SimGrid ended the worker itself: contained, and shown for the record.
        ++counts->contained_crashes;
        std::printf("contained: %s: %s\n", how.c_str(), what.c_str());
      }
      EXPECT_NE(what.find(path), std::string::npos) << how << ": " << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << how << ": " << what;
      EXPECT_EQ(what.find("did not finish loading"), std::string::npos) << how << ": " << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << how << ": not an aware::Error: " << e.what();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, kLoadTimeout_s) << how;
    // Only the evaluator's own worker may be alive between loads.
    const auto children = child_pids();
    EXPECT_LE(children.size(), simulator.worker_pids().size()) << how;
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "stopping the sweep at the first failing mutant";
      return;
    }
    fs::remove(path);
  }
  fs::remove_all(dir);
}

void print_counts(const std::string& platform, const SweepCounts& c) {
  std::string classes;
  for (const auto& [name, n] : c.by_class) classes += " " + name + " " + std::to_string(n) + ",";
  std::printf(
      "%s: %d mutants: %d loaded (%d simulated), %d refused (%s), %d SimGrid crashes "
      "contained\n",
      platform.c_str(), kMutantsPerPlatform, c.loaded, c.simulated, c.refused,
      classes.empty() ? "" : classes.substr(1, classes.size() - 2).c_str(), c.contained_crashes);
}

TEST(SimGridPlatformMutants, EachLoadsOrIsOneErrorNamingTheFile) {
  REQUIRE_WORKER();
  for (const char* platform : {"star4.xml", "cluster8.xml"}) {
    SweepCounts counts;
    sweep(platform, /*seed=*/20240612, &counts);
    print_counts(platform, counts);
    if (HasFailure()) return;
    // The sweep is worth its time only if it reaches both outcomes.
    EXPECT_GT(counts.loaded, 0) << platform;
    EXPECT_GT(counts.refused, kMutantsPerPlatform / 4) << platform;
  }
  EXPECT_TRUE(child_pids().empty());
}

TEST(SimGridPlatformMutants, CommittedPlatformsLoadThroughTheRegisteredLoader) {
  REQUIRE_WORKER();
  register_builtins();
  const Cluster star = load_cluster(std::string(AWARE_TEST_PLATFORMS) + "/star4.xml");
  ASSERT_EQ(star.num_devices(), 4);
  EXPECT_EQ(star.device(0).kind, "V100");
  EXPECT_EQ(star.device(3).kind, "P100");
  // gpu0 -> gpu2: two 12 GB/s links of 1 us each.
  EXPECT_DOUBLE_EQ(star.route_bandwidth_Bps(0, 2), 12e9);
  EXPECT_NEAR(star.route_latency_us(0, 2), 2, 1e-9);
  const Cluster cluster8 = load_cluster(std::string(AWARE_TEST_PLATFORMS) + "/cluster8.xml");
  ASSERT_EQ(cluster8.num_devices(), 8);
  EXPECT_DOUBLE_EQ(cluster8.device(5).memory_bytes, 32e9);
  EXPECT_TRUE(child_pids().empty());
}

// ------------------------------------------------------ what the sweep found

// A host pair without a <route> loaded as a 1e15 B/s link of no latency, so the
// placers saw a free connection the platform does not have.
TEST(SimGridPlatformMutants, AMissingRouteIsRefusedNotMadeFree) {
  REQUIRE_WORKER();
  const std::string dir = scratch_dir("noroute");
  std::string text = read_file(std::string(AWARE_TEST_PLATFORMS) + "/star4.xml");
  const std::string route = "<route src=\"gpu1\" dst=\"gpu3\">";
  const auto at = text.find(route);
  ASSERT_NE(at, std::string::npos);
  text.erase(at, text.find('\n', at) - at);
  const std::string path = dir + "/noroute.xml";
  write_file(path, text);
  expect_error<ParseError>([&] { cluster_from_simgrid_xml(path); },
                           {path, "no route", "'gpu1'", "'gpu3'"});
  // One way only (symmetrical="NO"): the way back is missing.
  text = read_file(std::string(AWARE_TEST_PLATFORMS) + "/star4.xml");
  const std::string one_way = "<route src=\"gpu2\" dst=\"gpu3\"";
  text.insert(text.find(one_way) + one_way.size(), " symmetrical=\"NO\"");
  write_file(path, text);
  expect_error<ParseError>([&] { cluster_from_simgrid_xml(path); },
                           {"from host 'gpu3' to host 'gpu2'"});
  EXPECT_TRUE(child_pids().empty());
  fs::remove_all(dir);
}

// A zero bandwidth or a negative latency was reported against the derived link
// "route:gpu0-gpu1", a name the file does not have; now against the file's link.
TEST(SimGridPlatformMutants, BadLinkValuesNameTheLinkOfTheFile) {
  REQUIRE_WORKER();
  const std::string dir = scratch_dir("badlink");
  const std::string original = read_file(std::string(AWARE_TEST_PLATFORMS) + "/star4.xml");
  const std::string path = dir + "/badlink.xml";
  const std::string pcie1 = "<link id=\"pcie1\" bandwidth=\"12GBps\" latency=\"1us\"/>";
  ASSERT_NE(original.find(pcie1), std::string::npos);
  for (const auto& [bad, field] : std::vector<std::pair<std::string, std::string>>{
           {"<link id=\"pcie1\" bandwidth=\"0GBps\" latency=\"1us\"/>", "bandwidth"},
           {"<link id=\"pcie1\" bandwidth=\"12GBps\" latency=\"-1us\"/>", "latency"}}) {
    std::string text = original;
    text.replace(text.find(pcie1), pcie1.size(), bad);
    write_file(path, text);
    SCOPED_TRACE(bad);
    expect_error<ParseError>([&] { cluster_from_simgrid_xml(path); },
                             {path, "link 'pcie1'", field});
  }
  EXPECT_TRUE(child_pids().empty());
  fs::remove_all(dir);
}

// SimGrid aborts the worker on a link declared twice (a failed xbt_assert: a
// CRITICAL line, a backtrace, SIGABRT). Contained in the worker process: one line
// with SimGrid's reason, not the last line of its backtrace.
TEST(SimGridPlatformMutants, ALinkDeclaredTwiceAbortsTheWorkerNotTheCaller) {
  REQUIRE_WORKER();
  const std::string dir = scratch_dir("duplink");
  std::string text = read_file(std::string(AWARE_TEST_PLATFORMS) + "/star4.xml");
  const std::string pcie1 = "<link id=\"pcie1\" bandwidth=\"12GBps\" latency=\"1us\"/>";
  ASSERT_NE(text.find(pcie1), std::string::npos);
  text.insert(text.find(pcie1), pcie1 + "\n    ");
  const std::string path = dir + "/duplink.xml";
  write_file(path, text);
  const std::string what = expect_error<ParseError>(
      [&] { cluster_from_simgrid_xml(path); }, {path, "SIGABRT", "'pcie1' declared several times"});
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  EXPECT_TRUE(child_pids().empty());
  fs::remove_all(dir);
}

// ---------------------------------------- containment of a worker that fails

// SimGrid reports most bad files by exception, which the worker turns into one
// line; some conditions end the process instead (xbt_die aborts). A stand-in
// worker (a script run through $AWARE_SIMGRID_WORKER) aborts, exits with noise,
// hangs, or closes its output and hangs: each is one error line naming the
// file, within the timeout, and the process is reaped.
class FakeWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir("fakeworker");
    platform_ = dir_ + "/platform.xml";
    write_file(platform_, read_file(std::string(AWARE_TEST_PLATFORMS) + "/star4.xml"));
    const char* old = std::getenv("AWARE_SIMGRID_WORKER");
    if (old != nullptr) old_env_ = old, had_env_ = true;
  }
  void TearDown() override {
    if (had_env_) {
      ::setenv("AWARE_SIMGRID_WORKER", old_env_.c_str(), 1);
    } else {
      ::unsetenv("AWARE_SIMGRID_WORKER");
    }
    fs::remove_all(dir_);
  }
  // Installs a worker that runs `script` (sh); skips if another worker would win.
  bool use_worker(const std::string& script) {
    const std::string path = dir_ + "/fake-worker.sh";
    write_file(path, "#!/bin/sh\n" + script + "\n");
    ::chmod(path.c_str(), 0755);
    ::setenv("AWARE_SIMGRID_WORKER", path.c_str(), 1);
    try {
      return find_simgrid_worker() == path;
    } catch (const ConfigError&) {
      return false;
    }
  }
  // Loads through the stand-in; returns the error line (and checks it).
  std::string load_error(double timeout_s) {
    const auto start = std::chrono::steady_clock::now();
    std::string what;
    try {
      cluster_from_simgrid_xml(platform_, timeout_s);
      ADD_FAILURE() << "the stand-in worker's platform loaded";
    } catch (const ParseError& e) {
      what = e.what();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, timeout_s + 5) << what;
    EXPECT_NE(what.find(platform_), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_TRUE(child_pids().empty()) << what;
    return what;
  }
  std::string dir_, platform_, old_env_;
  bool had_env_ = false;
};

#define USE_WORKER(script)                                                               \
  do {                                                                                   \
    if (!use_worker(script))                                                             \
      GTEST_SKIP() << "a worker beside the test binary wins over $AWARE_SIMGRID_WORKER"; \
  } while (0)

TEST_F(FakeWorker, AnAbortIsOneLineWithSimGridsLastLine) {
  USE_WORKER(
      "echo '[0.000000] a.cpp:1: [root/CRITICAL] Something is wrong here.' >&2;"
      "echo 'Backtrace (displayed in actor maestro):' >&2;"
      "echo '  ->  0# xbt_backtrace_display_current in libsimgrid.so' >&2;"
      "kill -ABRT $$");
  const std::string what = load_error(kLoadTimeout_s);
  EXPECT_NE(what.find("SIGABRT"), std::string::npos) << what;
  EXPECT_NE(what.find(": Something is wrong here."), std::string::npos) << what;
}

TEST_F(FakeWorker, AnUnexpectedExitIsOneLine) {
  USE_WORKER("echo 'line one' >&2; echo 'line two' >&2; exit 3");
  const std::string what = load_error(kLoadTimeout_s);
  EXPECT_NE(what.find("status 3"), std::string::npos) << what;
  EXPECT_NE(what.find("line two"), std::string::npos) << what;
}

TEST_F(FakeWorker, AHangIsKilledAtTheTimeout) {
  USE_WORKER("exec sleep 60");
  const std::string what = load_error(1);
  EXPECT_NE(what.find("within 1 s"), std::string::npos) << what;
}

TEST_F(FakeWorker, AWorkerThatClosesItsOutputAndHangsIsKilledToo) {
  USE_WORKER("exec >&- ; exec sleep 60");
  const std::string what = load_error(1);
  EXPECT_NE(what.find("within 1 s"), std::string::npos) << what;
}

}  // namespace
}  // namespace aware
