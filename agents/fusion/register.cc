#include "agents/fusion/register.h"

#include "agents/fusion/fused_placer.h"
#include "core/placer.h"

namespace aware {

std::vector<std::string> fusion_placer_names() {
  return {"fused-heft", "fused-m-etf", "fused-anneal", "fused-anneal-graph"};
}

void register_fusion_placers() {
  PlacerRegistry& r = PlacerRegistry::instance();
  const char* suffix = " on the comm/compute-fused graph, expanded to every op";
  using T = OptionSpec::Type;
  const std::vector<OptionSpec> fusion_options = {
      {"fusion.target_size", T::kInt, "0", "stop merging at this many groups (0: no target)"},
      {"fusion.threshold", T::kDouble, "", "merge when comm/compute exceeds it"},
      {"fusion.chain", T::kInt, "1", "1: merge single-consumer chains, 0: do not"},
      {"fusion.comm", T::kInt, "1", "1: merge comm-heavy edges, 0: do not"},
      {"fusion.memory_fraction", T::kDouble, "", "a group's memory cap, a fraction of a device"},
      {"fusion.cost", T::kString, "exact", "group cost: exact or roofline"},
      {"fusion.edges", T::kString, "pair", "coarse edges: pair or class"},
      {"fusion.score", T::kString, "coarse", "score placements on the coarse or the fine graph"},
  };
  // Each takes the fusion options plus its inner placer's.
  std::vector<std::pair<std::string, std::string>> wrapped = {{"fused-heft", "heft"},
                                                                {"fused-m-etf", "m-etf"},
                                                                {"fused-anneal", "anneal"},
                                                                {"fused-anneal-graph", "anneal-graph"}};
  // The exact placer, where CBC is built: the MILP on the fused graph.
  if (r.has("milp")) wrapped.emplace_back("fused-milp", "milp");
  for (const auto& [name, inner] : wrapped) {
    std::vector<OptionSpec> options = fusion_options;
    if (r.has(inner)) {
      for (const OptionSpec& o : r.info(inner).options) options.push_back(o);
    }
    const std::string label = inner == "heft" ? "HEFT" : inner == "m-etf" ? "m-ETF" : inner;
    const std::string inner_name = inner;
    r.add(name, label + suffix, std::move(options),
          [inner_name] { return make_fused_placer(inner_name); });
  }
}

}  // namespace aware
