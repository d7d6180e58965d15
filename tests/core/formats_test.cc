#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/exporters.h"
#include "core/formats.h"
#include "core/placement.h"
#include "core/random_dag.h"
#include "core/units.h"
#include "test_graphs.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

std::string tmp_path(const std::string& name) {
  return (std::filesystem::path(AWARE_TEST_TMPDIR) / name).string();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// Expects `fn` to throw ParseError mentioning every fragment.
template <typename Fn>
void expect_parse_error(Fn fn, const std::vector<std::string>& fragments) {
  testing::expect_error<ParseError>(fn, fragments);
}

const char* kGoodGraph = R"({"format":"aware-graph","version":1,"name":"g","ops":[
  {"name":"a","type":"MatMul","flops":100,"output_bytes":[8]},
  {"name":"b","type":"Relu","phase":"backward","flops":5,"output_bytes":[8],"forward_of":"a"}],
  "edges":[{"src":"a","dst":"b"}]})";

TEST(Formats, GraphRoundTripIsIdentical) {
  OpGraph g = random_layered_dag(200, 5);
  g.mutable_op(3).colocation_group = "grp";
  g.mutable_op(4).compute_us = 12.5;
  g.mutable_op(5).shape = {{"M", 128}, {"K", 64}};
  g.mutable_op(6).block = "encoder";
  g.mutable_op(6).layer = 2;
  g.mutable_op(7).forward_of = 1;
  g.mutable_op(8).stream = 1;
  g.set_batch(96);
  const std::string path = tmp_path("roundtrip.json");
  write_graph_file(g, path);
  const OpGraph back = read_graph_file(path);
  EXPECT_EQ(back.batch(), 96);
  EXPECT_EQ(back.op(8).stream, 1);
  EXPECT_EQ(graph_to_json(back).dump(), graph_to_json(g).dump());
}

TEST(Formats, OpStreamIsZeroOrOne) {
  const std::string path = tmp_path("stream.json");
  std::string text = kGoodGraph;
  text.replace(text.find("\"flops\":100"), 11, "\"flops\":100,\"stream\":2");
  write(path, text);
  expect_parse_error([&] { read_graph_file(path); }, {path, "op 'a'", "stream"});
}

TEST(Formats, GraphBatchMustBePositiveAndFinite) {
  const std::string path = tmp_path("batch.json");
  std::string text = kGoodGraph;
  text.replace(text.find("\"name\":\"g\""), 10, "\"name\":\"g\",\"batch\":-4");
  write(path, text);
  expect_parse_error([&] { read_graph_file(path); }, {path, "batch"});
}

TEST(Formats, ClusterAndPlacementRoundTrip) {
  const Cluster c = make_cluster_preset("k40x8");
  const std::string cpath = tmp_path("cluster.json");
  write_cluster_file(c, cpath);
  const Cluster back = read_cluster_file(cpath);
  EXPECT_EQ(cluster_to_json(back).dump(), cluster_to_json(c).dump());
  EXPECT_EQ(back.route(0, 5).size(), c.route(0, 5).size());

  const OpGraph g = random_layered_dag(50, 1);
  const Placement p = round_robin_placement(g, c);
  const std::string ppath = tmp_path("placement.json");
  write_placement_file(g, c, p, ppath);
  EXPECT_EQ(read_placement_file(ppath, g, c), p);
}

TEST(Formats, BadGraphFilesNameTheFileOpAndField) {
  const std::string path = tmp_path("bad.json");
  write(path, "{not json");
  expect_parse_error([&] { read_graph_file(path); }, {path, "not valid JSON"});

  write(path, R"({"format":"aware-graph","version":7,"ops":[],"edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "version"});

  write(path, R"({"format":"aware-graph","version":1,"edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "'ops'", "missing"});

  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","flops":-3}],"edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "op 'a'", "'flops'"});

  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","flops":1e999}],"edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "1e999"});

  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","flops":"lots"}],"edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "op 'a'", "'flops'", "number"});

  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","output_bytes":[1]}],
    "edges":[{"src":"a","dst":"zz"}]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "'dst'", "zz"});

  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","output_bytes":[1]},
    {"name":"b","output_bytes":[1]}],"edges":[{"src":"a","dst":"b"},{"src":"b","dst":"a"}]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "cycle"});

  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a"},{"name":"a"}],"edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "duplicate"});

  expect_parse_error([&] { read_graph_file(tmp_path("does-not-exist.json")); }, {"does-not-exist", "cannot open"});
}

