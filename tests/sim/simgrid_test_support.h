// What the simgrid test files share: this process's child processes (to check
// that no worker is left behind) and skipping where the worker is not built.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.h"
#include "sim/simgrid/simgrid_evaluator.h"

namespace aware::testing {

// Live children of this process (zombies included), from /proc.
inline std::vector<int> child_pids() {
  std::vector<int> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  const int self = ::getpid();
  while (dirent* entry = ::readdir(dir)) {
    const int pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(entry->d_name) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // "pid (comm) state ppid ...": comm may hold spaces; parse after the last ')'.
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == self) {
      out.push_back(pid);
    }
  }
  ::closedir(dir);
  return out;
}

inline bool have_simgrid_worker() {
  try {
    find_simgrid_worker();
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

}  // namespace aware::testing

#define REQUIRE_WORKER()                                   \
  do {                                                     \
    if (!::aware::testing::have_simgrid_worker())          \
      GTEST_SKIP() << "aware-simgrid-worker is not built"; \
  } while (0)
