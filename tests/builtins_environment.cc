// Linked into a test binary, it fills the registries before any test runs, as
// the CLI does (register_builtins()): nothing registers on first use.
#include <gtest/gtest.h>

#include "builtins/builtins.h"

namespace {

class BuiltinsEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { aware::register_builtins(); }
};

const auto* const kBuiltins = ::testing::AddGlobalTestEnvironment(new BuiltinsEnvironment);

}  // namespace
