// Registers the fused placers with PlacerRegistry::instance():
//   fused-heft, fused-m-etf, fused-anneal (and any "fused-<baseline>" made with
//   make_fused_placer). The inner placers must be registered first (their
//   options join the fused ones); register_builtins() (builtins/) does both, in
//   that order. Idempotent.
#pragma once

#include <string>
#include <vector>

namespace aware {

void register_fusion_placers();

// The names register_fusion_placers() adds.
std::vector<std::string> fusion_placer_names();

}  // namespace aware
