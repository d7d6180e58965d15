// Issue 39's rows as regression tests: the binary run as a new user would run it.
#include <gtest/gtest.h>

#include "cli_run.h"

#include <chrono>
#include <string>

namespace {

// A layered graph of `ops` MatMuls: op i is fed by op i-1 and by op i/2 (one
// edge when they are the same op), so edges = 2 * ops - 4 for ops >= 3.
// `repeat_flops_at`: that op repeats its "flops" key.
std::string big_graph(int ops, int repeat_flops_at = -1) {
  std::string text = R"({"format":"aware-graph","version":1,"name":"big","ops":[)";
  for (int i = 0; i < ops; ++i) {
    text += (i ? ",\n" : "\n") + std::string(R"({"name":"op)") + std::to_string(i) +
            R"(","type":"MatMul","flops":1e6,)" + (i == repeat_flops_at ? R"("flops":2e6,)" : "") +
            R"("output_bytes":[1e4]})";
  }
  text += "],\n\"edges\":[";
  bool first = true;
  for (int i = 1; i < ops; ++i) {
    const int second = i / 2 != i - 1 ? i / 2 : -1;
    for (int src : {i - 1, second}) {
      if (src < 0) continue;
      text += (first ? "\n" : ",\n") + std::string(R"({"src":"op)") + std::to_string(src) +
              R"(","dst":"op)" + std::to_string(i) + "\"}";
      first = false;
    }
  }
  return text + "]}\n";
}

// `devices` K40s on one switch; `routing` adds an XY mesh routing block.
std::string big_cluster(int devices, const std::string& routing = "") {
  std::string text = R"({"format":"aware-cluster","version":1,"name":"big","devices":[)";
  for (int i = 0; i < devices; ++i)
    text += (i ? ",\n" : "\n") + std::string(R"({"name":"gpu)") + std::to_string(i) +
            R"(","peak_flops":4.29e12,"memory_bytes":12e9,"memory_Bps":288e9})";
  text += R"(],"switches":["hub"],"links":[)";
  for (int i = 0; i < devices; ++i)
    text += (i ? ",\n" : "\n") + std::string(R"({"a":"gpu)") + std::to_string(i) +
            R"(","b":"hub","bandwidth_Bps":1e10})";
  return text + "]" + (routing.empty() ? "" : "," + routing) + "}\n";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// Issue 39: a graph of 10^5 ops took 6-18 s to read (the callback parser was
// quadratic in the ops). Reading is linear now (`aware bench read` measures it,
// docs/performance.md); here a 30,000-op graph is read whole and right, and a
// repeated key deep in it is still found and placed.
TEST(ScaleInput, LargeGraphIsReadWholeAndRight) {
  const int ops = 30000;
  const std::string path = tmp("scale_graph_30000.json");
  write(path, big_graph(ops));
  const Outcome info = aware("graph info " + path);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_TRUE(contains(info.output, "ops            30000 (forward 30000")) << info.output;
  EXPECT_TRUE(contains(info.output, "edges          59996")) << info.output;
  const Outcome sim = aware("simulate --graph " + path + " --placement round-robin");
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_TRUE(contains(sim.output, "step")) << sim.output;

  const std::string repeated = tmp("scale_graph_repeat.json");
  write(repeated, big_graph(ops, ops - 1));
  const Outcome bad = aware("graph info " + repeated);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(
      contains(bad.output, "error: " + repeated + ": field 'flops' appears twice in ops[29999]"))
      << bad.output;
}

