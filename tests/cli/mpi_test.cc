// `aware place` under mpirun (scripts/mpirun-local: ranks on this machine only,
// shared memory): one anneal chain per rank gives exactly what `--chains N` gives
// on threads with the same seed and budget; mismatched commands, too little work
// and methods that cannot run as chains are one-line errors on every rank; a
// rank killed mid-search ends the job, a stopped one too (after the collective
// wait's limit); killed training resumes from its checkpoint with any number of
// ranks. Skipped where this build has no MPI.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"

extern char** environ;

namespace {

const std::string kGraph = " --graph zoo:inception_v3:batch=8,image_size=96 --cluster preset:k40x4";

std::string mpirun(int ranks, const std::string& args) {
  return std::string(AWARE_SOURCE_DIR) + "/scripts/mpirun-local " + std::to_string(ranks) + " " + AWARE_BIN + " " + args;
}

// stderr is merged into the output unless `stdout_only` (for one JSON object:
// Open MPI may print notices on stderr at any point).
Outcome shell(const std::string& cmd, bool stdout_only = false) {
  Outcome run;
  FILE* pipe = popen((cmd + (stdout_only ? " 2>/dev/null" : " 2>&1")).c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

#ifndef AWARE_TEST_HAVE_MPI
#define REQUIRE_MPI() GTEST_SKIP() << "this build has no MPI (libopenmpi-dev)"
#else
#define REQUIRE_MPI() \
  if (shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "no mpirun (openmpi-bin)"
#endif

TEST(Mpi, RanksAsChainsGiveTheThreadChainsResult) {
  REQUIRE_MPI();
  const std::string common = "place" + kGraph + " --method anneal --budget-evals 600 --seed 3 --json";
  const Outcome ranks = shell(mpirun(2, common + " -o " + tmp("mpi-ranks.json")), true);
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output;
  const Outcome threads = run_aware(common + " --chains 2 -o " + tmp("mpi-threads.json"), true);
  ASSERT_EQ(threads.exit_code, 0) << threads.output;
  // Rank 0 alone prints: one JSON object.
  const auto r = nlohmann::json::parse(ranks.output.substr(ranks.output.find('{')));
  const auto t = nlohmann::json::parse(threads.output);
  EXPECT_EQ(r["chains"], 2);
  EXPECT_EQ(r["step_time_us"], t["step_time_us"]);
  EXPECT_EQ(nlohmann::json::parse(slurp(tmp("mpi-ranks.json"))), nlohmann::json::parse(slurp(tmp("mpi-threads.json"))))
      << "the same placement, op for op";
}

TEST(Mpi, ALearnedAgentTrainsDataParallelAndReproducibly) {
  REQUIRE_MPI();
#ifndef AWARE_TEST_HAVE_RL
  GTEST_SKIP() << "this build has no learned agents (LibTorch)";
#else
  const std::string args = "search" + kGraph + " --agent aware --budget-evals 60 --seed 4 --json";
  const Outcome first = shell(mpirun(2, args + " --save-policy " + tmp("mpi-policy-a.pt")), true);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const Outcome again = shell(mpirun(2, args + " --save-policy " + tmp("mpi-policy-b.pt")), true);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  const auto a = nlohmann::json::parse(first.output.substr(first.output.find('{')));
  const auto b = nlohmann::json::parse(again.output.substr(again.output.find('{')));
  EXPECT_EQ(a["ranks"], 2);
  EXPECT_EQ(a["evaluations"], 60) << "the budget is the job's, split over the ranks";
  EXPECT_EQ(a["step_time_us"], b["step_time_us"]) << "same seed and ranks, same result";
  EXPECT_EQ(a["greedy_step_us"], b["greedy_step_us"]);
  EXPECT_EQ(slurp(tmp("mpi-policy-a.pt")).size(), slurp(tmp("mpi-policy-b.pt")).size());
  // Outputs a rank cannot share are refused in one line.
  const Outcome timed = shell(mpirun(2, "search" + kGraph + " --agent aware --budget-seconds 5"));
  EXPECT_NE(timed.exit_code, 0);
  EXPECT_TRUE(contains(timed.output, "takes an evaluation budget, not --budget-seconds")) << timed.output;
#endif
}

TEST(Mpi, BadJobsAreOneLineErrorsOnEveryRank) {
  REQUIRE_MPI();
  const std::string base = "place" + kGraph + " --budget-evals 600";
  // Ranks that run different commands (MPMD): rank 1 sees a different hash.
  const Outcome mismatch = shell(mpirun(1, base + " --method anneal --seed 1 : -np 1 " + AWARE_BIN + " " + base +
                                              " --method anneal --seed 2"));
  EXPECT_NE(mismatch.exit_code, 0);
  EXPECT_TRUE(contains(mismatch.output, "rank 1: this rank's command line or binary differs from rank 0's"))
      << mismatch.output;
  const Outcome little = shell(mpirun(2, "place" + kGraph + " --method anneal --budget-evals 20"));
  EXPECT_NE(little.exit_code, 0);
  EXPECT_TRUE(contains(little.output, "20 evaluations split over 2 chains leaves fewer than 16 each")) << little.output;
  const Outcome heft = shell(mpirun(2, "place" + kGraph + " --method heft"));
  EXPECT_NE(heft.exit_code, 0);
  EXPECT_TRUE(contains(heft.output, "does not run as parallel chains")) << heft.output;
  const Outcome both = shell(mpirun(2, base + " --method anneal --chains 2"));
  EXPECT_NE(both.exit_code, 0);
  EXPECT_TRUE(contains(both.output, "each rank is one chain")) << both.output;
}

TEST(Mpi, SmpiRunsTheSameSearchOnASimulatedCluster) {
#ifndef AWARE_SMPI_LIB
  GTEST_SKIP() << "this build has no SMPI scaling program (SimGrid and MPI)";
#else
  if (shell("command -v smpirun").exit_code != 0) GTEST_SKIP() << "no smpirun";
  // Four simulated nodes; each rank is one chain, as `--chains 4` on threads.
  write(tmp("smpi-4.xml"), "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                           "<platform version=\"4.1\">\n  <cluster id=\"lab\" prefix=\"node-\" suffix=\"\" "
                           "radical=\"0-3\" speed=\"1Gf\" bw=\"1.25GBps\" lat=\"20us\"/>\n</platform>\n");
  write(tmp("smpi-4.hosts"), "node-0\nnode-1\nnode-2\nnode-3\n");
  const std::string graph = "zoo:inception_v3:batch=8,image_size=96";
  const Outcome smpi = shell("smpirun -np 4 -platform " + tmp("smpi-4.xml") + " -hostfile " + tmp("smpi-4.hosts") +
                             " -no-privatize --cfg=smpi/host-speed:1Gf --cfg=smpi/allgather:bruck "
                             "--log=root.thres:critical " AWARE_SMPI_LIB " " + graph + " preset:k40x4 50 10 5",
                             true);
  ASSERT_EQ(smpi.exit_code, 0) << smpi.output;
  const auto projected = nlohmann::json::parse(smpi.output.substr(smpi.output.find('{')));
  EXPECT_EQ(projected["ranks"], 4);
  EXPECT_EQ(projected["evaluations"], 200);
  EXPECT_GT(projected["simulated_s"].get<double>(), 0);
  EXPECT_GT(projected["meeting_s"].get<double>(), 0) << "the meetings cross the simulated network";
  const Outcome threads = run_aware("place --graph " + graph + " --cluster preset:k40x4 --method anneal --chains 4 "
                                    "--budget-evals 200 --method-option exchange_every=10 --seed 5 --json", true);
  ASSERT_EQ(threads.exit_code, 0) << threads.output;
  EXPECT_NEAR(projected["step_us"].get<double>(), nlohmann::json::parse(threads.output)["step_time_us"].get<double>(),
              1e-3)
      << "SMPI runs the same chains to the same best";
#endif
}

// The data-parallel training under SMPI: each of 4 simulated nodes plays 2 of
// an update's 8 episodes (10 ms each, charged as computation), 20 updates in
// all, and averages 1,000 weights with the others after each: the simulated
// time is the episodes' plus the exchanges', which cross the simulated network.
TEST(Mpi, SmpiProjectsTheDataParallelTraining) {
#ifndef AWARE_SMPI_TRAINING_LIB
  GTEST_SKIP() << "this build has no SMPI training program (SimGrid and MPI)";
#else
  if (shell("command -v smpirun").exit_code != 0) GTEST_SKIP() << "no smpirun";
  write(tmp("smpi-t4.xml"), "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                            "<platform version=\"4.1\">\n  <cluster id=\"lab\" prefix=\"node-\" suffix=\"\" "
                            "radical=\"0-3\" speed=\"1Gf\" bw=\"1.25GBps\" lat=\"20us\"/>\n</platform>\n");
  write(tmp("smpi-t4.hosts"), "node-0\nnode-1\nnode-2\nnode-3\n");
  const std::string run = "smpirun -np 4 -platform " + tmp("smpi-t4.xml") + " -hostfile " + tmp("smpi-t4.hosts") +
                          " -no-privatize --cfg=smpi/host-speed:1Gf --log=root.thres:critical " AWARE_SMPI_TRAINING_LIB;
  const Outcome smpi = shell(run + " 1000 0.01 8 40", true);
  ASSERT_EQ(smpi.exit_code, 0) << smpi.output;
  const auto j = nlohmann::json::parse(smpi.output.substr(smpi.output.find('{')));
  EXPECT_EQ(j["ranks"], 4);
  EXPECT_EQ(j["episodes_per_rank"], 2);
  EXPECT_EQ(j["updates"], 20);
  EXPECT_EQ(j["evaluations"], 160);
  const double simulated = j["simulated_s"].get<double>(), exchange = j["exchange_s"].get<double>();
  EXPECT_GT(exchange, 0) << "the gradients cross the simulated network";
  EXPECT_GE(simulated, 20 * 2 * 0.01);
  EXPECT_NEAR(simulated, 20 * 2 * 0.01 + exchange, 0.05 * simulated);
  const Outcome bad = shell(run + " 1000 soon 8 40");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(contains(bad.output, "EPISODE_SECONDS must be a positive number, got 'soon'")) << bad.output;
#endif
}

TEST(Mpi, ReproduceServesItsCellsToTheRanks) {
  REQUIRE_MPI();
  const std::string ranks_dir = tmp("mpi-reproduce-ranks"), plain_dir = tmp("mpi-reproduce-plain");
  std::filesystem::remove_all(ranks_dir);
  std::filesystem::remove_all(plain_dir);
  const std::string args = "reproduce --budget smoke --only compare --jobs 1 --gui none -o ";
  const Outcome ranks = shell(mpirun(2, args + ranks_dir));
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output;
  EXPECT_TRUE(contains(ranks.output, "(1 on other ranks)")) << ranks.output;
  EXPECT_TRUE(contains(ranks.output, "(rank 1)")) << "no cell ran on rank 1: " << ranks.output;
  const Outcome plain = run_aware(args + plain_dir);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  // The same cells with the same results, wherever they ran.
  int cells = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(plain_dir) / "cells")) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 6 || name.substr(name.size() - 5) != ".json" || name.find(".placement.") != std::string::npos)
      continue;
    const auto a = nlohmann::json::parse(slurp(entry.path().string()));
    const auto b = nlohmann::json::parse(slurp((std::filesystem::path(ranks_dir) / "cells" / name).string()));
    EXPECT_EQ(a.value("step_time_us", -1.0), b.value("step_time_us", -2.0)) << name;
    ++cells;
  }
  EXPECT_GT(cells, 5);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(ranks_dir) / "REPORT.md"));
}

