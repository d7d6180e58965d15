// Chakra execution traces (datasets/chakra.h): export -> import round trips on a
// hand-made graph and a generated one, a rank written byte by byte from the
// specification (as ASTRA-sim's example all-reduce trace is laid out), and bad
// traces, each refused in one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "core/errors.h"
#include "core/evaluator.h"
#include "core/formats.h"
#include "datasets/chakra.h"
#include "datasets/load.h"
#include "sim/analytic/register.h"
#include "strategies/strategy.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

namespace fs = std::filesystem;

class ChakraTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_analytic_evaluator();
    dir_ = fs::path(::testing::TempDir()) / ("chakra-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  fs::path dir_;
};

struct Exported {
  StepResult result;
  Trace trace;
  ChakraExport files;
};

Exported export_step(const OpGraph& g, const Cluster& c, const Placement& p, const fs::path& dir) {
  auto ev = EvaluatorRegistry::instance().create("analytic");
  Exported e;
  e.result = ev->evaluate(g, c, p, &e.trace);
  e.files = write_chakra_traces(g, c, p, e.trace, e.result.step_time_us, "analytic", dir.string(), g.name());
  return e;
}

using EdgeKey = std::tuple<std::string, std::string, int, double>;
std::multiset<EdgeKey> edges_by_name(const OpGraph& g) {
  std::multiset<EdgeKey> out;
  for (const Edge& e : g.edges()) out.insert({g.op(e.src).name, g.op(e.dst).name, e.src_output, e.bytes});
  return out;
}

// Checks the import against the graph, placement and trace exported.
void expect_round_trip(const OpGraph& g, const Cluster& c, const Placement& p, const Exported& e,
                       const ChakraImport& back) {
  ASSERT_EQ(back.graph.num_ops(), g.num_ops());
  EXPECT_EQ(back.ranks, c.num_devices());
  EXPECT_EQ(edges_by_name(back.graph), edges_by_name(g));
  Placement mapped(std::vector<int>(g.num_ops(), 0));
  for (int i = 0; i < back.graph.num_ops(); ++i) {
    const Op& got = back.graph.op(i);
    const int op = g.find(got.name);
    ASSERT_GE(op, 0) << got.name;
    const Op& want = g.op(op);
    EXPECT_EQ(got.type, want.type);
    EXPECT_EQ(got.phase, want.phase);
    EXPECT_EQ(got.output_bytes, want.output_bytes);
    EXPECT_EQ(got.param_bytes, want.param_bytes);
    EXPECT_EQ(got.flops, want.flops);
    const OpSpan& span = e.trace.ops[op];
    EXPECT_EQ(got.compute_us, span.end_us - span.start_us) << got.name;  // durations kept exactly
    EXPECT_EQ(back.rank_of_op[i], p[op]);
    mapped[i] = back.rank_of_op[i];
  }
  // The imported step, re-simulated on its ranks, is the step exported.
  auto ev = EvaluatorRegistry::instance().create("analytic");
  EXPECT_NEAR(ev->evaluate(back.graph, c, mapped).step_time_us, e.result.step_time_us, 1e-9 * e.result.step_time_us);
}

TEST_F(ChakraTest, DiamondRoundTripByHand) {
  const OpGraph g = testing::diamond_graph();
  const Cluster c = testing::zero_latency_star(2);
  const Placement p(std::vector<int>{0, 0, 1, 0});
  const Exported e = export_step(g, c, p, dir_);
  ASSERT_EQ(e.files.files.size(), 2u);
  EXPECT_EQ(fs::path(e.files.files[1]).filename(), "diamond.1.et");
  // a, b, d on rank 0 plus one send and one receive (a -> c, c -> d): 4 ops + 4 comm nodes.
  EXPECT_EQ(e.files.comm_pairs, 2);
  EXPECT_EQ(e.files.nodes, 8);
  const ChakraImport back = read_chakra_traces(dir_.string());
  EXPECT_EQ(back.comm_pairs, 2);
  EXPECT_EQ(back.version, "0.0.4");
  expect_round_trip(g, c, p, e, back);
  EXPECT_DOUBLE_EQ(e.result.step_time_us, 47.0);
}

TEST_F(ChakraTest, GeneratedGraphsRoundTrip) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const OpGraph g = testing::layered_dag(60, seed);
    const Cluster c = testing::star_cluster(3);
    Placement p(std::vector<int>(g.num_ops(), 0));
    for (int op = 0; op < g.num_ops(); ++op) p[op] = static_cast<int>((op * 7 + seed) % 3);
    const fs::path dir = dir_ / std::to_string(seed);
    const Exported e = export_step(g, c, p, dir);
    expect_round_trip(g, c, p, e, read_chakra_traces(dir.string()));
  }
}

