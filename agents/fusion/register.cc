#include "agents/fusion/register.h"

#include "agents/baselines/register.h"
#include "agents/fusion/fused_placer.h"
#include "core/placer.h"

namespace aware {

std::vector<std::string> fusion_placer_names() {
  return {"fused-heft", "fused-m-etf", "fused-anneal"};
}

void register_fusion_placers() {
  register_baseline_placers();
  PlacerRegistry& r = PlacerRegistry::instance();
  const char* suffix =
      " on the comm/compute-fused graph, expanded to every op "
      "(options fusion.target_size, fusion.threshold, fusion.chain, fusion.comm, "
      "fusion.memory_fraction, fusion.cost=exact|roofline, fusion.edges=pair|class, "
      "fusion.score=coarse|fine)";
  r.add("fused-heft", std::string("HEFT") + suffix, [] { return make_fused_placer("heft"); });
  r.add("fused-m-etf", std::string("m-ETF") + suffix, [] { return make_fused_placer("m-etf"); });
  r.add("fused-anneal", std::string("anneal") + suffix, [] { return make_fused_placer("anneal"); });
}

}  // namespace aware
