// Seeded generators for the graph families used to measure transfer
// ("transplantation"): ENAS-style "cifar10" convolutional cells, "ptb" recurrent
// cells, and "nmt" seq2seq graphs of varying size. Same family + seed: the same
// graph, byte for byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/op_graph.h"

namespace aware {

std::vector<std::string> family_names();  // "cifar10", "ptb", "nmt"
// Builds member `seed` of `family`, named "<family>-<seed>". Throws ConfigError
// listing the families for an unknown one.
OpGraph build_family_graph(const std::string& family, std::uint64_t seed);

// The fixed train/test split of a family of `count` graphs: seeds 1..count, every
// fourth (seed % 4 == 0) held out for testing.
struct FamilySplit {
  std::vector<std::uint64_t> train;
  std::vector<std::uint64_t> test;
};
FamilySplit family_split(int count);

}  // namespace aware