TEST_F(ChakraTest, ZooModelRoundTripKeepsTheStep) {
  const OpGraph g = load_graph("family:ptb:1");
  const Cluster c = load_cluster("preset:k40x4");
  Placement p(std::vector<int>(g.num_ops(), 0));
  for (int op = 0; op < g.num_ops(); ++op) p[op] = op % 4;
  const Exported e = export_step(g, c, p, dir_);
  expect_round_trip(g, c, p, e, read_chakra_traces(dir_.string()));
}

// A data-parallel step's gradient exchange written as collectives: one COMM_COLL_NODE
// per bucket and device, ALL_REDUCE, with the bucket's bytes; the ring's own steps and
// transfers are not written. Read back, each is an AllReduce op on the communication stream.
TEST_F(ChakraTest, StrategyCollectivesBecomeCollectiveNodes) {
  const OpGraph g = load_graph("zoo:gpt:layers=1,hidden=64,heads=4,ffn=256,vocab=500,seq_len=16,batch=4");
  const Cluster c = load_cluster("preset:dgx-a100");
  const StrategyResult dp = apply_strategy(g, c, "dp:2,bucket_mb=0.1");
  auto ev = EvaluatorRegistry::instance().create("analytic");
  Trace trace;
  const StepResult step = ev->evaluate(dp.graph, c, dp.placement, &trace);
  int buckets = 0;
  double packed = 0;
  for (const Op& op : dp.graph.ops())
    if (op.type == "BucketPack" && op.name.find("/r0") != std::string::npos) {
      ++buckets;
      packed += op.output_bytes[1];
    }
  ASSERT_GT(buckets, 1);
  const ChakraExport e = write_chakra_traces(dp.graph, c, dp.placement, trace, step.step_time_us, "analytic",
                                             dir_.string(), "dp", true);
  EXPECT_EQ(e.collectives, 2 * buckets);
  const ChakraImport back = read_chakra_traces(dir_.string());
  int all_reduce = 0;
  double bytes = 0;
  for (int i = 0; i < back.graph.num_ops(); ++i) {
    const Op& op = back.graph.op(i);
    EXPECT_TRUE(op.type.rfind("Ring", 0) != 0 && op.type != "BucketPack") << op.name;
    if (op.type != "AllReduce") continue;
    ++all_reduce;
    EXPECT_EQ(op.stream, 1);
    if (back.rank_of_op[i] == 0) bytes += op.output_bytes[0];
  }
  EXPECT_EQ(all_reduce, 2 * buckets);
  EXPECT_DOUBLE_EQ(bytes, packed);  // rank 0's collectives carry every bucket's bytes
  // Every op outside the exchange came back, and every update still follows its gradients.
  EXPECT_EQ(back.graph.num_ops(), dp.graph.num_ops() - [&] {
    int ring = 0;
    for (const Op& op : dp.graph.ops()) ring += op.stream == 1 && op.block == "strategy";
    return ring;
  }() + 2 * buckets);
}

// ---- a rank written byte by byte from the specification --------------------------------

std::string varint(std::uint64_t v) {
  std::string out;
  do {
    std::uint8_t b = v & 0x7f;
    v >>= 7;
    out.push_back(static_cast<char>(v ? (b | 0x80) : b));
  } while (v);
  return out;
}
std::string framed(const std::string& message) { return varint(message.size()) + message; }
std::string field_bytes(int number, const std::string& value) {  // length-delimited field
  return varint(static_cast<std::uint64_t>(number) << 3 | 2) + varint(value.size()) + value;
}
std::string field_varint(int number, std::uint64_t value) { return varint(static_cast<std::uint64_t>(number) << 3) + varint(value); }
std::string metadata(const std::string& version) { return framed(field_bytes(1, version)); }
std::string attr_int64(const std::string& name, std::uint64_t v) { return field_bytes(10, field_bytes(1, name) + field_varint(9, v)); }
std::string node(std::uint64_t id, const std::string& name, int type, const std::vector<std::uint64_t>& deps = {},
                 std::uint64_t duration = 0, const std::string& attrs = "") {
  std::string packed;
  for (auto d : deps) packed += varint(d);
  std::string m = (id ? field_varint(1, id) : "") + field_bytes(2, name) + field_varint(3, type);
  if (!deps.empty()) m += field_bytes(5, packed);
  if (duration) m += field_varint(7, duration);
  return framed(m + attrs);
}
void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

