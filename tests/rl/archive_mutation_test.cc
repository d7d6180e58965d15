// Corrupt policy files and checkpoints (LibTorch zip archives). The prebuilt
// LibTorch is not instrumented, so libFuzzer would learn nothing from it; instead
// a seeded sweep saves a small policy and a checkpoint, then reads hundreds of
// damaged copies the way `place --policy`, `search --init` and `--resume` do:
// truncated at many offsets, bits flipped in the local headers, the central
// directory, the end record and the data, ranges zeroed, junk appended; plus an
// empty file, a folder, text and a JSON file in the archive's place. Each read
// must either succeed or throw one aware::Error line naming the file (never a
// crash, a hang or a LibTorch exception), and a checkpoint that fails to load
// leaves every file of the run as it was. Label: torch.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agents/rl/agent.h"
#include "core/archive_check.h"
#include "agents/rl/trainer.h"
#include "builtins/builtins.h"
#include "core/errors.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/rl/rl_test_graphs.h"

namespace aware::rl {
namespace {

namespace fs = std::filesystem;
using testing::star_cluster;
using testing::two_chains_graph;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string fresh_dir(const std::string& name) {
  const fs::path p =
      fs::temp_directory_path() / ("aware_rl_archive_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

// Where the zip structures of an archive start: local file headers, central
// directory entries, the end-of-central-directory record (and its zip64 forms).
struct ZipLayout {
  std::vector<std::size_t> local_headers, central_entries, end_records;
};

ZipLayout layout_of(const std::string& bytes) {
  ZipLayout z;
  for (std::size_t i = 0; i + 4 <= bytes.size(); ++i) {
    if (bytes[i] != 'P' || bytes[i + 1] != 'K') continue;
    const char a = bytes[i + 2], b = bytes[i + 3];
    if (a == 3 && b == 4) z.local_headers.push_back(i);
    if (a == 1 && b == 2) z.central_entries.push_back(i);
    if ((a == 5 && b == 6) || (a == 6 && (b == 6 || b == 7))) z.end_records.push_back(i);
  }
  return z;
}

// One damaged copy of an archive, described for failure messages.
struct Mutant {
  std::string how;
  std::string bytes;
};

// The sweep's copies of `archive`: `count` mutants from a fixed seed, spread over
// the kinds of damage, plus the fixed cases.
std::vector<Mutant> mutants_of(const std::string& archive, int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](std::size_t n) { return n == 0 ? std::size_t{0} : rng() % n; };
  const ZipLayout zip = layout_of(archive);
  const std::size_t size = archive.size();
  std::vector<Mutant> out;
  auto flip_in = [&](const std::string& region, std::size_t begin, std::size_t length) {
    std::string bytes = archive;
    const std::size_t at = std::min(size - 1, begin + pick(std::max<std::size_t>(length, 1)));
    bytes[at] = static_cast<char>(bytes[at] ^ (1 << pick(8)));
    out.push_back({"bit flipped at byte " + std::to_string(at) + " (" + region + ")", bytes});
  };
  auto start_in = [&](const std::vector<std::size_t>& starts) {
    return starts.empty() ? std::size_t{0} : starts[pick(starts.size())];
  };

  // Fixed cases: what a user might hand over instead of an archive.
  out.push_back({"empty file", ""});
  out.push_back({"text", "not a torch archive\n"});
  out.push_back({"a JSON file", R"({"format":"aware-rl-policy","version":1,"agent":"placeto"})"});
  out.push_back({"zip signature only", std::string("PK\x03\x04", 4)});
  out.push_back(
      {"end record only", archive.substr(zip.end_records.empty() ? 0 : zip.end_records[0])});
  out.push_back({"junk appended", archive + std::string(1000, 'x')});
  out.push_back({"archive twice", archive + archive});
  out.push_back({"last byte cut", archive.substr(0, size - 1)});
  out.push_back({"end record cut",
                 archive.substr(0, zip.end_records.empty() ? size / 2 : zip.end_records[0])});
  out.push_back(
      {"central directory cut",
       archive.substr(0, zip.central_entries.empty() ? size / 3 : zip.central_entries[0])});

  const int fixed = static_cast<int>(out.size());
  for (int i = 0; static_cast<int>(out.size()) < fixed + count; ++i) {
    switch (i % 7) {
      case 0: {  // truncated anywhere
        const std::size_t at = pick(size);
        out.push_back({"truncated at byte " + std::to_string(at), archive.substr(0, at)});
        break;
      }
      case 1:
        flip_in("a local file header", start_in(zip.local_headers), 30);
        break;
      case 2:
        flip_in("the central directory", start_in(zip.central_entries), 46);
        break;
      case 3:
        flip_in("the end records", start_in(zip.end_records), 56);
        break;
      case 4:
        flip_in("anywhere", 0, size);
        break;
      case 5: {  // a range zeroed, up to 4 KiB
        std::string bytes = archive;
        const std::size_t at = pick(size);
        const std::size_t length = std::min(size - at, 1 + pick(4096));
        std::fill(bytes.begin() + static_cast<long>(at),
                  bytes.begin() + static_cast<long>(at + length), '\0');
        out.push_back({std::to_string(length) + " bytes zeroed at " + std::to_string(at), bytes});
        break;
      }
      default: {  // a few bytes overwritten with random ones
        std::string bytes = archive;
        const std::size_t at = pick(size);
        const std::size_t length = std::min(size - at, 1 + pick(8));
        for (std::size_t k = 0; k < length; ++k) bytes[at + k] = static_cast<char>(rng());
        out.push_back({std::to_string(length) + " random bytes at " + std::to_string(at), bytes});
        break;
      }
    }
  }
  return out;
}

// Outcomes of a sweep, printed for the README's figures.
struct Outcomes {
  int loaded = 0;
  std::map<std::string, int> refused;  // by error class
  std::string summary() const {
    std::string text = std::to_string(loaded) + " loaded";
    for (const auto& [name, n] : refused) text += ", " + std::to_string(n) + " " + name;
    return text;
  }
};

std::string error_class(const Error& e) {
  if (dynamic_cast<const ParseError*>(&e)) return "ParseError";
  if (dynamic_cast<const ConfigError*>(&e)) return "ConfigError";
  return "Error";
}

// Runs `read`; success, or an aware::Error of one line naming `path`. Returns
// whether it succeeded.
bool expect_loads_or_names_the_file(const std::function<void()>& read, const std::string& path,
                                    const std::string& how, Outcomes* outcomes) {
  try {
    read();
    ++outcomes->loaded;
    return true;
  } catch (const Error& e) {
    ++outcomes->refused[error_class(e)];
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << how << ": " << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << how << ": " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << how << ": not an aware::Error: " << e.what();
  }
  return false;
}

TrainOptions small_run(long long evals) {
  TrainOptions t;
  t.budget_evals = evals;
  t.seed = 3;
  t.checkpoint_every_updates = 1;
  return t;
}

class ArchiveMutants : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_builtins(); }
  const OpGraph graph_ = two_chains_graph(3);
  const Cluster cluster_ = star_cluster(2);
  AnalyticSimulator sim_;
};

// `place --policy FILE` reads the header, then loads the policy and places
// zero-shot; `search --init FILE` takes the same path before training.
TEST_F(ArchiveMutants, DamagedPolicyFilesLoadOrNameTheFile) {
  const std::string dir = fresh_dir("policy");
  TrainOptions t = small_run(12);
  t.save_policy = dir + "/good.pt";
  train_agent("placeto", graph_, cluster_, sim_, t);
  const std::string good = read_bytes(t.save_policy);
  ASSERT_GT(good.size(), 100u);

  const std::string path = dir + "/policy.pt";
  Outcomes outcomes;
  for (const Mutant& m : mutants_of(good, 250, /*seed=*/7)) {
    write_bytes(path, m.bytes);
    expect_loads_or_names_the_file(
        [&] {
          (void)read_policy_info(path);
          TrainOptions zero_shot;
          zero_shot.init_policy = path;
          train_agent("placeto", graph_, cluster_, sim_, zero_shot);
        },
        path, m.how, &outcomes);
    if (HasFailure()) break;
  }
  // A folder in the file's place.
  fs::remove(path);
  fs::create_directory(path);
  expect_loads_or_names_the_file([&] { (void)read_policy_info(path); }, path, "a folder",
                                 &outcomes);
  std::printf("policy mutants: %s\n", outcomes.summary().c_str());
  EXPECT_GT(outcomes.refused["ParseError"], 150);
  fs::remove_all(dir);
}

// `search --resume DIR`: a damaged checkpoint.pt either resumes or stops the run
// before it writes anything: the checkpoint, the curve and the policy file the
// user already has stay byte for byte, and no temporary file is left.
TEST_F(ArchiveMutants, DamagedCheckpointsResumeOrLeaveEveryFileAsItWas) {
  const std::string dir = fresh_dir("checkpoint");
  TrainOptions t = small_run(12);
  t.resume_dir = dir + "/good";
  train_agent("placeto", graph_, cluster_, sim_, t);
  const std::string good = read_bytes(t.resume_dir + "/checkpoint.pt");
  ASSERT_GT(good.size(), 100u);

  const std::string run = dir + "/run";
  const std::string checkpoint = run + "/checkpoint.pt";
  const std::string curve = run + "/curve.csv", policy = run + "/policy.pt";
  const std::string curve_text = "evaluations,seconds\n1,0.5\n", policy_bytes = "an earlier policy";
  Outcomes outcomes;
  for (const Mutant& m : mutants_of(good, 120, /*seed=*/11)) {
    fs::remove_all(run);
    fs::create_directories(run);
    write_bytes(checkpoint, m.bytes);
    write_bytes(curve, curve_text);
    write_bytes(policy, policy_bytes);
    TrainOptions resume = small_run(16);
    resume.resume_dir = run;
    resume.curve_csv = curve;
    resume.save_policy = policy;
    const bool resumed = expect_loads_or_names_the_file(
        [&] { train_agent("placeto", graph_, cluster_, sim_, resume); }, checkpoint, m.how,
        &outcomes);
    if (!resumed) {
      EXPECT_EQ(read_bytes(checkpoint), m.bytes) << m.how;
      EXPECT_EQ(read_bytes(curve), curve_text) << m.how;
      EXPECT_EQ(read_bytes(policy), policy_bytes) << m.how;
      int files = 0;
      for (const auto& e : fs::directory_iterator(run)) files += e.is_regular_file() ? 1 : 0;
      EXPECT_EQ(files, 3) << m.how << ": a file was added beside the run's three";
    }
    if (HasFailure()) break;
  }
  std::printf("checkpoint mutants: %s\n", outcomes.summary().c_str());
  EXPECT_GT(outcomes.refused["ParseError"], 70);
  fs::remove_all(dir);
}

// ------------------------------------------------- what the sweep found

TEST(ZipCrc32, MatchesTheStandardCheckValue) {
  EXPECT_EQ(zip_crc32("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(zip_crc32("", 0), 0u);
}

// LibTorch 1.13 does not check the CRC-32 of the entries it reads: before the
// archive check, 175 of 261 damaged policy files loaded, among them flipped bits
// in the weights (the network changed without a word).
TEST_F(ArchiveMutants, AFlippedBitInAWeightIsRefused) {
  const std::string dir = fresh_dir("weight");
  TrainOptions t = small_run(12);
  t.save_policy = dir + "/policy.pt";
  train_agent("placeto", graph_, cluster_, sim_, t);
  std::string bytes = read_bytes(t.save_policy);
  // The first tensor's data follows the local header of "<name>/data/0".
  const std::size_t name = bytes.find("/data/0");
  ASSERT_NE(name, std::string::npos);
  const std::size_t header = bytes.rfind(std::string("PK\x03\x04", 4), name);
  ASSERT_NE(header, std::string::npos);
  const auto u16 = [&](std::size_t at) {
    return static_cast<unsigned char>(bytes[at]) | static_cast<unsigned char>(bytes[at + 1]) << 8;
  };
  const std::size_t data = header + 30 + u16(header + 26) + u16(header + 28);
  bytes[data + 5] = static_cast<char>(bytes[data + 5] ^ 0x10);
  write_bytes(t.save_policy, bytes);
  try {
    read_policy_info(t.save_policy);
    FAIL() << "a policy with a damaged weight loaded";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(t.save_policy), std::string::npos) << what;
    EXPECT_NE(what.find("data/0' fails its CRC-32 check"), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

// A sound archive whose header has the wrong shape or settings no network can
// take: one error naming the file, not a JSON library exception or a LibTorch
// allocation failure.
TEST_F(ArchiveMutants, HeadersOfTheWrongShapeNameTheFile) {
  const std::string dir = fresh_dir("header");
  const std::string path = dir + "/policy.pt";
  auto write_policy = [&](const std::string& header) {
    torch::serialize::OutputArchive archive;
    archive.write("header", c10::IValue(header));
    save_archive_atomic(archive, path);
  };
  TrainOptions zero_shot;
  zero_shot.init_policy = path;
  const std::string good_start = R"({"format":"aware-rl-policy","version":1,"agent":"placeto",)";
  for (const auto& [header, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"[1, 2]", "not a JSON object"},
           {"{\"format\": ", "not JSON"},
           {R"({"format":"aware-rl-policy","version":"1"})",
            "'version' of its header must be an integer"},
           {good_start + R"("devices":"two"})", "'devices' of its header must be an integer"},
           {good_start + R"("devices":2,"config":[1]})",
            "'config' of its header must be an object"},
           {good_start + R"("devices":2,"config":{"hidden":"-4"}})", "cannot build the network"},
           {good_start + R"("devices":2,"config":{"colour":"blue"}})",
            "cannot build the network"}}) {
    write_policy(header);
    try {
      train_agent("placeto", graph_, cluster_, sim_, zero_shot);
      ADD_FAILURE() << "loaded a policy with header " << header;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << header << ": " << what;
      EXPECT_NE(what.find(fragment), std::string::npos) << header << ": " << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << header << ": not an aware::Error: " << e.what();
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aware::rl
