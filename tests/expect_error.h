// One check for "this call fails, and says so usefully", shared by the suites:
// the call throws the expected kind of error and its message names every given
// fragment (the file, op, field, value a user needs to find the mistake).
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aware::testing {

// Runs `fn` and expects it to throw an `E` (or a subclass) whose what() holds
// every fragment. Returns that message, for checks the fragments do not say (a
// whole-message match, no line break), or "" after a failure because `fn`
// returned. Any other exception passes through, failing the test as uncaught.
template <typename E, typename Fn>
std::string expect_error(Fn&& fn, const std::vector<std::string>& fragments) {
  try {
    fn();
  } catch (const E& e) {
    const std::string what = e.what();
    for (const std::string& fragment : fragments)
      EXPECT_NE(what.find(fragment), std::string::npos) << what << " lacks " << fragment;
    return what;
  }
  ADD_FAILURE() << "no error: the call returned";
  return "";
}

}  // namespace aware::testing
