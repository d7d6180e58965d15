// Issue 39's general rows: how errors are printed, `aware list`, the help texts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace {

TEST(CliMessages, ErrorIsOneLineWithoutBlankLineBeforeIt) {
  const Outcome r = aware("graph info " + tmp("no-such-graph.json"));
  EXPECT_EQ(r.exit_code, 1);
  // The first byte is the message itself: no blank line "in case a progress line was open".
  EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << r.output;
  EXPECT_TRUE(contains(r.output, "no-such-graph.json")) << r.output;
}

TEST(CliMessages, JsonErrorsAreJsonOnStdout) {
  const Outcome r = aware("graph info " + tmp("no-such-graph.json") + " --json", /*stdout_only=*/true);
  EXPECT_EQ(r.exit_code, 1);
  const nlohmann::json doc = nlohmann::json::parse(r.output);  // throws (fails) on anything else
  ASSERT_TRUE(doc.contains("error")) << r.output;
  EXPECT_TRUE(contains(doc["error"].get<std::string>(), "no-such-graph.json"));
  // A parse error of the command line too.
  const Outcome p = aware("simulate --json", /*stdout_only=*/true);
  EXPECT_NE(p.exit_code, 0);
  EXPECT_TRUE(nlohmann::json::parse(p.output).contains("error")) << p.output;
  // An unknown command.
  const Outcome u = aware("simulat --json", /*stdout_only=*/true);
  EXPECT_EQ(u.exit_code, 1);
  EXPECT_TRUE(contains(nlohmann::json::parse(u.output).at("error").get<std::string>(), "simulat"));
}

TEST(CliMessages, ListWithoutKindPrintsEveryKind) {
  const Outcome r = aware("list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* kind : {"evaluators", "placers", "agents", "strategies", "clusters", "models", "plugins"})
    EXPECT_TRUE(contains(r.output, std::string("== ") + kind)) << kind;
  const Outcome j = aware("list --json", true);
  ASSERT_EQ(j.exit_code, 0);
  const nlohmann::json doc = nlohmann::json::parse(j.output);
  EXPECT_EQ(doc.size(), 7u);
  EXPECT_FALSE(doc.at("placers").empty());
}

TEST(CliMessages, ListStrategiesClustersModels) {
  const Outcome s = aware("list strategies");
  ASSERT_EQ(s.exit_code, 0) << s.output;
  EXPECT_TRUE(contains(s.output, "dp\n")) << s.output;
  EXPECT_TRUE(contains(s.output, "pipeline")) << s.output;
  const Outcome c = aware("list clusters");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_TRUE(contains(c.output, "preset:k40x4\n    4 devices, K40")) << c.output;
  const Outcome m = aware("list models");
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_TRUE(contains(m.output, "zoo:resnet50\n    keys: batch, image_size")) << m.output;
  EXPECT_TRUE(contains(m.output, "family:cifar10:SEED")) << m.output;
  const Outcome bad = aware("list everything");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(contains(bad.output, "unknown kind 'everything'")) << bad.output;
  EXPECT_TRUE(contains(bad.output, "models")) << bad.output;
}

TEST(CliMessages, GraphHelpNamesTheZooInsteadOfItself) {
  const Outcome r = aware("graph info --help");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_FALSE(contains(r.output, "(aware graph info --help)")) << r.output;
  for (const char* model : {"inception_v3", "resnet50", "nmt4", "gnmt", "rnnlm", "transformer"})
    EXPECT_TRUE(contains(r.output, model)) << model;
}

}  // namespace