// The pids of this user's processes whose command line holds `marker`.
std::vector<pid_t> processes_with(const std::string& marker, pid_t except) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* e = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0 || pid == except || pid == getpid()) continue;
    std::string cmdline = slurp("/proc/" + std::string(e->d_name) + "/cmdline");
    for (char& ch : cmdline)
      if (ch == '\0') ch = ' ';
    if (cmdline.find(AWARE_BIN) != std::string::npos && cmdline.find(marker) != std::string::npos &&
        cmdline.find("mpirun") == std::string::npos)
      found.push_back(pid);
  }
  closedir(proc);
  return found;
}

// Starts `cmd` (an mpirun of two ranks whose command lines hold `marker`), waits
// until both ranks run and `ready` holds, sends `signal` to one rank, and waits
// up to `limit_s` for the job to end (`ready` is polled once the ranks run). Returns whether it ended, and its status.
// Whatever is left is killed.
struct JobEnd {
  bool ended = false;
  int status = 0;
};
// A `ready` for signal_a_rank: true from `wait` after its first call.
std::function<bool()> after(std::chrono::milliseconds wait) {
  return [wait, start = std::optional<std::chrono::steady_clock::time_point>()]() mutable {
    if (!start) start = std::chrono::steady_clock::now();
    return std::chrono::steady_clock::now() - *start >= wait;
  };
}

