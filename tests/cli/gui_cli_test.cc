// aware-gui's command line, run as a user would (headless, offscreen): bad
// numbers and a failed compare exit non-zero with nothing written; a good
// screenshot is written whole. AWARE_BIN is the GUI binary here.
#include <gtest/gtest.h>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;

Outcome gui(const std::string& args) { return aware(args); }

TEST(GuiCommandLine, BadNumbersAreErrorsNamingTheOption) {
  const std::string png = tmp("gui-bad-number.png");
  const struct {
    const char* args;
    const char* option;
  } cases[] = {
      {"--size abc", "--size"},
      {"--size 0x800", "--size"},
      {"--budget many", "--budget"},
      {"--budget -5", "--budget"},
      {"--graphviz-max-ops lots", "--graphviz-max-ops"},
      {"--compare-devices 2,x", "--compare-devices"},
      {"--compare-devices 2,-1", "--compare-devices"},
      {"--zoom -1", "--zoom"},
      {"--quit-after-ms soon", "--quit-after-ms"},
  };
  for (const auto& c : cases) {
    fs::remove(png);
    const Outcome r = gui(std::string("--graph zoo:resnet50 ") + c.args + " --screenshot " + png);
    EXPECT_NE(r.exit_code, 0) << c.args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, std::string("error: ") + c.option)) << c.args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(png)) << c.args;
  }
}

TEST(GuiCommandLine, AFailedCompareExitsNonZeroWithoutAScreenshot) {
  const std::string png = tmp("gui-bad-compare.png");
  fs::remove(png);
  const Outcome r = gui("--graph zoo:resnet50 --view compare --compare-methods heft,no_such_method "
                        "--compare-devices 2 --screenshot " + png);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "no_such_method")) << r.output;
  EXPECT_FALSE(fs::exists(png));
}

TEST(GuiCommandLine, AScreenshotIsWrittenWhole) {
  const std::string png = tmp("gui-good.png");
  fs::remove(png);
  const Outcome r = gui("--graph zoo:resnet50 --size 640x400 --screenshot " + png);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(fs::exists(png));
  std::ifstream in(png, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  EXPECT_GT(fs::file_size(png), 1000u);
  for (const auto& entry : fs::directory_iterator(fs::path(png).parent_path()))
    EXPECT_FALSE(contains(entry.path().filename().string(), "gui-good.png.")) << "a temporary file was left: " << entry.path();
}

}  // namespace
