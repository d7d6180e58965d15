// Issue 39's fresh bad-input corpus, the place / search / pretrain / strategy
// search / compare / reproduce rows: each bad input is refused before any work,
// with one line naming what is wrong (row ids from the corpus in the comments).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;

// A small graph with a batch (the zoo's NMT, a few hundred ops) and one without.
const std::string kNmt = " --graph zoo:nmt2:batch=8,seq_len=4,hidden=32,vocab=100";
const std::string kNoBatch = "random:20:1";

// Asked once per test binary: each run of aware costs a second of start-up.
bool have_agents() {
  static const bool have = [] {
    const Outcome help = aware("search --help");
    return help.exit_code == 0 && contains(help.output, "Train a learned placement agent");
  }();
  return have;
}

// A path no file can be written to: its parent is a file, not a folder.
std::string unwritable(const std::string& name) {
  const std::string file = tmp("fresh-search-a-file");
  write(file, "not a folder\n");
  return file + "/" + name;
}

int lines_in(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

std::string slurp_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// R07: every agent size option has a range, checked before a network is built
// (hidden=100000000 took 40 s and 10.8 GB, then a LibTorch stack trace).
TEST(FreshSearch, AgentSizeOptionsAreRangeCheckedFirst) {
  if (!have_agents()) GTEST_SKIP() << "built without the learned agents (LibTorch)";
  const Outcome r =
      aware("search" + kNmt + " --agent placeto --agent-option hidden=100000000 --budget-evals 5");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "'hidden' must be 1..4096, got '100000000'")) << r.output;
  EXPECT_EQ(lines_in(r.output), 1) << r.output;  // no progress, no stack trace
  const Outcome layers = aware("search" + kNmt + " --agent aware --agent-option layers=0 --budget-evals 5");
  EXPECT_NE(layers.exit_code, 0);
  EXPECT_TRUE(contains(layers.output, "'layers' must be 1..64")) << layers.output;
  // The ranges are documented where the options are listed.
  const Outcome list = aware("list agents");
  EXPECT_TRUE(contains(list.output, "1..4096")) << list.output;
}

// The agents' presets (docs/agents.md): an unknown one is refused before any
// work, by search (its flag) and by place/compare (the method option), in one line
// naming the presets; the paper preset trains.
TEST(FreshSearch, PresetsAreCheckedAndThePaperOneTrains) {
  if (!have_agents()) GTEST_SKIP() << "built without the learned agents (LibTorch)";
  const Outcome flag = aware("search" + kNmt + " --agent aware --preset fast --budget-evals 5");
  EXPECT_NE(flag.exit_code, 0);
  EXPECT_TRUE(contains(flag.output, "--preset")) << flag.output;
  EXPECT_EQ(lines_in(flag.output), 1) << flag.output;
  const Outcome option = aware("place" + kNmt + " --method hierarchical --method-option preset=fast --budget-evals 5");
  EXPECT_NE(option.exit_code, 0);
  EXPECT_TRUE(contains(option.output, "agent hierarchical has no preset 'fast' (default, paper)")) << option.output;
  EXPECT_EQ(lines_in(option.output), 1) << option.output;
  const std::string out = tmp("fresh-search-paper.json");
  const Outcome paper = aware("search --graph random:20:1 --cluster preset:k40x2 --agent placeto --preset paper "
                              "--budget-evals 60 --json -o " + out);
  EXPECT_EQ(paper.exit_code, 0) << paper.output;
  EXPECT_TRUE(fs::exists(out)) << paper.output;
}

// The guided hybrid and the episode budget from the command line: a bad share
// is one line naming the range, `paper` is refused for aware-guided (ours
// alone), and a run reports its refinements and plays exactly its episodes.
TEST(FreshSearch, GuidedHybridAndEpisodeBudgetFromTheCommandLine) {
  if (!have_agents()) GTEST_SKIP() << "built without the learned agents (LibTorch)";
  const Outcome share = aware("search" + kNmt + " --agent aware-guided --guide-share 1.5 --budget-evals 50");
  EXPECT_NE(share.exit_code, 0);
  EXPECT_TRUE(contains(share.output, "--guide-share")) << share.output;
  EXPECT_EQ(lines_in(share.output), 1) << share.output;
  const Outcome paper = aware("search" + kNmt + " --agent aware-guided --preset paper --budget-evals 50");
  EXPECT_NE(paper.exit_code, 0);
  EXPECT_TRUE(contains(paper.output, "agent aware-guided has no preset 'paper'")) << paper.output;
  const Outcome plain = aware("search" + kNmt + " --agent aware --guide-share 0.5 --budget-evals 50");
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_TRUE(contains(plain.output, "guide_share is for the guided hybrid")) << plain.output;
  const Outcome guided = aware("search --graph random:20:1 --cluster preset:k40x2 --agent aware-guided "
                               "--guide-by evaluations --guide-evals 20 --budget-evals 120 --json", true);
  ASSERT_EQ(guided.exit_code, 0) << guided.output;
  EXPECT_TRUE(contains(guided.output, "\"guide\"")) << guided.output;
  EXPECT_TRUE(contains(guided.output, "\"evaluations\": 120")) << guided.output;
  const Outcome episodes = aware("search --graph random:20:1 --cluster preset:k40x2 --agent aware "
                                 "--budget-episodes 20 --episodes-per-update 8 --json", true);
  ASSERT_EQ(episodes.exit_code, 0) << episodes.output;
  EXPECT_TRUE(contains(episodes.output, "\"episodes\": 20")) << episodes.output;
  EXPECT_TRUE(contains(episodes.output, "\"budget_episodes\": 20")) << episodes.output;
}