template <typename Ready>
JobEnd signal_a_rank(const std::string& cmd, const std::string& marker, int signal, Ready ready, int limit_s) {
  pid_t job = 0;
  const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
  JobEnd end;
  if (posix_spawn(&job, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) return end;
  std::vector<pid_t> ranks;
  for (int i = 0; i < 300 && ranks.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ranks = processes_with(marker, job);
  }
  EXPECT_EQ(ranks.size(), 2u) << "the two ranks did not start";
  for (int i = 0; i < 600 && !ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (ranks.size() == 2) kill(ranks[1], signal);
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(limit_s)) {
    if (waitpid(job, &end.status, WNOHANG) == job) {
      end.ended = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!end.ended) {
    for (pid_t p : processes_with(marker, job)) kill(p, SIGKILL);
    kill(job, SIGKILL);
    waitpid(job, &end.status, 0);
  }
  for (pid_t p : processes_with(marker, job)) kill(p, SIGKILL);  // a stopped rank left behind
  return end;
}

TEST(Mpi, ARankKilledMidSearchEndsTheJob) {
  REQUIRE_MPI();
  const std::string marker = "--seed 987651";
  const std::string cmd = mpirun(2, "place" + kGraph + " --method anneal --budget-evals 50000000 " + marker) +
                          " >" + tmp("mpi-kill.log") + " 2>&1";
  const JobEnd end = signal_a_rank(cmd, marker, SIGKILL, after(std::chrono::milliseconds(500)), 60);
  ASSERT_TRUE(end.ended) << "the job hung after a rank died";
  EXPECT_TRUE(WIFEXITED(end.status) && WEXITSTATUS(end.status) != 0) << slurp(tmp("mpi-kill.log"));
  EXPECT_TRUE(processes_with(marker, 0).empty()) << "the surviving rank was ended too";
}

// A rank that stops answering (SIGSTOP: alive, so mpirun sees nothing) is
// noticed by the other at its next collective, after AWARE_MPI_TIMEOUT seconds.
TEST(Mpi, AStoppedRankEndsTheJobAfterTheTimeout) {
  REQUIRE_MPI();
  const std::string marker = "--seed 987652";
  const std::string cmd = "AWARE_MPI_TIMEOUT=2 " +
                          mpirun(2, "place" + kGraph +
                                        " --method anneal --budget-evals 50000000 --method-option exchange_every=200 " +
                                        marker) +
                          " >" + tmp("mpi-stop.log") + " 2>&1";
  // Well past MPI_Init, which waits without a limit (a rank stopped inside it would hang the job).
  const JobEnd end = signal_a_rank(cmd, marker, SIGSTOP, after(std::chrono::seconds(3)), 60);
  const std::string log = slurp(tmp("mpi-stop.log"));
  ASSERT_TRUE(end.ended) << "the job hung with a stopped rank: " << log;
  EXPECT_TRUE(WIFEXITED(end.status) && WEXITSTATUS(end.status) != 0) << log;
  EXPECT_TRUE(contains(log, "no answer from the other ranks in 2 s (a meeting of the chains)")) << log;
  // A limit that is not a number is a one-line error.
  const Outcome bad = shell("AWARE_MPI_TIMEOUT=soon " + mpirun(2, "place" + kGraph + " --method anneal --budget-evals 600"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(contains(bad.output, "AWARE_MPI_TIMEOUT must be a number of seconds")) << bad.output;
}

// Data-parallel training killed mid-run leaves its last checkpoint whole, and
// the checkpoint resumes with any number of ranks: one, then two again, with the
// job's evaluations carried over exactly.
TEST(Mpi, AKilledTrainingResumesWithAnyNumberOfRanks) {
  REQUIRE_MPI();
#ifndef AWARE_TEST_HAVE_RL
  GTEST_SKIP() << "this build has no learned agents (LibTorch)";
#else
  const std::string dir = tmp("mpi-resume");
  std::filesystem::remove_all(dir);
  const std::string marker = "--seed 987653";
  const std::string train = "search" + kGraph + " --agent aware --resume " + dir;
  const std::string cmd = mpirun(2, train + " --budget-evals 5000000 --checkpoint-every-updates 1 " + marker) +
                          " >" + tmp("mpi-resume.log") + " 2>&1";
  const std::string checkpoint = dir + "/checkpoint.pt";
  const auto checkpointed = [&] { return std::filesystem::exists(checkpoint); };
  const JobEnd end = signal_a_rank(cmd, marker, SIGKILL, checkpointed, 60);
  ASSERT_TRUE(end.ended) << "the job hung after a rank died";
  ASSERT_TRUE(std::filesystem::exists(checkpoint)) << slurp(tmp("mpi-resume.log"));
  // One rank: a budget already spent trains no further; the checkpoint loads.
  const Outcome one = run_aware(train + " --budget-evals 1 --seed 987653 --json", true);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const auto a = nlohmann::json::parse(one.output);
  EXPECT_TRUE(a["resumed"].get<bool>());
  const long long before = a["evaluations"].get<long long>() - 1;  // less the greedy episode's
  EXPECT_GT(before, 0);
  // Two ranks again, 40 more evaluations (an even job budget splits exactly).
  const long long budget = (before + 40 + 1) / 2 * 2;
  const Outcome two =
      shell(mpirun(2, train + " --budget-evals " + std::to_string(budget) + " --seed 987653 --json"), true);
  ASSERT_EQ(two.exit_code, 0) << two.output;
  const auto b = nlohmann::json::parse(two.output.substr(two.output.find('{')));
  EXPECT_TRUE(b["resumed"].get<bool>());
  EXPECT_EQ(b["ranks"], 2);
  EXPECT_EQ(b["evaluations"].get<long long>(), budget);
  EXPECT_GT(b["updates"].get<long long>(), a["updates"].get<long long>());
  EXPECT_LE(b["step_time_us"].get<double>(), a["step_time_us"].get<double>()) << "the best carries over";
#endif
}

}  // namespace
