// Running the `aware` binary from a test: its exit code and output, and small
// file helpers. AWARE_BIN and AWARE_TEST_TMPDIR come from the test's CMake target.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// stderr is merged into the output unless `stdout_only` (for --json with progress lines).
Outcome aware(const std::string& args, bool stdout_only = false) {
  const std::string cmd = std::string(AWARE_BIN) + " " + args + (stdout_only ? " 2>/dev/null" : " 2>&1");
  Outcome run;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// The same, for tests inside namespace aware (where `aware` names the namespace).
Outcome run_aware(const std::string& args, bool stdout_only = false) { return aware(args, stdout_only); }

std::string tmp(const std::string& name) {
  return (std::filesystem::path(AWARE_TEST_TMPDIR) / name).string();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A file's whole text ("" when it cannot be read).
[[maybe_unused]] std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The non-empty lines of `text`.
[[maybe_unused]] std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Three ops: two MatMuls feeding an Add (cli_test.cc and cli_systems_test.cc).
[[maybe_unused]] const char* kSmallGraph = R"({"format":"aware-graph","version":1,"name":"small","ops":[
  {"name":"a","type":"MatMul","flops":1e9,"output_bytes":[1e6]},
  {"name":"b","type":"MatMul","flops":1e9,"output_bytes":[1e6]},
  {"name":"c","type":"Add","flops":1e6,"output_bytes":[1e6]}],
  "edges":[{"src":"a","dst":"c"},{"src":"b","dst":"c"}]})";

}  // namespace