// The result says what ran: Aware's default preset has the elite step and
// the entropy floor (since 2026-12-07), and `search` and `pretrain` both report
// their blocks; `--entropy-floor 0` leaves the floor's block out.
TEST(FreshSearch, ResultsSayTheDefaultsEliteStepAndEntropyFloorRan) {
  if (!have_agents()) GTEST_SKIP() << "built without the learned agents (LibTorch)";
  const Outcome search = aware("search --graph random:20:1 --cluster preset:k40x2 --agent aware "
                               "--budget-evals 40 --json", true);
  ASSERT_EQ(search.exit_code, 0) << search.output;
  EXPECT_TRUE(contains(search.output, "\"entropy_floor\"")) << search.output;
  EXPECT_TRUE(contains(search.output, "\"fraction\": 0.2")) << search.output;
  EXPECT_TRUE(contains(search.output, "\"elite\"")) << search.output;
  const Outcome off = aware("search --graph random:20:1 --cluster preset:k40x2 --agent aware "
                            "--budget-evals 40 --entropy-floor 0 --json", true);
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_FALSE(contains(off.output, "\"entropy_floor\"")) << off.output;
  const std::string policy = tmp("fresh-search-pretrain-floor.pt");
  const Outcome pre = aware("pretrain --family cifar10 --count 4 --cluster preset:k40x4 --agent aware "
                            "--budget-evals 40 --json --save-policy " + policy, true);
  ASSERT_EQ(pre.exit_code, 0) << pre.output;
  EXPECT_TRUE(contains(pre.output, "\"entropy_floor\"")) << pre.output;
  EXPECT_TRUE(contains(pre.output, "one graph of 3 (each has its own)")) << pre.output;
  EXPECT_TRUE(contains(pre.output, "\"elite\"")) << pre.output;
  fs::remove(policy);
}

// P20: a budget too large to finish still shows progress, by time, not only at
// every 1/200 of the budget (which 99999999999 evaluations never reach).
TEST(FreshSearch, AHugeBudgetStillReportsProgress) {
  const std::string cmd = "timeout 3 " + std::string(AWARE_BIN) + " place" + kNmt +
                          " --method random-search --budget-evals 99999999999 2>&1 >/dev/null";
  std::string output;
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  pclose(pipe);
  EXPECT_TRUE(contains(output, "random-search on nmt2 ")) << output;
  EXPECT_TRUE(contains(output, "/99999999999 (0%) best")) << output;
}

// R17: --resume names a checkpoint folder; a file is refused before training.
TEST(FreshSearch, ResumeThatIsAFileIsRefusedFirst) {
  if (!have_agents()) GTEST_SKIP() << "built without the learned agents (LibTorch)";
  const std::string file = tmp("fresh-search-resume.json");
  write(file, "{}\n");
  const Outcome r = aware("search" + kNmt + " --agent aware --budget-evals 5 --resume " + file);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "--resume " + file + ": is a file, not a folder")) << r.output;
  EXPECT_EQ(lines_in(r.output), 1) << r.output;
  EXPECT_EQ(slurp_file(file), "{}\n");
}

// P35: a learned method's output options (save_policy, curve, resume) are
// checked before the training, as search's --save-policy is.
TEST(FreshSearch, MethodOutputOptionsAreCheckedBeforeTraining) {
  if (!have_agents()) GTEST_SKIP() << "built without the learned agents (LibTorch)";
  for (const std::string option : {"save_policy", "curve"}) {
    const std::string path = unwritable("x.out");
    const Outcome r = aware("place" + kNmt + " --method aware --budget-evals 5 --method-option " + option + "=" + path);
    EXPECT_NE(r.exit_code, 0) << option;
    EXPECT_TRUE(contains(r.output, "option '" + option + "' " + path)) << r.output;
    EXPECT_FALSE(contains(r.output, "aware on nmt2")) << r.output;  // no training started
  }
  const std::string file = tmp("fresh-search-resume-option.json");
  write(file, "{}\n");
  const Outcome r = aware("place" + kNmt + " --method aware --budget-evals 5 --method-option resume=" + file);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "is a file, not a folder")) << r.output;
}

