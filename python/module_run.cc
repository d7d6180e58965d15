// simulate, evaluate_batch, place and apply_strategy: the workbench's work from
// Python. Long calls release the GIL.
#include <map>
#include <mutex>
#include <thread>

#include <pybind11/stl.h>

#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/evaluator_pool.h"
#include "core/placer.h"
#include "python/module.h"
#include "strategies/strategy.h"

namespace aware::python {

namespace {

py::dict result_dict(const StepResult& r, const Trace* trace) {
  py::dict out;
  out["step_us"] = r.step_time_us;
  out["feasible"] = r.feasible;
  out["infeasible_reason"] = r.infeasible_reason;
  out["device_busy_us"] = double_array(r.device_busy_us);
  out["peak_memory_bytes"] = double_array(r.peak_memory_bytes);
  out["bytes_moved"] = r.bytes_moved;
  out["transfers"] = r.transfers;
  out["evaluator"] = r.evaluator;
  out["notes"] = r.notes;
  if (trace != nullptr) {
    const std::size_t n = trace->ops.size();
    std::vector<int> op(n), device(n);
    std::vector<double> start(n), end(n);
    for (std::size_t i = 0; i < n; ++i) {
      op[i] = trace->ops[i].op;
      device[i] = trace->ops[i].device;
      start[i] = trace->ops[i].start_us;
      end[i] = trace->ops[i].end_us;
    }
    py::dict ops;
    ops["op"] = int_array(op);
    ops["device"] = int_array(device);
    ops["start_us"] = double_array(start);
    ops["end_us"] = double_array(end);
    const std::size_t t = trace->transfers.size();
    std::vector<int> src_op(t), src_device(t), dst_device(t);
    std::vector<double> bytes(t), t_start(t), t_end(t);
    for (std::size_t i = 0; i < t; ++i) {
      const TransferSpan& s = trace->transfers[i];
      src_op[i] = s.src_op;
      src_device[i] = s.src_device;
      dst_device[i] = s.dst_device;
      bytes[i] = s.bytes;
      t_start[i] = s.start_us;
      t_end[i] = s.end_us;
    }
    py::dict transfers;
    transfers["src_op"] = int_array(src_op);
    transfers["src_device"] = int_array(src_device);
    transfers["dst_device"] = int_array(dst_device);
    transfers["bytes"] = double_array(bytes);
    transfers["start_us"] = double_array(t_start);
    transfers["end_us"] = double_array(t_end);
    py::dict tr;
    tr["ops"] = ops;
    tr["transfers"] = transfers;
    out["trace"] = tr;
  }
  return out;
}

// One pool per (evaluator, options, threads), kept for the process: each clone
// prepares a graph once and keeps it, so repeated batches on one graph pay no
// preparation. A pool runs one batch at a time (its mutex).
struct PoolEntry {
  std::unique_ptr<Evaluator> prototype;
  std::unique_ptr<EvaluatorPool> pool;
  std::mutex busy;
};

std::shared_ptr<PoolEntry> pool_for(const std::string& evaluator, const Options& options, int threads) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<PoolEntry>> pools;
  std::string key = evaluator + "|" + std::to_string(threads);
  for (const auto& [k, v] : options) key += "|" + k + "=" + v;
  std::lock_guard<std::mutex> lock(mutex);
  auto& entry = pools[key];
  if (!entry) {
    auto made = std::make_shared<PoolEntry>();
    made->prototype = make_evaluator(evaluator, options);
    made->pool = std::make_unique<EvaluatorPool>(*made->prototype, threads);
    entry = made;
  }
  return entry;
}

int resolve_threads(int threads) {
  if (threads < 0) throw ConfigError("threads must be 0 (every core) or positive, got " + std::to_string(threads));
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return threads;
}

std::vector<Placement> batch_from(const py::handle& object, const OpGraph& graph, const Cluster& cluster) {
  const auto ints = int_array_from(
      object, "placements must be an integer array of shape (batch, ops) = (B, " + std::to_string(graph.num_ops()) + ")",
      {-1, graph.num_ops()});
  const long long* data = ints.data();
  const int n = graph.num_ops();
  const long long devices = cluster.num_devices();
  std::vector<Placement> out(static_cast<std::size_t>(ints.shape(0)));
  for (std::size_t b = 0; b < out.size(); ++b) {
    std::vector<int> row(n);
    for (int op = 0; op < n; ++op) {
      const long long d = data[b * n + op];
      if (d < 0 || d >= devices)
        throw_input_error("placements row " + std::to_string(b) + " puts op " + graph.op(op).name + " (index " +
                          std::to_string(op) + ") on device " + std::to_string(d) + "; cluster " + cluster.name() +
                          " has devices 0.." + std::to_string(devices - 1));
      row[op] = static_cast<int>(d);
    }
    out[b] = Placement(std::move(row));
  }
  // Colocation and the rest, once per distinct check (rows are checked alike).
  for (std::size_t b = 0; b < out.size(); ++b)
    check_placement(graph, cluster, out[b], "placements row " + std::to_string(b));
  return out;
}

}  // namespace

