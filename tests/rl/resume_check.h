// The learned-agent tests' resume check: a run stopped after an update and
// resumed with the same budget must be the run that never stopped, bit for bit.
// And the scratch folder each such test (or a policy file) writes into.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "agents/rl/trainer.h"
#include "core/progress.h"

namespace aware::testing {

// A fresh folder for one test's policy file.
inline std::filesystem::path test_dir(const std::string& what, int seed) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / (what + "_" + std::to_string(seed) + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Cancels the run once an update has brought it to `at` evaluations.
class StopAt final : public ProgressObserver {
 public:
  explicit StopAt(long long at) : at_(at) {}
  void on_progress(const Progress& p) override {
    if (p.done >= at_) cancel();
  }

 private:
  long long at_;
};

using TrainRun = std::function<rl::TrainResult(const rl::TrainOptions&)>;

// Runs `train` with `t` straight through; then again in `dir`, stopped once an
// update reaches `stop_at` evaluations and resumed; and expects the two to agree
// in every counter and curve row (times aside) and in the greedy placement.
inline void expect_resume_is_the_straight_run(const TrainRun& train, rl::TrainOptions t, long long stop_at,
                                              const std::filesystem::path& dir, const std::string& what) {
  const rl::TrainResult straight = train(t);
  t.resume_dir = dir.string();
  StopAt stop(stop_at);
  t.progress = &stop;
  const rl::TrainResult first = train(t);
  t.progress = nullptr;
  const rl::TrainResult resumed = train(t);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(first.cancelled) << what;
  ASSERT_LT(first.updates, straight.updates) << what << ": the first run must stop early";
  ASSERT_TRUE(resumed.resumed) << what;
  EXPECT_EQ(resumed.evaluations, straight.evaluations) << what;
  EXPECT_EQ(resumed.updates, straight.updates) << what;
  EXPECT_EQ(resumed.episodes, straight.episodes) << what;
  EXPECT_EQ(resumed.self_imitation_updates, straight.self_imitation_updates) << what;
  EXPECT_EQ(resumed.self_imitation_probability, straight.self_imitation_probability) << what;
  EXPECT_EQ(resumed.elite_updates, straight.elite_updates) << what;
  EXPECT_EQ(resumed.elite_probability, straight.elite_probability) << what;
  EXPECT_EQ(resumed.best_step_us, straight.best_step_us) << what;
  EXPECT_EQ(resumed.greedy, straight.greedy) << what;
  ASSERT_EQ(resumed.curve.size(), straight.curve.size()) << what;
  for (size_t i = 0; i < straight.curve.size(); ++i) {
    const std::string row = what + ", row " + std::to_string(i);
    EXPECT_EQ(resumed.curve[i].evaluations, straight.curve[i].evaluations) << row;
    EXPECT_EQ(resumed.curve[i].best_step_us, straight.curve[i].best_step_us) << row;
    EXPECT_EQ(resumed.curve[i].mean_step_us, straight.curve[i].mean_step_us) << row;
    EXPECT_EQ(resumed.curve[i].entropy, straight.curve[i].entropy) << row;
    EXPECT_EQ(resumed.curve[i].loss, straight.curve[i].loss) << row;
  }
}

// The same for train_agent on one graph.
inline void expect_resume_is_the_straight_run(const std::string& agent, const OpGraph& g, const Cluster& c,
                                              Evaluator& sim, const rl::TrainOptions& t, long long stop_at,
                                              const std::filesystem::path& dir, const std::string& what) {
  expect_resume_is_the_straight_run([&](const rl::TrainOptions& o) { return rl::train_agent(agent, g, c, sim, o); },
                                    t, stop_at, dir, what);
}

}  // namespace aware::testing