// T38: strategy search checks -o before it runs the candidates.
TEST(FreshSearch, StrategySearchChecksItsOutputFirst) {
  const std::string out = unwritable("ss");
  const Outcome r = aware("strategy search --graph zoo:resnet50:batch=8 --cluster preset:k40x4 -o " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "-o " + out)) << r.output;
  EXPECT_EQ(lines_in(r.output), 1) << r.output;  // no progress: nothing ran
  // A folder the check makes for a good -o is not left behind when the run then fails.
  const std::string fresh = tmp("fresh-search-ss-new/sub");
  fs::remove_all(tmp("fresh-search-ss-new"));
  const Outcome bad = aware("strategy search --graph zoo:resnet50:batch=8 --cluster preset:k40x4 "
                            "--methods nonsense -o " + fresh);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_FALSE(fs::exists(tmp("fresh-search-ss-new"))) << bad.output;
}

// P23/P24: a method option out of its range is refused before the first
// evaluation (it used to print a progress line first).
TEST(FreshSearch, MethodOptionRangesAreCheckedBeforeAnyEvaluation) {
  for (const std::string threads : {"0", "100000"}) {
    const Outcome r = aware("place" + kNmt + " --method anneal --method-option threads=" + threads +
                            " --budget-evals 30");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(contains(r.output, "'threads' must be 1..256, got '" + threads + "'")) << r.output;
    EXPECT_EQ(lines_in(r.output), 1) << r.output;
  }
  const Outcome nan = aware("place" + kNmt + " --method anneal --method-option temperature=nan --budget-evals 30");
  EXPECT_NE(nan.exit_code, 0);
  EXPECT_TRUE(contains(nan.output, "'temperature' must be a finite number")) << nan.output;
}

// P26/R15: a learned agent needs one sampled episode and its greedy episode; a
// smaller budget is refused with the minimum instead of being overspent, and
// the progress line's best is the result's.
TEST(FreshSearch, LearnedAgentsKeepTheirBudgetAndReportTheResultsBest) {
  if (!have_agents()) GTEST_SKIP() << "built without the learned agents (LibTorch)";
  const Outcome one = aware("place" + kNmt + " --method placeto --budget-evals 1 --cluster preset:k40x2");
  EXPECT_NE(one.exit_code, 0);
  EXPECT_TRUE(contains(one.output, "--budget-evals 1 is below the 2 evaluations agent placeto needs")) << one.output;
  const Outcome search = aware("search" + kNmt + " --agent placeto --budget-evals 1 --cluster preset:k40x2");
  EXPECT_NE(search.exit_code, 0);
  EXPECT_TRUE(contains(search.output, "is below the 2 evaluations")) << search.output;
  const Outcome two = aware("place" + kNmt + " --method placeto --budget-evals 2 --cluster preset:k40x2");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_TRUE(contains(two.output, " 2/2 (100%)")) << two.output;
  // "best 1.198 ms" on the last progress line, "step time      1.198 ms" in the result.
  const size_t best = two.output.rfind(" best ");
  const size_t step = two.output.find("step time      ");
  ASSERT_NE(best, std::string::npos);
  ASSERT_NE(step, std::string::npos);
  const std::string progress_ms = two.output.substr(best + 6, two.output.find(" ms", best) - best - 6);
  const std::string result_ms = two.output.substr(step + 15, two.output.find(" ms", step) - step - 15);
  EXPECT_EQ(progress_ms, result_ms) << two.output;
}

// R08/R14: nan and inf are refused in every floating option.
TEST(FreshSearch, NonFiniteNumbersAreRefusedInAnyCommand) {
  // Any command's floating option, also one without the agents.
  const Outcome bench = aware("bench simulate --graph zoo:nmt2 --seconds nan");
  EXPECT_NE(bench.exit_code, 0);
  EXPECT_TRUE(contains(bench.output, "'nan' is not a finite number")) << bench.output;
}