// Issue 39: a cluster of 10^6 devices hung (routes for every pair of devices:
// 5,000 devices took 2 GB, 20,000 over 10 GB). Over the documented limit
// (4,096 devices with least-latency routes, 16,384 cores on a mesh) a file is
// refused at once, with the file, the field and the count.
TEST(ScaleInput, ClusterOverTheLimitIsRefusedFast) {
  const std::string path = tmp("scale_cluster_5000.json");
  write(path, big_cluster(5000));
  const auto start = std::chrono::steady_clock::now();
  const Outcome run = aware("simulate --graph zoo:resnet50 --cluster " + path);
  EXPECT_LT(seconds_since(start), 20) << "refusing should not build the routes";
  EXPECT_NE(run.exit_code, 0);
  EXPECT_TRUE(contains(run.output, "error: " + path + ": field 'devices' has 5000 devices;"))
      << run.output;
  EXPECT_TRUE(contains(run.output, "at most 4096")) << run.output;

  // A mesh's routes are made as used, so a mesh may be larger, up to its own limit.
  const std::string mesh = tmp("scale_cluster_mesh.json");
  write(mesh, big_cluster(2, R"("routing":{"kind":"xy","width":100000,"height":100000})"));
  const Outcome wide = aware("simulate --graph zoo:resnet50 --cluster " + mesh);
  EXPECT_NE(wide.exit_code, 0);
  EXPECT_TRUE(contains(
      wide.output, "error: " + mesh + ": routing: field 'width' x height is 10000000000 cores;"))
      << wide.output;
  EXPECT_TRUE(contains(wide.output, "at most 16384")) << wide.output;

  // Under the limit the same kind of file works.
  const std::string small = tmp("scale_cluster_64.json");
  write(small, big_cluster(64));
  const Outcome ok =
      aware("simulate --graph zoo:resnet50 --cluster " + small + " --placement round-robin");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

// Issue 39: a network larger than its mesh holds was found out only after its
// traffic was built (10^7 neurons: over 60 s and 7 GB); the size is checked
// first now, with the same message the mapping gives.
TEST(ScaleInput, MeshMapChecksCapacityBeforeBuilding) {
  const auto start = std::chrono::steady_clock::now();
  const Outcome run = aware("mesh map --network snn:layered:10000000 --mesh mesh:4x4");
  EXPECT_LT(seconds_since(start), 20) << "refused before the traffic is built";
  EXPECT_NE(run.exit_code, 0);
  EXPECT_TRUE(contains(
      run.output,
      "error: mesh mapping: the network has 10000000 neurons, the mesh mesh:4x4 holds 4096"))
      << run.output;
  EXPECT_FALSE(contains(run.output, "groups,")) << "no traffic was built: " << run.output;
}

// Issue 39: on a mesh above the simulated step's 16,384 cores the step column
// was "-" with no reason; the table now says why, and the CSV that --format
// offered (but the command refused) is written, listed in --help.
TEST(ScaleInput, MeshMapSaysWhyTheStepIsMissing) {
  const Outcome md =
      aware("mesh map --network snn:layered:1000 --mesh mesh:200x200 --methods sequential");
  ASSERT_EQ(md.exit_code, 0) << md.output;
  EXPECT_TRUE(contains(md.output, "| snn:layered:1000 | mesh:200x200 | 16 | sequential |"))
      << md.output;
  EXPECT_TRUE(contains(md.output, "| - |")) << md.output;
  EXPECT_TRUE(
      contains(md.output,
               "step (µs) of snn:layered:1000 on mesh:200x200: not simulated: mesh:200x200 has "
               "40000 cores, above the cluster form's 16384"))
      << md.output;

  const std::string path = tmp("scale_mesh.csv");
  std::filesystem::remove(path);
  const Outcome csv = aware(
      "mesh map --network snn:layered:1000:group=32 --mesh mesh:4x4,capacity=512 "
      "--methods hilbert,sequential -o " +
      path);
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  std::ifstream in(path);
  std::string header, row;
  std::getline(in, header);
  EXPECT_EQ(
      header,
      "network,mesh,groups,method,traffic_hops_Bps,max_link_Bps,max_link_utilisation,mean_link_Bps,"
      "cores_used,step_us,place_s,step_note");
  std::getline(in, row);
  // A spec with a comma stays one field; a simulated step has a number and no note.
  EXPECT_EQ(row.rfind("\"snn:layered:1000:group=32\",\"mesh:4x4,capacity=512\",32,\"hilbert\",", 0),
            0u)
      << row;
  EXPECT_EQ(row.substr(row.size() - 3), ",\"\"") << row;

  const Outcome help = aware("mesh map --help");
  EXPECT_TRUE(contains(help.output, "table (Markdown), md, csv or json")) << help.output;
}

// `aware bench read` (docs/performance.md's figures): a row per size up to
// --max-ops, the graph read whole; figures only, no timing asserted.
TEST(ScaleInput, BenchReadReportsARowPerSize) {
  const Outcome run = aware("bench read --max-ops 10000 --json", true);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "\"benchmark\": \"read\"")) << run.output;
  EXPECT_TRUE(contains(run.output, "\"ops\": 1000,")) << run.output;
  EXPECT_TRUE(contains(run.output, "\"ops\": 10000,")) << run.output;
  EXPECT_FALSE(contains(run.output, "\"ops\": 100000,")) << run.output;
  EXPECT_TRUE(contains(run.output, "\"edges\": 1953,"))
      << "random:1000:1 has 1,953 edges: " << run.output;
}
