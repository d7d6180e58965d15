// The cost-table file format: round trip, strict errors naming the file, the
// device kind and the op; the fingerprint; coverage of a graph on a cluster.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/cluster.h"
#include "core/cost_table.h"
#include "core/errors.h"
#include "core/op_graph.h"
#include "test_graphs.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

std::string tmp_path(const std::string& name) {
  return (std::filesystem::path(AWARE_TEST_TMPDIR) / name).string();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Expects reading `path` to throw ParseError mentioning every fragment.
void expect_read_error(const std::string& path, const std::vector<std::string>& fragments) {
  SCOPED_TRACE(path);
  testing::expect_error<ParseError>([&] { read_cost_table_file(path); }, fragments);
}

Device device_of_kind(const std::string& name, const std::string& kind) {
  Device d;
  d.name = name;
  d.kind = kind;
  d.peak_flops = 1e12;
  d.memory_bytes = 1e9;
  d.memory_Bps = 1e11;
  return d;
}

// Two linked devices of the given kinds, named as the kinds with a 0 and a 1.
Cluster pair_of_kinds(const std::string& name, const std::string& kind0, const std::string& kind1) {
  Cluster cluster(name);
  cluster.add_device(device_of_kind(kind0 + "0", kind0));
  cluster.add_device(device_of_kind(kind1 + (kind0 == kind1 ? "1" : "0"), kind1));
  cluster.connect(cluster.device(0).name, cluster.device(1).name, 1e9, 1);
  cluster.finalize();
  return cluster;
}

TEST(CostTableFile, RoundTripKeepsEveryEntryAndTheInfo) {
  CostTable table;
  table.us[{"conv1", "V100"}] = 812.5;
  table.us[{"conv1", "*"}] = 0.1 + 1.0 / 3;  // not exact in decimal: must survive unchanged
  table.us[{"relu", "cpu"}] = 0;
  const std::string path = tmp_path("costs.json");
  write_cost_table_file(table, path, CostTableInfo{"zoo:resnet50", "cuda"});

  CostTableInfo info;
  const CostTable back = read_cost_table_file(path, &info);
  EXPECT_EQ(back.us, table.us);
  EXPECT_EQ(info.graph, "zoo:resnet50");
  EXPECT_EQ(info.backend, "cuda");
  EXPECT_EQ(cost_table_fingerprint(back), cost_table_fingerprint(table));

  // The documented shape: costs by device kind, then by op name.
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["format"], "aware-cost-table");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["costs"]["V100"]["conv1"], 812.5);
  EXPECT_EQ(doc["costs"]["cpu"]["relu"], 0);
}

TEST(CostTableFile, MetadataIsOptional) {
  const std::string path = tmp_path("costs-plain.json");
  write(path, R"({"format":"aware-cost-table","version":1,"costs":{"*":{"a":3}}})");
  CostTableInfo info{"stale", "stale"};
  const CostTable table = read_cost_table_file(path, &info);
  EXPECT_DOUBLE_EQ(table.lookup("a", "anything"), 3);
  EXPECT_EQ(info.graph, "");
  EXPECT_EQ(info.backend, "");
}

TEST(CostTableFile, BadFilesNameTheFileTheKindAndTheOp) {
  const std::string path = tmp_path("bad-costs.json");
  write(path, "{\"format\": ");
  expect_read_error(path, {path, "not valid JSON"});

  write(path, R"({"format":"aware-cost-table","version":1,"costs":{"gpu":{"conv1":-2}}})");
  expect_read_error(path, {path, "device kind 'gpu'", "op 'conv1'", "negative", "-2"});

  write(path, R"({"format":"aware-cost-table","version":1,"costs":{"gpu":{"conv1":"fast"}}})");
  expect_read_error(path, {path, "device kind 'gpu'", "op 'conv1'", "number"});

  write(path, R"({"format":"aware-cost-table","version":1,"cost":{},"costs":{}})");
  expect_read_error(path, {path, "unknown field 'cost'", "costs"});

  write(path, R"({"format":"aware-graph","version":1,"costs":{}})");
  expect_read_error(path, {path, "'format'", "aware-cost-table"});

  write(path, R"({"format":"aware-cost-table","version":4,"costs":{}})");  // 2 has fits, 3 pair slowdowns
  expect_read_error(path, {path, "'version'", "4", "versions 1 to 3"});

  write(path, R"({"format":"aware-cost-table","version":1})");
  expect_read_error(path, {path, "'costs'", "missing"});

  write(path, R"({"format":"aware-cost-table","version":1,"costs":{"gpu":[1,2]}})");
  expect_read_error(path, {path, "device kind 'gpu'", "object"});

  write(path, R"({"format":"aware-cost-table","version":1,"costs":{"gpu":{"":1}}})");
  expect_read_error(path, {path, "device kind 'gpu'", "empty"});

  write(path, R"({"format":"aware-cost-table","version":1,"graph":7,"costs":{}})");
  expect_read_error(path, {path, "'graph'", "string"});

  write(path, R"({"format":"aware-cost-table","version":1,"costs":{"gpu":{"a":1e999}}})");
  expect_read_error(path, {path, "1e999"});

  expect_read_error(tmp_path("no-such-costs.json"), {"no-such-costs.json", "cannot open"});
}

