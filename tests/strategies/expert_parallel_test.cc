// ep:N (strategies/expert_parallel.cc) on a one-layer Mixtral-style model with 8
// experts: where each expert runs, the weights held once or per rank, the forward
// all-to-all's bytes by hand, and the refusals.
#include <gtest/gtest.h>

#include <string>

#include "core/cluster.h"
#include "core/errors.h"
#include "datasets/load.h"
#include "strategies/strategy.h"

namespace aware {
namespace {

const char* kMoe = "zoo:mixtral-8x7b:layers=1,hidden=64,heads=4,kv_heads=2,ffn=128,vocab=200,seq_len=8,batch=4";

bool is_expert(const std::string& name) { return name.find("/expert") != std::string::npos; }

double params(const OpGraph& g, bool experts) {
  double bytes = 0;
  for (const Op& op : g.ops())
    if (op.phase == Phase::kForward && is_expert(op.name) == experts) bytes += op.param_bytes;
  return bytes;
}

TEST(ExpertParallel, ExpertsOnceDenseWeightsPerRankAndTheAllToAllByHand) {
  const OpGraph g = load_graph(kMoe);
  const Cluster c = load_cluster("preset:dgx-a100");
  const StrategyResult r = apply_strategy(g, c, "ep:2");
  EXPECT_EQ(r.devices_used, 2);
  EXPECT_DOUBLE_EQ(params(r.graph, true), params(g, true));        // each expert once
  EXPECT_DOUBLE_EQ(params(r.graph, false), 2 * params(g, false));  // the rest on both ranks
  for (int id = 0; id < r.graph.num_ops(); ++id) {
    const std::string& name = r.graph.op(id).name;
    const std::size_t at = name.find("/expert");
    if (at == std::string::npos) continue;
    EXPECT_EQ(r.placement[id], std::stoi(name.substr(at + 7)) % 2) << name;
  }
  // Forward all-to-all: 32 tokens x top-2 / 8 experts = 8 rows of 64 floats = 2,048
  // bytes per expert, half from each rank; each expert's tokens from the other rank
  // go in twice (its gate and up projections read them) and come back once (down ->
  // combine): 3 x 1,024 bytes for each of the 8 experts.
  double forward = 0;
  for (const Edge& e : r.graph.edges()) {
    const Op& src = r.graph.op(e.src);
    const Op& dst = r.graph.op(e.dst);
    if (src.phase != Phase::kForward || dst.phase != Phase::kForward) continue;
    if (r.placement[e.src] == r.placement[e.dst] || is_expert(src.name) == is_expert(dst.name)) continue;
    forward += e.bytes;
  }
  EXPECT_DOUBLE_EQ(forward, 8 * 3 * 1024.0);
}

TEST(ExpertParallel, RefusesDenseModelsAndTooManyRanks) {
  const Cluster c = load_cluster("preset:k40x2");
  EXPECT_THROW(apply_strategy(load_graph("zoo:gpt:layers=1,hidden=64,heads=4,ffn=256,vocab=100,seq_len=8,batch=4"), c,
                              "ep:2"),
               ConfigError);
  EXPECT_THROW(apply_strategy(load_graph(kMoe), c, "ep:4"), ConfigError);
  EXPECT_THROW(check_strategy_spec("ep:0"), ConfigError);
}

}  // namespace
}  // namespace aware
