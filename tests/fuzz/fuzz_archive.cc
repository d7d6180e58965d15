// Fuzz target: the zip check that runs before LibTorch reads a policy file or a
// checkpoint (core/archive_check.h; torch-free, so it is instrumented here).
// LibTorch's own reading is not: tests/rl/archive_mutation_test.cc covers it with
// damaged copies of real files instead. Bad input must end in an aware::Error;
// a crash, a sanitizer report or another exception type is a finding.
#include <cstdint>
#include <string>

#include "core/archive_check.h"
#include "core/errors.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace aware;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    check_torch_archive_bytes(bytes, "fuzz.pt", "policy");
    // Accepted: the end record closes the file, so it cannot be empty.
    fuzz::require(size >= 22, "an accepted archive holds an end record");
  } catch (const Error&) {
    // Damaged or not a zip archive, reported.
  }
  return 0;
}