// Regressions for the strict readers: misspelt fields, empty and repeated content,
// a directory for a file, a cycle named by its edge.
TEST(Formats, StrictReadersRefuseWhatTheFormatDoesNotHave) {
  const std::string path = tmp_path("strict.json");
  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","flps":1e9,"output_bytes":[1]}],
    "edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "op 'a'", "unknown field 'flps'", "flops"});
  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","outputbytes":[1]}],"edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "op 'a'", "'outputbytes'"});
  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","output_bytes":[1]},
    {"name":"b"}],"edges":[{"src":"a","dst":"b","byte":5}]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "edge 'a' -> 'b'", "'byte'"});
  write(path, R"({"format":"aware-graph","version":1,"opz":[],"ops":[{"name":"a"}],"edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "'opz'"});
  write(path, R"({"format":"aware-graph","version":1,"ops":[],"edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "'ops'", "empty"});
  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","output_bytes":[1]},
    {"name":"b"}],"edges":[{"src":"a","dst":"b"},{"src":"a","dst":"b"}]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "edge 'a' -> 'b'", "repeats"});
  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","output_bytes":[1]},
    {"name":"b","output_bytes":[1]}],"edges":[{"src":"a","dst":"b"},{"src":"b","dst":"a"}]})");
  try {
    read_graph_file(path);
    FAIL() << "a cycle was accepted";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'edges'"), std::string::npos) << what;
    EXPECT_EQ(what.find("inputs"), std::string::npos) << what;  // the format has no such field
  }
  expect_parse_error([&] { read_graph_file(AWARE_TEST_TMPDIR); }, {"is a directory"});

  write(path, R"({"format":"aware-cluster","version":1,"devices":[
    {"name":"a","peak_flops":1e12,"memory_bytes":1e9,"memory_Bps":1e11,"eficiency":0.5}]})");
  expect_parse_error([&] { read_cluster_file(path); }, {path, "device 'a'", "'eficiency'"});
  write(path, R"({"format":"aware-cluster","version":1,"devices":[
    {"name":"a","peak_flops":1e12,"memory_bytes":1e9,"memory_Bps":1e11},
    {"name":"b","peak_flops":1e12,"memory_bytes":1e9,"memory_Bps":1e11}],"switches":["s"],
    "links":[{"name":"l","a":"a","b":"s","bandwidth_Bps":1e9},{"name":"l","a":"b","b":"s","bandwidth_Bps":1e9}]})");
  expect_parse_error([&] { read_cluster_file(path); }, {path, "link 'l'", "duplicate"});
  write(path, R"({"format":"aware-cluster","version":1,"devices":[
    {"name":"a","peak_flops":1e12,"memory_bytes":1e9,"memory_Bps":1e11}],
    "links":[{"name":"l","a":"a","b":"a","bandwidth_Bps":1e9,"latency":3}]})");
  expect_parse_error([&] { read_cluster_file(path); }, {path, "link 'l'", "'latency'"});

  // A repeated key would keep only its last value: refused in every format, with
  // where it is (an array element by its index).
  write(path, R"({"format":"aware-graph","version":1,"ops":[{"name":"a","output_bytes":[1]},
    {"name":"b","flops":1e9,"flops":2e9}],"edges":[]})");
  expect_parse_error([&] { read_graph_file(path); }, {path, "'flops'", "twice", "ops[1]"});
  write(path, R"({"format":"aware-cluster","version":1,"devices":[
    {"name":"a","peak_flops":1e12,"memory_bytes":1e9,"memory_bytes":2e9,"memory_Bps":1e11}]})");
  expect_parse_error([&] { read_cluster_file(path); },
                     {path, "'memory_bytes'", "twice", "devices[0]"});
}

TEST(Formats, BadPlacementsAreRejected) {
  const std::string gpath = tmp_path("good.json");
  write(gpath, kGoodGraph);
  const OpGraph g = read_graph_file(gpath);
  const Cluster c = testing::star_cluster(2);
  const std::string path = tmp_path("badplacement.json");
  write(path, R"({"format":"aware-placement","version":1,"devices":{"a":"dev0"}})");
  expect_parse_error([&] { read_placement_file(path, g, c); }, {path, "op 'b'"});
  write(path, R"({"format":"aware-placement","version":1,"devices":{"a":"dev0","b":"gpu9"}})");
  expect_parse_error([&] { read_placement_file(path, g, c); }, {path, "op 'b'", "gpu9"});
  write(path, R"({"format":"aware-placement","version":1,"devices":{"a":"dev0","b":"dev1","zz":"dev0"}})");
  expect_parse_error([&] { read_placement_file(path, g, c); }, {path, "zz"});
}

TEST(Formats, BadClustersAreRejected) {
  const std::string path = tmp_path("badcluster.json");
  write(path, R"({"format":"aware-cluster","version":1,"devices":[
    {"name":"a","peak_flops":1e12,"memory_bytes":1e9,"memory_Bps":1e11},
    {"name":"b","peak_flops":1e12,"memory_bytes":1e9,"memory_Bps":1e11}],
    "links":[{"name":"ab","a":"a","b":"b","bandwidth_Bps":0}]})");
  expect_parse_error([&] { read_cluster_file(path); }, {path, "link 'ab'", "bandwidth_Bps"});
  write(path, R"({"format":"aware-cluster","version":1,"devices":[
    {"name":"a","peak_flops":1e12,"memory_bytes":1e9,"memory_Bps":1e11},
    {"name":"b","peak_flops":1e12,"memory_bytes":1e9,"memory_Bps":1e11}],"links":[]})");
  expect_parse_error([&] { read_cluster_file(path); }, {path, "'b'", "cannot be reached"});
  write(path, R"({"format":"aware-cluster","version":1,"devices":[{"name":"a","memory_bytes":1e9,"memory_Bps":1e11}]})");
  expect_parse_error([&] { read_cluster_file(path); }, {path, "device 'a'", "peak_flops"});
}

