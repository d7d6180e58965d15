// The validation experiment behind `aware validate` and scripts/hw-validate: a
// hardware executor measures the step of many placements of each graph (every
// device alone, round-robin, each named placer's, seeded random ones), in rounds
// of seeded random order so that drift on the machine does not line up with one
// graph or method; each simulator predicts the same placements; the result is
// the rows and the prediction errors (median, mean, max, Kendall tau) per graph
// and pooled, with the measurement spread.
//
// Needs a hardware evaluator (cpu, or cuda where built) registered, unless
// `measured` replays an earlier run's JSON. Not thread-safe: it measures.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/evaluator.h"
#include "hw/executor.h"

namespace aware::experiments {

struct ValidationConfig {
  std::vector<std::string> graphs;
  std::string cluster;
  std::string backend = "cpu";
  std::vector<std::string> options;
  std::string methods = "m-etf,heft,m-topo,m-sct,metis,expert";
  int random = 5;
  int rounds = 3;
  std::uint64_t seed = 1;
  std::string costs;
  std::string uncalibrated;
  std::string simulators = "analytic,simgrid";
  std::vector<std::string> sim_options;
  std::string slowdowns_from;
  std::string measured;
  // "in-sample": the --costs table as given (or none), or --measured replayed;
  // "out-of-sample": profile the graphs here and predict what was not profiled
  // (validate_protocol.cc); "": out-of-sample unless --costs or --measured is given.
  std::string protocol;
  std::string holdout;      // out-of-sample: a model never profiled
  int profile_rounds = 3;   // out-of-sample: rounds of the profile
  int pair_rounds = 3;      // out-of-sample: rounds beside a copy (pair slowdowns; 0: none)
  int bootstrap = 1000;     // resamples of the tau interval
  std::string costs_out;    // out-of-sample: also write the profiled table here
};

// Runs the experiment (the protocol `config.protocol` names) and returns its table as `format`: json (the rows, the
// settings and the summaries), csv (one row per placement), md or table (the
// errors per graph and pooled). `log` receives one line per step of progress.
// Throws ConfigError for bad settings (naming the option), ParseError for a bad
// --measured or --slowdowns-from file.
std::string run_validation(const ValidationConfig& config, const std::string& format,
                           const std::function<void(const std::string&)>& log);

// `evaluator` as a hardware executor; ConfigError naming `backend` when it is not one.
HardwareEvaluator& as_hardware(Evaluator& evaluator, const std::string& backend);

// The machine as a cluster spec: every core (cpu-host) or every GPU (cuda-host);
// for cuda with a device count, that many logical devices over the GPUs.
std::string default_host_cluster(const std::string& backend, int devices);

// The cluster `spec`, cut to `devices` when that is > 0 and differs.
Cluster host_cluster(const std::string& spec, int devices);

}  // namespace aware::experiments