// Found while seeding the cost-table fuzz corpus (tests/fuzz/corpus/costs): JSON
// lets an object repeat a key, and the last value won, so one of two measured
// costs vanished without a word.
TEST(CostTableFile, ARepeatedOpOrKindIsRefusedNotMerged) {
  const std::string path = tmp_path("repeated-costs.json");
  write(path, R"({"format":"aware-cost-table","version":1,"costs":{"gpu":{"conv1":5,"conv1":7}}})");
  expect_read_error(path, {path, "'conv1'", "twice", "costs.gpu"});
  write(path, R"({"format":"aware-cost-table","version":1,"costs":{"gpu":{"a":1},"gpu":{"b":2}}})");
  expect_read_error(path, {path, "'gpu'", "twice", "in costs"});
  write(path, R"({"format":"aware-cost-table","version":1,"version":1,"costs":{}})");
  expect_read_error(path, {path, "'version'", "twice", "top level"});
}

TEST(CostTableFingerprint, SameEntriesSameTextAnyChangeDiffers) {
  // FNV-1a of nothing is its offset basis.
  EXPECT_EQ(cost_table_fingerprint(CostTable{}), "cbf29ce484222325");
  CostTable a;
  a.us[{"conv1", "gpu"}] = 10;
  a.us[{"relu", "*"}] = 2;
  CostTable b = a;
  EXPECT_EQ(cost_table_fingerprint(a), cost_table_fingerprint(b));
  EXPECT_EQ(cost_table_fingerprint(a).size(), 16u);
  b.us[{"conv1", "gpu"}] = 10.000000001;
  EXPECT_NE(cost_table_fingerprint(a), cost_table_fingerprint(b));
  CostTable c;
  c.us[{"conv1", "gp"}] = 10;  // the boundary between names must count
  c.us[{"relu", "*"}] = 2;
  EXPECT_NE(cost_table_fingerprint(a), cost_table_fingerprint(c));
}

TEST(CostTableCoverage, CountsMissedOpsAndUnusedEntries) {
  OpGraph graph("three");
  graph.add_op(testing::timed_op("a", 1));
  graph.add_op(testing::timed_op("b", 1));
  graph.add_op(testing::timed_op("c", 1));
  const Cluster cluster = pair_of_kinds("two-kinds", "gpu", "cpu");

  CostTable table;
  table.us[{"a", "*"}] = 1;    // prices a on both devices
  table.us[{"b", "gpu"}] = 2;  // b only on the GPU: b is missed on the CPU
  table.us[{"c", "gpu"}] = 5;
  table.us[{"c", "cpu"}] = 6;
  table.us[{"c", "*"}] = 7;    // shadowed on both kinds: unused
  table.us[{"zz", "*"}] = 3;   // op not in this graph: unused, and allowed
  table.us[{"a", "tpu"}] = 4;  // kind not in this cluster: unused
  const CostTableCoverage coverage = cost_table_coverage(table, graph, cluster);
  EXPECT_EQ(coverage.pairs_total, 6);
  EXPECT_EQ(coverage.pairs_from_table, 5);  // a x2, b x1, c x2
  EXPECT_EQ(coverage.ops_missed, 1);
  EXPECT_EQ(coverage.first_missed_op, "b");
  EXPECT_EQ(coverage.entries_unused, 3);
}

TEST(CostTable, EntriesScopedToAGraphPriceThatGraphOnly) {
  // Two models share the op name "x" with different sizes: a table profiled over
  // both keeps "small::x" and "big::x"; a plain entry prices every other graph.
  OpGraph small("small");
  small.add_op(testing::timed_op("x", 1));
  small.add_op(testing::timed_op("y", 1));
  const Cluster cluster = pair_of_kinds("one-gpu", "gpu", "gpu");

  CostTable table;
  table.us[{"x", "*"}] = 1;                             // shadowed in "small" by its own entry
  table.us[{scoped_op_name("small", "x"), "*"}] = 2;
  table.us[{scoped_op_name("big", "x"), "gpu"}] = 9;    // another graph's: unused here
  table.us[{"y", "gpu"}] = 3;
  EXPECT_EQ(scoped_op_name("small", "x"), "small::x");
  EXPECT_EQ(table.lookup("small", "x", "gpu"), 2);
  EXPECT_EQ(table.lookup("big", "x", "gpu"), 9);
  EXPECT_EQ(table.lookup("other", "x", "gpu"), 1);
  EXPECT_EQ(table.lookup("big", "x", "cpu"), 1);  // "big::x" has no cpu or "*" entry
  EXPECT_EQ(table.lookup("small", "y", "gpu"), 3);
  EXPECT_EQ(table.lookup("small", "z", "gpu"), -1);

  // The simulators' cost matrix takes the graph's scoped entries.
  const OpCostMatrix costs(small, cluster, &table);
  EXPECT_EQ(costs.time_us(0, 0), 2);
  EXPECT_EQ(costs.time_us(1, 1), 3);
  small.set_name("renamed");
  EXPECT_EQ(OpCostMatrix(small, cluster, &table).time_us(0, 0), 1);
  small.set_name("small");

  const CostTableCoverage coverage = cost_table_coverage(table, small, cluster);
  EXPECT_EQ(coverage.pairs_from_table, 4);
  EXPECT_EQ(coverage.ops_missed, 0);
  EXPECT_EQ(coverage.entries_unused, 2);  // the shadowed plain "x" and "big::x"

  // Scoped names are plain strings in the file: they survive a round trip.
  const CostTable back = cost_table_from_json(cost_table_to_json(table), "memory");
  EXPECT_EQ(back.us, table.us);
}

}  // namespace
}  // namespace aware