TEST(Formats, FailedWriteLeavesNothingBehind) {
  const std::string dir = tmp_path("no-such-dir/sub");
  EXPECT_THROW(write_text_file_atomic(dir + "/x.json", "{}"), ParseError);
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.json"));
}

TEST(Formats, DotAndChromeTraceExports) {
  const OpGraph g = testing::diamond_graph();
  const Placement p({0, 0, 1, 0});
  const std::string dot = graph_to_dot(g, &p);
  EXPECT_NE(dot.find("digraph"), std::string::npos);
  EXPECT_NE(dot.find("color=red"), std::string::npos);  // the cut edges
  const Cluster c = testing::star_cluster(2);
  Trace t;
  t.ops = {{0, 0, 0, 10}, {1, 0, 10, 30}, {2, 1, 13, 43}, {3, 0, 46, 51}};
  TransferSpan s;
  s.src_op = 0;
  s.src_device = 0;
  s.dst_device = 1;
  s.start_us = 10;
  s.end_us = 13;
  s.channels = c.route(0, 1).empty() ? std::vector<int>{} : std::vector<int>{c.route(0, 1)[0].channel(), c.route(0, 1)[1].channel()};
  t.transfers.push_back(s);
  const nlohmann::json doc = trace_to_chrome(g, c, t);
  int complete = 0;
  for (const auto& e : doc["traceEvents"]) complete += e["ph"] == "X";
  EXPECT_EQ(complete, 4 + 2);  // four ops, one transfer shown on both links it crosses
}

// The shared number formatters (core/units.h) and first_line (core/errors.h),
// by hand: what the CLI, the agents and the simulators printed before they shared them.
TEST(Units, FixedNumberBytesAndMilliseconds) {
  EXPECT_EQ(format_fixed(1.23456, 2), "1.23");
  EXPECT_EQ(format_fixed(45.67, 1), "45.7");
  EXPECT_EQ(format_fixed(2999.5, 0), "3000");
  EXPECT_EQ(format_fixed(-0.5, 3), "-0.500");
  EXPECT_EQ(format_number(2), "2");
  EXPECT_EQ(format_number(0.5), "0.5");
  EXPECT_EQ(format_number(1e9), "1e+09");
  EXPECT_EQ(format_number(123456789), "1.23457e+08");
  EXPECT_EQ(format_bytes(12e6, BytesStyle::kGigabytes), "0.012 GB");
  EXPECT_EQ(format_ms(12345), "12.345 ms");
  EXPECT_EQ(first_line("one\ntwo\n"), "one");
  EXPECT_EQ(first_line("no newline"), "no newline");
  EXPECT_EQ(first_line(""), "");
}

// Issue 39 (F-g_flopshuge, S24): FLOPs of 1e300 printed as 301 digits. Beyond 1e12
// the formatters switch to an exponent; below it nothing changes.
TEST(Units, HugeValuesHaveAnExponentNotHundredsOfDigits) {
  EXPECT_EQ(format_fixed(999999999999.0, 1), "999999999999.0");
  EXPECT_EQ(format_fixed(1e300, 3), "1.0000e+300");
  EXPECT_EQ(format_fixed(-4.6125e299, 3), "-4.6125e+299");
  EXPECT_EQ(format_bytes(1e300, BytesStyle::kTable), "1.0000e+291 GB");
  EXPECT_EQ(format_bytes(1e300, BytesStyle::kCompact), "1.0000e+291 GB");
  EXPECT_EQ(format_bytes(1e300, BytesStyle::kGigabytes), "1.0000e+291 GB");
  EXPECT_EQ(format_bytes(2.5e12, BytesStyle::kTable), "2500.00 GB");
  EXPECT_EQ(format_ms(1e300), "1.0000e+297 ms");
}

// A need just over the capacity reads differently from it (issue 39: "needs
// 0.120 GB, has 0.120 GB").
TEST(Units, MemoryShortfallReadsDifferently) {
  EXPECT_EQ(format_memory_shortfall(2e9, 1e9), "needs 2.000 GB, has 1.000 GB");
  EXPECT_EQ(format_memory_shortfall(120.2e6, 120e6), "needs 0.1202 GB, has 0.1200 GB");
  EXPECT_EQ(format_memory_shortfall(1500, 1000), "needs 0.000002 GB, has 0.000001 GB");
  // Beyond 9 decimals it stops (the two are then equal to a byte).
  EXPECT_EQ(format_memory_shortfall(1000.0001, 1000), "needs 0.000001000 GB, has 0.000001000 GB");
}

}  // namespace
}  // namespace aware