void bind_run(py::module_& m) {
  m.def(
      "simulate",
      [](const OpGraph& graph, const Cluster& cluster, const py::handle& placement, const std::string& evaluator,
         const py::handle& options, bool trace) {
        const Placement p = placement_from(placement, graph, cluster);
        auto ev = make_evaluator(evaluator, options_from(options, "options"));
        Trace recorded;
        StepResult r;
        {
          py::gil_scoped_release release;
          r = ev->evaluate(graph, cluster, p, trace ? &recorded : nullptr);
        }
        return result_dict(r, trace ? &recorded : nullptr);
      },
      py::arg("graph"), py::arg("cluster"), py::arg("placement"), py::arg("evaluator") = "analytic",
      py::arg("options") = py::none(), py::arg("trace") = true,
      "Simulates (or runs, on a hardware evaluator) one step of `placement` (int array, one device per op). "
      "Returns a dict: step_us, feasible, infeasible_reason, device_busy_us, peak_memory_bytes, bytes_moved, "
      "transfers, evaluator, notes and, with trace, trace = {ops: {op, device, start_us, end_us}, transfers: "
      "{src_op, src_device, dst_device, bytes, start_us, end_us}} as arrays.");

  m.def(
      "evaluate_batch",
      [](const OpGraph& graph, const Cluster& cluster, const py::handle& placements, const std::string& evaluator,
         const py::handle& options, int threads) {
        const std::vector<Placement> batch = batch_from(placements, graph, cluster);
        const auto entry = pool_for(evaluator, options_from(options, "options"), resolve_threads(threads));
        std::vector<StepResult> results;
        {
          py::gil_scoped_release release;
          std::lock_guard<std::mutex> lock(entry->busy);
          results = entry->pool->evaluate_batch(graph, cluster, batch);
        }
        const py::ssize_t b = static_cast<py::ssize_t>(results.size());
        const py::ssize_t devices = cluster.num_devices();
        py::array_t<double> step({b});
        py::array_t<bool> feasible({b});
        py::array_t<double> peak({b, devices});
        auto s = step.mutable_unchecked<1>();
        auto f = feasible.mutable_unchecked<1>();
        auto pk = peak.mutable_unchecked<2>();
        for (py::ssize_t i = 0; i < b; ++i) {
          s(i) = results[i].step_time_us;
          f(i) = results[i].feasible;
          for (py::ssize_t d = 0; d < devices; ++d)
            pk(i, d) = d < static_cast<py::ssize_t>(results[i].peak_memory_bytes.size()) ? results[i].peak_memory_bytes[d] : 0.0;
        }
        py::dict out;
        out["step_us"] = step;
        out["feasible"] = feasible;
        out["peak_memory_bytes"] = peak;
        return out;
      },
      py::arg("graph"), py::arg("cluster"), py::arg("placements"), py::arg("evaluator") = "analytic",
      py::arg("options") = py::none(), py::arg("threads") = 0,
      "Evaluates a batch of placements (int array of shape (B, ops)) on `threads` clones of the evaluator "
      "(0: every core), the GIL released. Returns {step_us: (B,), feasible: (B,), peak_memory_bytes: (B, devices)}.");

  m.def(
      "place",
      [](const OpGraph& graph, const Cluster& cluster, const std::string& method, std::uint64_t seed,
         long long budget_evals, double budget_seconds, const std::string& evaluator, const py::handle& evaluator_options,
         const py::handle& options, const py::handle& start) {
        if (budget_evals < 0) throw ConfigError("budget_evals must be 0 (the method's default) or positive");
        if (!(budget_seconds >= 0)) throw ConfigError("budget_seconds must be 0 (none) or positive");
        auto placer = PlacerRegistry::instance().create(method);
        auto ev = make_evaluator(evaluator, options_from(evaluator_options, "evaluator_options"));
        PlaceContext context;
        context.evaluator = ev.get();
        context.seed = seed;
        context.budget_evals = budget_evals;
        context.budget_seconds = budget_seconds;
        context.options = options_from(options, "options");
        Placement start_placement;
        if (!start.is_none()) {
          start_placement = placement_from(start, graph, cluster, "start");
          context.start = &start_placement;
        }
        Placement p;
        {
          py::gil_scoped_release release;
          p = placer->place(graph, cluster, context);
        }
        return int_array(p.device_of_op);
      },
      py::arg("graph"), py::arg("cluster"), py::arg("method"), py::arg("seed") = 1, py::arg("budget_evals") = 0,
      py::arg("budget_seconds") = 0.0, py::arg("evaluator") = "analytic", py::arg("evaluator_options") = py::none(),
      py::arg("options") = py::none(), py::arg("start") = py::none(),
      "Places the graph with a registered placer or learned agent (aware.list('placers')); returns an int array, one "
      "device per op. budget_evals 0: the method's default.");

  m.def(
      "apply_strategy",
      [](const OpGraph& graph, const Cluster& cluster, const std::string& spec, std::uint64_t seed,
         long long budget_evals, double budget_seconds, const std::string& evaluator, const py::handle& evaluator_options,
         const py::handle& placer_options) {
        auto ev = make_evaluator(evaluator, options_from(evaluator_options, "evaluator_options"));
        StrategyContext context;
        context.evaluator = ev.get();
        context.seed = seed;
        context.budget_evals = budget_evals;
        context.budget_seconds = budget_seconds;
        context.placer_options = options_from(placer_options, "placer_options");
        StrategyResult r;
        {
          py::gil_scoped_release release;
          r = apply_strategy(graph, cluster, spec, context);
        }
        py::dict out;
        out["spec"] = r.spec;
        out["placement"] = int_array(r.placement.device_of_op);
        out["graph"] = std::make_shared<OpGraph>(std::move(r.graph));
        out["replicas"] = r.replicas;
        out["devices_used"] = r.devices_used;
        out["global_batch"] = r.global_batch;
        out["notes"] = r.notes;
        return out;
      },
      py::arg("graph"), py::arg("cluster"), py::arg("spec"), py::arg("seed") = 1, py::arg("budget_evals") = 0,
      py::arg("budget_seconds") = 0.0, py::arg("evaluator") = "analytic", py::arg("evaluator_options") = py::none(),
      py::arg("placer_options") = py::none(),
      "Rewrites the graph by a strategy spec (dp:4, pipeline:4,micro=8, hybrid:2xm-etf, ...): a dict with the new "
      "graph, its placement and what the rewrite did.");

  m.def("strategy_kinds", &strategy_kinds, "Every strategy kind and a one-line description.");
  m.def("plugins", &builtin_plugins, "The plugins this build registered (analytic, simgrid, baselines, rl, ...).");
}

}  // namespace aware::python