TEST_F(ChakraTest, ReadsARankWrittenFromTheSpecification) {
  // As ASTRA-sim's examples/workload/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et
  // lays it out: version 0.0.4, one COMM_COLL node (type 7) with is_cpu_op as
  // bool_val (field 27), comm_type 0 (ALL_REDUCE) and comm_size 1 MiB as int64_val.
  const std::string is_cpu = field_bytes(10, field_bytes(1, "is_cpu_op") + field_varint(27, 0));
  const std::string bytes = metadata("0.0.4") + node(0, "all_reduce_4npus_1MB", 7, {}, 0,
                                                     is_cpu + attr_int64("comm_type", 0) + attr_int64("comm_size", 1048576));
  ASSERT_EQ(bytes.size(), 8u + 73u);  // 1 + 7 bytes of metadata, 1 + 72 of the node
  const fs::path file = dir_ / "all_reduce.0.et";
  write_bytes(file, bytes);
  const ChakraImport back = read_chakra_traces(file.string());
  ASSERT_EQ(back.graph.num_ops(), 1);
  EXPECT_EQ(back.graph.op(0).type, "AllReduce");
  EXPECT_EQ(back.graph.op(0).output_bytes, std::vector<double>{1048576});
  EXPECT_EQ(back.graph.op(0).stream, 1);
  EXPECT_EQ(back.version, "0.0.4");
}

TEST_F(ChakraTest, ForeignComputeNodesAndDependencies) {
  // Three compute nodes: 1 -> 3 <- 2, durations 10, 20, 5 µs; tensor_size as uint64.
  const auto size = [](std::uint64_t v) { return field_bytes(10, field_bytes(1, "tensor_size") + field_varint(13, v)); };
  const std::string bytes = metadata("1.0.0") + node(1, "a", 4, {}, 10, size(100)) + node(2, "b", 4, {}, 20, size(200)) +
                            node(3, "c", 4, {1, 2}, 5, size(8));
  write_bytes(dir_ / "t.0.et", bytes);
  const ChakraImport back = read_chakra_traces((dir_ / "t.0.et").string());
  ASSERT_EQ(back.graph.num_ops(), 3);
  EXPECT_EQ(back.graph.op(2).compute_us, 5);
  ASSERT_EQ(back.graph.num_edges(), 2);
  EXPECT_EQ(back.graph.edge(1).bytes, 200);  // the producer's tensor_size
}

// ---- bad traces: one line each, naming the file ------------------------------------------

void expect_refused(const fs::path& path, const std::string& words) {
  try {
    read_chakra_traces(path.string());
    ADD_FAILURE() << path << " was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path.string()), std::string::npos) << m;
    EXPECT_NE(m.find(words), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST_F(ChakraTest, BadTracesAreOneLineEach) {
  const OpGraph g = testing::diamond_graph();
  const Cluster c = testing::zero_latency_star(2);
  export_step(g, c, Placement(std::vector<int>{0, 0, 1, 0}), dir_ / "good");
  const std::string good = read_text_file((dir_ / "good" / "diamond.0.et").string());

  write_bytes(dir_ / "truncated.0.et", good.substr(0, good.size() - 5));
  expect_refused(dir_ / "truncated.0.et", "truncated");

  write_bytes(dir_ / "magic.0.et", "{\"nodes\": []}\n");
  expect_refused(dir_ / "magic.0.et", "not a Chakra execution trace");

  write_bytes(dir_ / "gzip.0.et", std::string("\x1f\x8b\x08\x00", 4) + "rest");
  expect_refused(dir_ / "gzip.0.et", "gzip");

  write_bytes(dir_ / "type.0.et", metadata("0.0.4") + node(5, "x", 12));
  expect_refused(dir_ / "type.0.et", "node 5 (x): unknown node type 12");

  write_bytes(dir_ / "missing.0.et", metadata("0.0.4") + node(1, "x", 4, {9}, 3));
  expect_refused(dir_ / "missing.0.et", "node 1 (x): data_deps names node 9");

  write_bytes(dir_ / "cycle.0.et", metadata("0.0.4") + node(1, "x", 4, {2}, 3) + node(2, "y", 4, {1}, 3));
  expect_refused(dir_ / "cycle.0.et", "cycle");

  write_bytes(dir_ / "twice.0.et", metadata("0.0.4") + node(1, "x", 4) + node(1, "y", 4));
  expect_refused(dir_ / "twice.0.et", "a second node with id 1");

  fs::create_directories(dir_ / "empty");
  expect_refused(dir_ / "empty", "no .et file");
}

}  // namespace
}  // namespace aware
