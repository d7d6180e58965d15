// The workbench's exception hierarchy and its always-on invariant check.
//
// Bad *input* (a file that does not parse, a cycle, a negative cost, a placement
// naming an unknown device) throws one of these with a message that names the
// file, the op or device, and the field. An infeasible placement is not an
// error: it is a StepResult with feasible == false.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace aware {

// Base of every error the workbench throws on purpose. `what()` is one line,
// ready to print after "error: ".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A file or document that does not parse or does not validate.
class ParseError : public Error {
 public:
  using Error::Error;
};

// A graph that is not a valid training-step DAG (cycle, dangling edge, bad number).
class GraphError : public Error {
 public:
  using Error::Error;
};

// A bad option, an unknown name in a registry, an impossible request.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A cluster or placement that names devices or links wrongly.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// An internal invariant broke: a bug in the workbench, never the user's input.
class InternalError : public Error {
 public:
  using Error::Error;
};

// The first line of `text` (all of it where it has no newline): a third-party
// library's multi-line message (ONNX, LibTorch, SimGrid) cut to the one line an
// Error carries. Throws nothing beyond std::bad_alloc.
inline std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

namespace detail {
[[noreturn]] inline void check_failed(const char* expr, const char* file, int line,
                                      const std::string& message) {
  std::ostringstream out;
  out << "internal check failed: " << expr << " at " << file << ":" << line;
  if (!message.empty()) out << ": " << message;
  throw InternalError(out.str());
}
}  // namespace detail

}  // namespace aware

// Always-on invariant check (also in release builds); throws InternalError with file:line.
#define AWARE_CHECK(cond, message)                                           \
  do {                                                                       \
    if (!(cond)) ::aware::detail::check_failed(#cond, __FILE__, __LINE__, (message)); \
  } while (0)