TEST(FreshSearch, NonFiniteTrainingNumbersAreRefused) {
  if (!have_agents()) GTEST_SKIP() << "built without the learned agents (LibTorch)";
  for (const std::string bad : {"--lr nan", "--entropy nan"}) {
    const Outcome r = aware("search" + kNmt + " --agent aware --budget-evals 5 " + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_TRUE(contains(r.output, "is not a finite number")) << bad << ": " << r.output;
  }
  const Outcome pre = aware("pretrain --family cifar10 --count 2 --agent aware --budget-evals 5 --save-policy " +
                            tmp("fresh-pre.pt") + " --lr nan");
  EXPECT_NE(pre.exit_code, 0);
  EXPECT_TRUE(contains(pre.output, "is not a finite number")) << pre.output;
  const Outcome option = aware("place" + kNmt + " --method aware --budget-evals 5 --method-option lr=nan");
  EXPECT_NE(option.exit_code, 0);
  EXPECT_TRUE(contains(option.output, "'lr' must be a finite number")) << option.output;
}

// R11: a negative count is refused before the training.
TEST(FreshSearch, NegativeTrainingCountsAreRefused) {
  if (!have_agents()) GTEST_SKIP() << "built without the learned agents (LibTorch)";
  for (const std::string bad : {"--checkpoint-every -1", "--checkpoint-every-updates -1", "--few-shot -2"}) {
    const Outcome r = aware("search" + kNmt + " --agent aware --budget-evals 5 " + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_TRUE(contains(r.output, "must not be negative")) << bad << ": " << r.output;
    EXPECT_EQ(lines_in(r.output), 1) << r.output;
  }
}

// K13: --resume of a file that is not a compare journal is refused, naming the
// line, and the file is left as it was.
TEST(FreshSearch, CompareResumeRefusesAFileThatIsNotAJournal) {
  const std::string file = tmp("fresh-search-not-journal.txt");
  write(file, "hello\n");
  const Outcome r = aware("compare --models " + kNoBatch + " --methods m-etf --cluster k40x2 --resume " + file);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "--resume " + file + ": line 1 is not a compare journal record ('hello')"))
      << r.output;
  EXPECT_EQ(slurp_file(file), "hello\n");
  // A journal torn by a kill (a record cut short) still resumes.
  const std::string journal = tmp("fresh-search-journal.txt");
  fs::remove(journal);
  ASSERT_EQ(aware("compare --models " + kNoBatch + " --methods m-etf --cluster k40x2 --resume " + journal).exit_code, 0);
  std::ofstream(journal, std::ios::app) << "{\"key\":\"cut";
  const Outcome again = aware("compare --models " + kNoBatch + " --methods m-etf --cluster k40x2 --resume " + journal);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "1 cells taken")) << again.output;
}

// K22: a failed cell's reason is printed below the text table, once per reason.
TEST(FreshSearch, CompareTextSaysWhyACellFailed) {
  const Outcome r = aware("compare --models " + kNoBatch + ",random:30:2 --methods none --strategies dp:2 --cluster k40x2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "error")) << r.output;
  const size_t below = r.output.find("placement time, s");
  ASSERT_NE(below, std::string::npos) << r.output;
  const std::string reasons = r.output.substr(below);
  EXPECT_TRUE(contains(reasons, "batch")) << r.output;  // the graphs record no batch
  EXPECT_TRUE(contains(reasons, " / dp:2: ")) << r.output;
}

// T34/M18/K03/K05: an item given twice in one list is refused, named.
TEST(FreshSearch, RepeatedListItemsAreRefused) {
  const Outcome collectives = aware("strategy search --graph zoo:resnet50:batch=8 --cluster preset:k40x4 "
                                    "--collectives ring,ring --no-pipelines -o " + tmp("fresh-ss6"));
  EXPECT_NE(collectives.exit_code, 0);
  EXPECT_TRUE(contains(collectives.output, "--collectives: 'ring' is given twice")) << collectives.output;
  const Outcome mesh = aware("mesh map --network snn:layered:100 --mesh mesh:4x4 --methods hilbert,hilbert");
  EXPECT_NE(mesh.exit_code, 0);
  EXPECT_TRUE(contains(mesh.output, "--methods: 'hilbert' is given twice")) << mesh.output;
}

TEST(FreshSearch, RepeatedCompareListItemsAreRefused) {
  const Outcome models = aware("compare --models " + kNoBatch + "," + kNoBatch + " --methods m-etf --cluster k40x2");
  EXPECT_NE(models.exit_code, 0);
  EXPECT_TRUE(contains(models.output, "--models: '" + kNoBatch + "' is given twice")) << models.output;
  const Outcome devices = aware("compare --models " + kNoBatch + " --methods m-etf --devices 2,2");
  EXPECT_NE(devices.exit_code, 0);
  EXPECT_TRUE(contains(devices.output, "--devices: '2' is given twice")) << devices.output;
  const Outcome methods = aware("compare --models " + kNoBatch + " --methods m-etf,m-etf --cluster k40x2");
  EXPECT_NE(methods.exit_code, 0);
  EXPECT_TRUE(contains(methods.output, "--methods: 'm-etf' is given twice")) << methods.output;
}

// X11: reproduce's modes exclude each other.
TEST(FreshSearch, ReproduceRefusesTwoModes) {
  const std::string out = tmp("fresh-search-r11");
  fs::remove_all(out);
  const Outcome r = aware("reproduce --list --report-only -o " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "--list and --report-only: give one")) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
