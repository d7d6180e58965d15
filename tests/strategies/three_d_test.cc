// 3d:dp=D,tp=T,pp=P: each of its parts alone gives the step its own rewrite
// gives, exactly; all three at once put every op where the device order says
// (tensor-parallel ranks innermost, then stages, then replicas) and exchange
// every gradient with its counterparts; bad input is refused in one line.
#include <gtest/gtest.h>

#include <set>

#include "datasets/load.h"
#include "strategies/schedule_chart.h"
#include "strategies/search.h"
#include "tests/strategies/strategy_test_support.h"

namespace aware {
namespace {

using namespace strategy_tests;

const char* kGpt = "zoo:gpt:layers=4,hidden=64,heads=4,ffn=256,vocab=500,seq_len=16,batch=8";

double step_of(const std::string& spec, const Cluster& c) {
  const StrategyResult r = apply_strategy(load_graph(kGpt), c, spec);
  return step_us(r, c);
}

TEST(ThreeD, EachPartAloneIsItsOwnRewrite) {
  const Cluster c = load_cluster("preset:dgx-a100");
  const std::vector<std::pair<std::string, std::string>> same = {
      {"3d:dp=1,tp=2,pp=1,micro=1", "tp:2"},
      {"3d:dp=2,tp=1,pp=1,micro=1", "dp:2"},
      // (3d accumulates the micro-batches' gradients as Megatron-LM does, fused into
      // the weight-gradient GEMMs; pipeline's default is GPipe's separate sum.)
      {"3d:dp=1,tp=1,pp=2,micro=4", "pipeline:2,micro=4,accumulate=fused"},
      {"3d:dp=1,tp=1,pp=2,micro=4,schedule=1f1b", "pipeline:2,micro=4,schedule=1f1b,accumulate=fused"},
      {"3d:dp=1,tp=1,pp=2,micro=4,accumulate=sum", "pipeline:2,micro=4"},
      {"3d:dp=4,tp=1,pp=1,micro=1,zero=1", "dp:4,zero=1"},
  };
  for (const auto& [three, own] : same) {
    const double a = step_of(three, c), b = step_of(own, c);
    EXPECT_NEAR(a, b, 1e-9 * b) << three << " against " << own;
  }
  EXPECT_EQ(apply_strategy(load_graph(kGpt), c, "3d:dp=1,tp=1,pp=2,micro=4,schedule=1f1b").spec,
            "3d:dp=1,tp=1,pp=2,micro=4,schedule=1f1b");
}

// dp=2, tp=2, pp=2 on the eight GPUs of one DGX node: device = replica*4 +
// stage*2 + rank. Rank r's copy of an op ("tR/...") sits on a device with that
// rank; layer 0 in stage 0 and layer 3 in stage 1; replica d's ops ("rD/...")
// on devices 4d..4d+3; a gradient exchange for each of the four (stage, rank)
// slots; every device works.
TEST(ThreeD, DevicesFollowTheRankStageReplicaOrder) {
  const Cluster c = load_cluster("preset:dgx-a100");
  const OpGraph g = load_graph(kGpt);
  const StrategyResult r = apply_strategy(g, c, "3d:dp=2,tp=2,pp=2,micro=4,schedule=1f1b,zero=1");
  EXPECT_EQ(r.spec, "3d:dp=2,tp=2,pp=2,micro=4,schedule=1f1b,zero=1");
  EXPECT_EQ(r.devices_used, 8);
  EXPECT_EQ(r.replicas, 2);
  std::set<int> used;
  std::set<std::string> exchanges;
  for (int id = 0; id < r.graph.num_ops(); ++id) {
    const std::string& name = r.graph.op(id).name;
    const int d = r.placement[id];
    used.insert(d);
    if (name.rfind("allreduce/d", 0) == 0) exchanges.insert(name.substr(0, name.find('/', 10)));
    if (name.size() < 6 || name[0] != 'r' || name[2] != '/') continue;
    const int replica = name[1] - '0';
    EXPECT_EQ(d / 4, replica) << name;
    const std::string rest = name.substr(3);  // "mK/tR/..." or "tR/..."
    const std::size_t t = rest.find("t0/") != std::string::npos ? rest.find("t0/") : rest.find("t1/");
    if (t != std::string::npos && (t == 0 || rest[t - 1] == '/')) EXPECT_EQ(d % 2, rest[t + 1] - '0') << name;
    if (rest.find("layer0/") != std::string::npos && r.graph.op(id).phase == Phase::kForward) EXPECT_EQ((d / 2) % 2, 0) << name;
    if (rest.find("layer3/") != std::string::npos && r.graph.op(id).phase == Phase::kForward) EXPECT_EQ((d / 2) % 2, 1) << name;
  }
  EXPECT_EQ(used.size(), 8u);
  EXPECT_EQ(exchanges, (std::set<std::string>{"allreduce/d0", "allreduce/d1", "allreduce/d2", "allreduce/d3"}));
  auto sim = EvaluatorRegistry::instance().create("analytic");
  const StepResult s = sim->evaluate(r.graph, c, r.placement);
  EXPECT_TRUE(s.feasible) << s.infeasible_reason;
}

// The search with 3-D candidates over four devices: every (dp, tp, pp) with
// tp <= 8 and dp*tp*pp = 4 is tried with each recomputation (ZeRO-1 too where
// dp > 1), and the winner is the fastest of what ran.
TEST(ThreeD, SearchTriesEveryShapeAndKeepsTheFastest) {
  const OpGraph g = load_graph(kGpt);
  const Cluster c = restrict_devices(load_cluster("preset:dgx-a100"), 4);
  StrategySearchOptions options;
  options.three_d = true;
  options.collectives = {"ring"};
  options.pipelines = false;
  auto sim = EvaluatorRegistry::instance().create("analytic");
  const StrategySearchResult r = search_strategies(g, c, *sim, options);
  std::set<std::string> shapes;
  int tried = 0;
  for (const StrategyCandidate& cand : r.candidates) {
    if (cand.spec.rfind("3d:", 0) != 0) continue;
    ++tried;
    shapes.insert(cand.spec.substr(0, cand.spec.find(",micro")));
    if (cand.status == "ok") EXPECT_GE(cand.step_time_us, r.best_step_us) << cand.spec;
  }
  // (dp, tp, pp): (4,1,1) (2,1,2) (1,1,4) (2,2,1) (1,2,2) (1,4,1); 3 recomputations
  // each, twice for the three with dp > 1 (ZeRO-1).
  EXPECT_EQ(shapes, (std::set<std::string>{"3d:dp=4,tp=1,pp=1", "3d:dp=2,tp=1,pp=2", "3d:dp=1,tp=1,pp=4",
                                           "3d:dp=2,tp=2,pp=1", "3d:dp=1,tp=2,pp=2", "3d:dp=1,tp=4,pp=1"}));
  EXPECT_EQ(tried, 3 * (6 + 3));
  ASSERT_GE(r.best, 0);
}

TEST(ThreeD, BadInputIsRefusedInOneLine) {
  const OpGraph g = load_graph(kGpt);
  const Cluster c = load_cluster("preset:dgx-a100");
  EXPECT_NE(strategy_error(g, c, "3d:dp=2,tp=2,pp=4").find("dp=2 x tp=2 x pp=4 = 16 devices, cluster"),
            std::string::npos);
  EXPECT_NE(strategy_error(g, c, "3d:dp=2,tp=2,pp=2,zero=3").find("ZeRO-3 is not offered"), std::string::npos);
  EXPECT_NE(strategy_error(g, c, "3d:8").find("takes its sizes as options"), std::string::npos);
  EXPECT_NE(strategy_error(g, c, "3d:dp=0").find("not a whole number"), std::string::npos);
  EXPECT_NE(strategy_error(g, c, "3d:pp=2,schedule=zigzag").find("schedule must be"), std::string::npos);
  EXPECT_THROW(check_strategy_spec("3d:dp=2,tp=2,pp=2,micro=0"), ConfigError);
  EXPECT_NO_THROW(check_strategy_spec("3d:dp=2,tp=2,pp=2,micro=8,schedule=interleaved:2,recompute=selective"));
}

// The 3-D grid read back from the rewrite (the GUI's grid view): dp=2, tp=2, pp=2
// on the tiny 4-layer model puts rank r of stage s of replica d on device
// 4d + 2s + r; stage 0 holds the embedding and layers 0-1, stage 1 layers 1-3 and
// the head (the balanced cut falls inside layer 1: the output layer's work sits on
// stage 1); the ranks of a stage hold equal shares, the replicas equal copies.
TEST(ThreeD, TheGridNamesEachDevicesReplicaStageRankAndLayers) {
  const Cluster c = load_cluster("preset:dgx-a100");
  const StrategyResult r = apply_strategy(load_graph(kGpt), c, "3d:dp=2,tp=2,pp=2,micro=4");
  const DeviceGrid grid = device_grid(r.graph, r.placement);
  EXPECT_EQ(grid.replicas, 2);
  EXPECT_EQ(grid.stages, 2);
  EXPECT_EQ(grid.ranks, 2);
  ASSERT_EQ(grid.cells.size(), 8u);
  for (const GridCell& cell : grid.cells) {
    const int d = cell.device;
    EXPECT_EQ(cell.replica, d / 4) << d;
    EXPECT_EQ(cell.stage, (d / 2) % 2) << d;
    EXPECT_EQ(cell.rank, d % 2) << d;
    EXPECT_EQ(cell.first_layer, cell.stage == 0 ? 0 : 1) << d;
    EXPECT_EQ(cell.last_layer, cell.stage == 0 ? 1 : 3) << d;
    EXPECT_EQ(cell.embedding, cell.stage == 0) << d;
    EXPECT_EQ(cell.head, cell.stage == 1) << d;
    EXPECT_GT(cell.param_bytes, 0);
    const GridCell& twin = grid.cells[static_cast<std::size_t>(d ^ 1)];  // the other rank
    const GridCell& copy = grid.cells[static_cast<std::size_t>(d ^ 4)];  // the other replica
    EXPECT_DOUBLE_EQ(cell.param_bytes, twin.param_bytes) << d;
    EXPECT_DOUBLE_EQ(cell.param_bytes, copy.param_bytes) << d;
  }
}

}  // namespace
}  // namespace aware
