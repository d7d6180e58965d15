#include "hw/calibrate.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "core/cost_fit.h"
#include "core/errors.h"

namespace aware {

namespace {

void say(const CalibrationLog& log, const std::string& text) {
  if (log) log(text);
}

Op sized_op(const std::string& name, double flops, double bytes, double out_bytes) {
  Op op;
  op.name = name;
  op.type = flops > 0 ? "MatMul" : "Stream";
  op.flops = flops;
  op.bytes_accessed = bytes;
  op.output_bytes = {out_bytes};
  return op;
}

// `count` copies of `op` in a chain (no tensor between them), all on `device`.
double median_op_time_us(HardwareEvaluator& backend, const Cluster& cluster, Op op, int count,
                         int device) {
  OpGraph g("calibration");
  for (int i = 0; i < count; ++i) {
    op.name = "op" + std::to_string(i);
    g.add_op(op);
    if (i > 0) g.add_edge(i - 1, i, 0, 0);
  }
  const StepResult r = backend.evaluate(g, cluster, Placement(std::vector<int>(count, device)));
  if (!r.feasible) throw ConfigError("calibration: a probe step is infeasible: " + r.infeasible_reason);
  return median_of(backend.last_measurement().op_median_us);
}

}  // namespace

namespace {
constexpr const char* kCalibratedSuffix = "-calibrated";
}

double stream_contention_from_bytes(const std::vector<std::pair<double, double>>& by_bytes) {
  if (by_bytes.size() < 2) return 0;
  const double last = by_bytes.back().second;
  if (!(last >= 1.05)) return 0;
  const double half = 1 + (last - 1) / 2;
  size_t from = by_bytes.size() - 1;
  while (from > 0 && by_bytes[from - 1].second >= half) --from;
  return by_bytes[from].first;
}

bool is_calibrated_cluster(const Cluster& cluster) {
  const std::string& name = cluster.name();
  const std::string suffix = kCalibratedSuffix;
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void fit_gemm_sweep(Calibration& cal) {
  if (cal.gemm.empty()) throw ConfigError("calibration: no GEMM was measured");
  // The roofline prices an op as launch overhead + flops / (peak * efficiency):
  // fit that line, time = overhead + flops / rate, to the sweep (relative
  // error), and take the fitted rate as the one large ops reach. (The median
  // over the best rate, used before, counted the small GEMMs' launch-bound times
  // as slow arithmetic: 0.067 on an H200, pricing every unprofiled op at ~2.5
  // TFLOP/s.) One size, or a sweep that did not get slower with more work, falls
  // back to the best measured rate.
  std::vector<CostSample> sweep;
  double best = 0;
  for (const GemmRate& g : cal.gemm) {
    const double flops = 2.0 * g.size * g.size * g.size;
    sweep.push_back({"gemm", flops, 0, flops / g.flops_per_s * 1e6});
    best = std::max(best, g.flops_per_s);
  }
  const CostFit line = fit_cost_samples(sweep, {1, 1e-3}).at("*");
  cal.fitted_flops = line.us_per_flop > 0 ? 1e6 / line.us_per_flop : best;
  cal.gemm_overhead_us = line.us_per_flop > 0 ? line.overhead_us : 0;
  cal.peak_flops = std::max(best, cal.fitted_flops);
  cal.efficiency = std::clamp(cal.fitted_flops / cal.peak_flops, 1e-3, 1.0);
}

CopyFit fit_copy(const std::vector<std::pair<double, double>>& samples) {
  CopyFit fit;
  fit.samples = samples;
  const double n = static_cast<double>(samples.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : samples) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double denominator = n * sxx - sx * sx;
  if (samples.size() < 2 || !(denominator > 0))
    throw ConfigError("calibration: a copy fit needs at least two distinct sizes");
  double slope = (n * sxy - sx * sy) / denominator;  // µs per byte
  double intercept = (sy - slope * sx) / n;
  if (intercept < 0) {  // no negative latency: refit through the origin
    intercept = 0;
    slope = sxy / sxx;
  }
  if (!(slope > 0)) throw ConfigError("calibration: copies did not take longer with more bytes");
  fit.bandwidth_Bps = 1e6 / slope;
  fit.latency_us = intercept;
  return fit;
}

Calibration calibrate(HardwareEvaluator& backend, const Cluster& base,
                      const CalibrationOptions& options, const CalibrationLog& log) {
  if (base.num_devices() < 1) throw ConfigError("calibration: the cluster has no devices");
  if (options.gemm_sizes.empty() || options.copy_bytes.size() < 2 || options.chain < 1 ||
      options.overhead_ops < 2 || !(options.stream_bytes > 0))
    throw ConfigError("calibration: needs GEMM sizes, two copy sizes, a chain and stream bytes");
  Calibration cal;
  cal.backend = backend.name();

  for (int size : options.gemm_sizes) {
    const double s = size;
    const double flops = 2 * s * s * s;
    Op op = sized_op("gemm", flops, 12 * s * s, 0);
    op.shape = {{"M", s}, {"N", s}, {"K", s}};
    const double us = median_op_time_us(backend, base, op, options.chain, 0);
    cal.gemm.push_back({size, flops / (us * 1e-6)});
    say(log, "GEMM " + std::to_string(size) + "^3: " + std::to_string(cal.gemm.back().flops_per_s / 1e9) +
                 " GFLOP/s");
  }
  fit_gemm_sweep(cal);

  {
    const double us = median_op_time_us(backend, base, sized_op("stream", 0, options.stream_bytes, 0),
                                        options.chain, 0);
    cal.memory_Bps = options.stream_bytes / (us * 1e-6);
    say(log, "memory: " + std::to_string(cal.memory_Bps / 1e9) + " GB/s");
  }
  {
    OpGraph g("overhead");
    for (int i = 0; i < options.overhead_ops; ++i) {
      g.add_op(sized_op("tiny" + std::to_string(i), 0, 64, 0));
      if (i > 0) g.add_edge(i - 1, i, 0, 0);
    }
    const StepResult r =
        backend.evaluate(g, base, Placement(std::vector<int>(options.overhead_ops, 0)));
    cal.launch_overhead_us = r.step_time_us / options.overhead_ops;
    say(log, "per-op overhead: " + std::to_string(cal.launch_overhead_us) + " us");
  }

  if (base.num_devices() > 1) {
    // Two independent chains, on one device and then on two.
    const auto pair_slowdown = [&](const Op& probe, int chain) {
      OpGraph g("concurrency");
      for (int c = 0; c < 2; ++c) {
        for (int i = 0; i < chain; ++i) {
          Op op = probe;
          op.name = "chain" + std::to_string(c) + "/" + std::to_string(i);
          const int id = g.add_op(op);
          if (i > 0) g.add_edge(id - 1, id, 0, 0);
        }
      }
      std::vector<int> split(2 * chain, 0);
      std::fill(split.begin() + chain, split.end(), 1);
      const double one =
          backend.evaluate(g, base, Placement(std::vector<int>(2 * chain, 0))).step_time_us;
      const double two = backend.evaluate(g, base, Placement(split)).step_time_us;
      return two / (one / 2);
    };
    // The median of three rounds, as the ladder below: one pair of steps on a
    // shared machine can catch a burst of load in either and give any ratio.
    const auto median_slowdown = [&](const Op& probe, int chain) {
      std::vector<double> rounds;
      for (int round = 0; round < 3; ++round) rounds.push_back(pair_slowdown(probe, chain));
      std::sort(rounds.begin(), rounds.end());
      return rounds[1];
    };
    const int s = std::min(512, *std::max_element(options.gemm_sizes.begin(), options.gemm_sizes.end()));
    Op gemm = sized_op("gemm", 2.0 * s * s * s, 12.0 * s * s, 0);
    gemm.shape = {{"M", s}, {"N", s}, {"K", s}};
    cal.concurrent_gemm_slowdown = median_slowdown(gemm, options.chain);
    cal.concurrent_stream_slowdown = median_slowdown(sized_op("stream", 0, options.stream_bytes, 0), options.chain);
    say(log, "two devices at once: GEMM x" + std::to_string(cal.concurrent_gemm_slowdown) +
                 ", streaming x" + std::to_string(cal.concurrent_stream_slowdown));
    // The ladder: each size as many passes as move the large chain's bytes (at most
    // 4,096), so that the step's fixed costs (starting both devices) do not pass for
    // contention; three rounds over the sizes, the median of each, so that a burst
    // of load on the machine does not decide the threshold.
    std::vector<double> sizes;
    for (double bytes : options.stream_ladder_bytes)
      if (bytes > 0 && bytes < options.stream_bytes) sizes.push_back(bytes);
    std::vector<std::vector<double>> rounds(sizes.size());
    for (int round = 0; round < 3; ++round)
      for (size_t i = 0; i < sizes.size(); ++i)
        rounds[i].push_back(pair_slowdown(
            sized_op("stream", 0, sizes[i], 0),
            static_cast<int>(std::min(4096.0, std::ceil(options.chain * options.stream_bytes / sizes[i])))));
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::sort(rounds[i].begin(), rounds[i].end());
      cal.stream_slowdown_by_bytes.push_back({sizes[i], rounds[i][1]});
    }
    cal.stream_slowdown_by_bytes.push_back({options.stream_bytes, cal.concurrent_stream_slowdown});
    std::sort(cal.stream_slowdown_by_bytes.begin(), cal.stream_slowdown_by_bytes.end());
    cal.concurrent_stream_from_bytes = stream_contention_from_bytes(cal.stream_slowdown_by_bytes);
    std::string ladder;
    for (const auto& [bytes, factor] : cal.stream_slowdown_by_bytes)
      ladder += " " + std::to_string(static_cast<long long>(bytes / 1e3)) + " kB x" + std::to_string(factor);
    say(log, "streaming pairs by size:" + ladder + "; memory contention from " +
                 std::to_string(static_cast<long long>(cal.concurrent_stream_from_bytes)) + " bytes");
  }

  for (int src = 0; src < base.num_devices(); ++src) {
    for (int dst = 0; dst < base.num_devices(); ++dst) {
      if (src == dst) continue;
      std::vector<std::pair<double, double>> samples;
      for (double bytes : options.copy_bytes) {
        OpGraph g("copy");
        g.add_op(sized_op("producer", 0, 64, bytes));
        g.add_op(sized_op("consumer", 0, 64, 0));
        g.add_edge(0, 1);
        std::vector<int> devices(2, 0);
        devices[0] = src;
        devices[1] = dst;
        Trace trace;
        const StepResult r = backend.evaluate(g, base, Placement(devices), &trace);
        if (!r.feasible || trace.transfers.size() != 1)
          throw HardwareError("calibration: the copy probe " + base.device(src).name + " -> " +
                              base.device(dst).name + " did not run one copy");
        samples.emplace_back(bytes, trace.transfers[0].end_us - trace.transfers[0].start_us);
      }
      CopyFit fit = fit_copy(samples);
      fit.src = src;
      fit.dst = dst;
      say(log, "copy " + base.device(src).name + " -> " + base.device(dst).name + ": " +
                   std::to_string(fit.bandwidth_Bps / 1e9) + " GB/s, " +
                   std::to_string(fit.latency_us) + " us");
      cal.copies.push_back(std::move(fit));
    }
  }

  // The calibrated cluster: measured device rates; a star whose two-hop routes
  // take the median measured latency and bandwidth.
  Cluster c(base.name() + kCalibratedSuffix);
  for (Device d : base.devices()) {
    d.peak_flops = cal.peak_flops;
    d.efficiency = cal.efficiency;
    d.memory_Bps = cal.memory_Bps;
    d.launch_overhead_us = cal.launch_overhead_us;
    c.add_device(d);
  }
  if (base.num_devices() > 1) {
    std::vector<double> bandwidths, latencies;
    for (const CopyFit& f : cal.copies) {
      bandwidths.push_back(f.bandwidth_Bps);
      latencies.push_back(f.latency_us);
    }
    const double bandwidth = median_of(bandwidths);
    const double latency = median_of(latencies);
    c.add_switch("fabric");
    for (const Device& d : base.devices())
      c.connect(d.name, "fabric", bandwidth, latency / 2, d.name + "-fabric");
  }
  c.finalize();
  cal.cluster = std::move(c);
  return cal;
}

CostTable profile_graphs(HardwareEvaluator& backend, const std::vector<OpGraph>& graphs,
                         const Cluster& cluster, int rounds, const CalibrationLog& log) {
  if (rounds < 1) throw ConfigError("profiling: rounds must be >= 1");
  std::map<std::string, int> first_of_kind;
  for (int d = 0; d < cluster.num_devices(); ++d) first_of_kind.emplace(cluster.device(d).kind, d);
  // samples[graph][kind][op]: one per-op median per round.
  std::vector<std::map<std::string, std::vector<std::vector<double>>>> samples(graphs.size());
  for (int round = 0; round < rounds; ++round) {
    for (size_t gi = 0; gi < graphs.size(); ++gi) {
      const OpGraph& graph = graphs[gi];
      for (const auto& [kind, device] : first_of_kind) {
        say(log, "profiling " + graph.name() + " (" + std::to_string(graph.num_ops()) + " ops) on " +
                     cluster.device(device).name + ", round " + std::to_string(round + 1) + " of " +
                     std::to_string(rounds));
        const StepResult r =
            backend.evaluate(graph, cluster, Placement(std::vector<int>(graph.num_ops(), device)));
        if (!r.feasible)
          throw ConfigError("profiling " + graph.name() + " on " + cluster.device(device).name +
                            ": the whole graph must fit on one device (" + r.infeasible_reason + ")");
        auto& per_op = samples[gi][kind];
        per_op.resize(graph.num_ops());
        const std::vector<double>& us = backend.last_measurement().op_median_us;
        for (int op = 0; op < graph.num_ops(); ++op) per_op[op].push_back(us[op]);
      }
    }
  }
  // An op name in several graphs (two language models' "softmax/.../grad_weight",
  // of different sizes) is kept once per graph, as "GRAPH::OP"; names in one graph
  // only stay plain, so the table still prices rewrites that keep them.
  std::map<std::string, std::vector<size_t>> graphs_of;
  for (size_t gi = 0; gi < graphs.size(); ++gi)
    for (int op = 0; op < graphs[gi].num_ops(); ++op) graphs_of[graphs[gi].op(op).name].push_back(gi);
  CostTable table;
  for (size_t gi = 0; gi < graphs.size(); ++gi) {
    for (const auto& [kind, per_op] : samples[gi]) {
      for (int op = 0; op < graphs[gi].num_ops(); ++op) {
        const std::string& name = graphs[gi].op(op).name;
        const std::vector<size_t>& in = graphs_of[name];
        std::string key = name;
        if (in.size() > 1) {
          for (size_t other : in)
            if (other != gi && graphs[other].name() == graphs[gi].name())
              throw ConfigError("profiling: two graphs are both named '" + graphs[gi].name() +
                                "' and share op '" + name +
                                "'; profile them into separate cost tables");
          key = scoped_op_name(graphs[gi].name(), name);
        }
        table.us[{key, kind}] = median_of(per_op[op]);
      }
    }
  }
  // What ops never profiled will cost: per-type fits to these (calibrate.h).
  fit_cost_table(table, graphs);
  return table;
}

int profile_pair_slowdowns(HardwareEvaluator& backend, const std::vector<OpGraph>& graphs, const Cluster& cluster,
                           int rounds, CostTable& table, const CalibrationLog& log) {
  if (rounds < 1) throw ConfigError("profiling pairs: rounds must be >= 1");
  std::map<std::string, std::vector<int>> devices_of_kind;
  for (int d = 0; d < cluster.num_devices(); ++d) devices_of_kind[cluster.device(d).kind].push_back(d);
  int set = 0;
  for (const auto& [kind, devices] : devices_of_kind) {
    if (devices.size() < 2) continue;
    // Per type: the time of its ops in the pair and alone, summed over both copies
    // and every graph (a sum, so that the long ops that make a step weigh most).
    std::map<std::string, std::pair<double, double>> by_type;
    for (const OpGraph& graph : graphs) {
      OpGraph pair(graph.name() + "+copy");
      const int n = graph.num_ops();
      for (int copy = 0; copy < 2; ++copy) {
        for (int op = 0; op < n; ++op) {
          Op o = graph.op(op);
          if (copy == 1) o.name = "copy/" + o.name;
          pair.add_op(o);
        }
        for (const Edge& e : graph.edges()) pair.add_edge(e.src + copy * n, e.dst + copy * n, e.src_output, e.bytes);
      }
      std::vector<int> where(2 * static_cast<size_t>(n), devices[0]);
      std::fill(where.begin() + n, where.end(), devices[1]);
      std::vector<std::vector<double>> samples(2 * static_cast<size_t>(n));
      for (int round = 0; round < rounds; ++round) {
        say(log, "profiling " + graph.name() + " beside a copy of itself on " + cluster.device(devices[0]).name +
                     " and " + cluster.device(devices[1]).name + ", round " + std::to_string(round + 1) + " of " +
                     std::to_string(rounds));
        const StepResult r = backend.evaluate(pair, cluster, Placement(where));
        if (!r.feasible)
          throw ConfigError("profiling " + graph.name() + " beside a copy of itself: it does not fit (" +
                            r.infeasible_reason + ")");
        const std::vector<double>& us = backend.last_measurement().op_median_us;
        for (size_t i = 0; i < samples.size(); ++i) samples[i].push_back(us[i]);
      }
      for (int op = 0; op < n; ++op) {
        const double alone = table.lookup(graph.name(), graph.op(op).name, kind);
        if (!(alone > 0)) continue;
        for (int copy = 0; copy < 2; ++copy) {
          const double paired = median_of(samples[static_cast<size_t>(op + copy * n)]);
          for (const std::string& type : {graph.op(op).type, std::string("*")}) {
            if (type.empty()) continue;
            by_type[type].first += paired;
            by_type[type].second += alone;
          }
        }
      }
    }
    for (auto it = table.pair_slowdowns.begin(); it != table.pair_slowdowns.end();)
      it = it->first.second == kind ? table.pair_slowdowns.erase(it) : std::next(it);
    for (const auto& [type, sums] : by_type) {
      if (!(sums.second > 0) || !(sums.first > 0)) continue;
      table.pair_slowdowns[{type, kind}] = sums.first / sums.second;
      ++set;
    }
    if (by_type.count("*") != 0 && by_type["*"].second > 0) {
      char line[160];
      std::snprintf(line, sizeof line, "pairs on %s: every op x%.3f beside a copy of itself (%d op types)", kind.c_str(),
                    by_type["*"].first / by_type["*"].second, static_cast<int>(by_type.size()) - 1);
      say(log, line);
    }
  }
  return set;
}

CostTable profile_graph(HardwareEvaluator& backend, const OpGraph& graph, const Cluster& cluster,
                        const CalibrationLog& log) {
  return profile_graphs(backend, {graph}, cluster, 1, log);
}

std::string calibration_report_json(const Calibration& cal) {
  nlohmann::json gemm = nlohmann::json::array();
  for (const GemmRate& g : cal.gemm) gemm.push_back({{"size", g.size}, {"flops_per_s", g.flops_per_s}});
  nlohmann::json copies = nlohmann::json::array();
  for (const CopyFit& f : cal.copies) {
    nlohmann::json samples = nlohmann::json::array();
    for (const auto& [bytes, us] : f.samples) samples.push_back({{"bytes", bytes}, {"us", us}});
    copies.push_back({{"src", cal.cluster.device(f.src).name},
                      {"dst", cal.cluster.device(f.dst).name},
                      {"bandwidth_Bps", f.bandwidth_Bps},
                      {"latency_us", f.latency_us},
                      {"samples", samples}});
  }
  nlohmann::json ladder = nlohmann::json::array();
  for (const auto& [bytes, factor] : cal.stream_slowdown_by_bytes)
    ladder.push_back({{"bytes", bytes}, {"slowdown", factor}});
  const nlohmann::json doc = {{"backend", cal.backend},
                              {"gemm", gemm},
                              {"peak_flops", cal.peak_flops},
                              {"efficiency", cal.efficiency},
                              {"fitted_flops", cal.fitted_flops},
                              {"gemm_overhead_us", cal.gemm_overhead_us},
                              {"memory_Bps", cal.memory_Bps},
                              {"launch_overhead_us", cal.launch_overhead_us},
                              {"concurrent_gemm_slowdown", cal.concurrent_gemm_slowdown},
                              {"concurrent_stream_slowdown", cal.concurrent_stream_slowdown},
                              {"concurrent_stream_slowdown_by_bytes", ladder},
                              {"concurrent_stream_from_bytes", cal.concurrent_stream_from_bytes},
                              {"copies", copies}};
  return doc.dump(1) + "\n";
}

}  // namespace aware
