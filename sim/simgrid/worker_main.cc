// aware-simgrid-worker: one SimGrid Engine per process, serving the simgrid
// evaluator over a socket on stdin/stdout (see README.md for the protocol).
//
//   aware-simgrid-worker --serve [--cfg=KEY:VALUE ...]
//   aware-simgrid-worker --parse-platform FILE.xml   (prints the cluster JSON)
//   aware-simgrid-worker --bench OPS DEVICES EVALS [SEED]  (in-process speed)
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/formats.h"
#include "core/step_observer.h"
#include "sim/simgrid/bench_inputs.h"
#include "sim/simgrid/dag_simulator.h"
#include "sim/simgrid/platform_import.h"
#include "sim/simgrid/wire.h"

namespace {

using namespace aware;
namespace wire = aware::simgrid_wire;

wire::ErrorClass classify(const std::exception& e) {
  if (dynamic_cast<const ParseError*>(&e)) return wire::ErrorClass::kParse;
  if (dynamic_cast<const GraphError*>(&e)) return wire::ErrorClass::kGraph;
  if (dynamic_cast<const ConfigError*>(&e)) return wire::ErrorClass::kConfig;
  if (dynamic_cast<const DeviceError*>(&e)) return wire::ErrorClass::kDevice;
  if (dynamic_cast<const InternalError*>(&e)) return wire::ErrorClass::kInternal;
  return wire::ErrorClass::kError;
}

bool send_error(int fd, const std::exception& e) {
  wire::ByteWriter w;
  w.u8(static_cast<std::uint8_t>(classify(e)));
  w.str(e.what());
  return wire::write_frame(fd, wire::kError, w.bytes());
}

int serve(const std::vector<std::string>& cfg) {
  // The protocol owns the socket; anything else printing to stdout goes to stderr.
  const int in = 0;
  const int out = ::dup(1);
  ::dup2(2, 1);
  std::unique_ptr<DagSimulator> sim;
  try {
    sim = std::make_unique<DagSimulator>(cfg);
  } catch (const std::exception& e) {
    send_error(out, e);
    return 0;
  }
  if (!wire::write_frame(out, wire::kHello, sim->describe())) return 0;
  OpGraph graph;
  bool have_cluster = false;
  bool have_graph = false;
  char kind = 0;
  std::string payload;
  while (wire::read_frame(in, &kind, &payload)) {
    try {
      wire::ByteReader r(payload);
      if (kind == wire::kLoadCluster) {
        const std::string platform_file = r.str();
        const std::string text = r.str();
        if (have_cluster) throw InternalError("simgrid worker: a second cluster for one engine");
        Cluster cluster = cluster_from_json(parse_json_text(text, "cluster"), "cluster");
        sim->load_cluster(cluster, platform_file);
        have_cluster = true;
        if (!wire::write_frame(out, wire::kOk, {})) return 0;
      } else if (kind == wire::kLoadCosts) {
        sim->set_cost_table(wire::decode_cost_table(r));
        if (!wire::write_frame(out, wire::kOk, {})) return 0;
      } else if (kind == wire::kLoadGraph) {
        graph = graph_from_json(parse_json_text(r.str(), "graph"), "graph");
        have_graph = true;
        if (!wire::write_frame(out, wire::kOk, {})) return 0;
      } else if (kind == wire::kEvaluate) {
        const bool want_trace = r.u8() != 0;
        const std::uint8_t debug = r.u8();
        if (debug == wire::kDebugCrash) std::abort();
        if (debug == wire::kDebugHang) {
          for (;;) ::pause();
        }
        const int n = r.i32();
        Placement placement(std::vector<int>(static_cast<size_t>(std::max(0, n))));
        for (int i = 0; i < n; ++i) placement[i] = r.i32();
        if (!have_cluster || !have_graph)
          throw InternalError("simgrid worker: evaluate before load");
        Trace trace;
        TraceRecorder recorder(trace);
        const StepResult result = sim->evaluate(graph, placement, want_trace ? &recorder : nullptr);
        wire::ByteWriter w;
        wire::encode_result(w, result, want_trace ? &trace : nullptr);
        if (!wire::write_frame(out, wire::kResult, w.bytes())) return 0;
      } else {
        throw InternalError(std::string("simgrid worker: unknown request '") + kind + "'");
      }
    } catch (const std::exception& e) {
      if (!send_error(out, e)) return 0;
    }
  }
  return 0;  // the client closed the socket
}

int parse_platform(const std::string& path) {
  try {
    const Cluster cluster = convert_loaded_platform(path);
    std::cout << cluster_to_json(cluster).dump() << std::endl;
    return 0;
  } catch (const DeviceError& e) {
    std::cerr << e.what() << std::endl;
    return 4;
  } catch (const std::exception& e) {
    std::cerr << e.what() << std::endl;
    return 3;
  }
}

int bench(int ops, int devices, int evals, std::uint64_t seed) {
  const OpGraph graph = measured_layered_dag(ops, seed);
  const Cluster cluster = bench_star_cluster(devices);
  DagSimulator sim({});
  sim.load_cluster(cluster, "");
  int transfers = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < evals; ++i) {
    transfers =
        sim.evaluate(graph, random_placement(graph, devices, seed + 1 + i), nullptr).transfers;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "in-process: %d ops, %d edges, %d devices, ~%d transfers: %d evals in %.2f s = %.1f "
      "evals/s\n",
      ops, graph.num_edges(), devices, transfers, evals, s, evals / s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "--parse-platform") return parse_platform(args[1]);
  if (!args.empty() && args[0] == "--bench" && args.size() >= 4) {
    return bench(std::atoi(args[1].c_str()), std::atoi(args[2].c_str()), std::atoi(args[3].c_str()),
                 args.size() > 4 ? std::strtoull(args[4].c_str(), nullptr, 10) : 1);
  }
  if (!args.empty() && args[0] == "--serve") {
    std::vector<std::string> cfg;
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i].rfind("--cfg=", 0) != 0) {
        std::fprintf(stderr, "aware-simgrid-worker: unknown argument '%s'\n", args[i].c_str());
        return 2;
      }
      cfg.push_back(args[i].substr(6));
    }
    return serve(cfg);
  }
  std::fprintf(stderr,
               "usage: aware-simgrid-worker --serve [--cfg=KEY:VALUE ...]\n"
               "       aware-simgrid-worker --parse-platform FILE.xml\n"
               "       aware-simgrid-worker --bench OPS DEVICES EVALS [SEED]\n");
  return 2;
}
