#include "sim/analytic/register.h"

#include "core/evaluator.h"
#include "sim/analytic/analytic_simulator.h"

namespace aware {

void register_analytic_evaluator() {
  using T = OptionSpec::Type;
  EvaluatorRegistry::instance().add(
      {"analytic",
       "event-driven simulator; modes: contention (default), placeto",
       {
          {"mode", T::kString, "contention", "contention (links shared first come first served) "
                                             "or placeto (Placeto's simulator)"},
          {"placeto.delta1_us", T::kDouble, "5.7", "placeto mode: per-op device overhead (µs)"},
          {"placeto.delta2_us", T::kDouble, "25", "placeto mode: per-transfer bus overhead (µs)"},
          {"placeto.bytes_per_us", T::kDouble, "7600", "placeto mode: bus bandwidth"},
          {"slowdown.compute", T::kDouble, "1",
           "contention mode: how much a compute-bound op slows while every other device is "
           "busy (1 = independent devices; aware calibrate measures it)"},
          {"slowdown.memory", T::kDouble, "1",
           "contention mode: the same for memory-bound ops (devices sharing memory bandwidth)"},
          {"slowdown.memory_from_bytes", T::kDouble, "0",
           "contention mode: only memory-bound ops and copies touching at least this many bytes "
           "take slowdown.memory; smaller ones (in a core's own cache) take slowdown.compute"},
          {"copies", T::kString, "links",
           "contention mode: links (a copy uses the links and overlaps compute) or consumer "
           "(it also holds the receiving device's compute stream, as the cpu and cuda "
           "executors run it)"},
          {"queue", T::kString, "fifo",
           "contention mode: fifo (each device runs its queued tasks first come first served, as "
           "Placeto's simulator) or rank (the queued task of lowest topological rank, as the cpu "
           "executor's order=rank)"},
          {"host.op_us", T::kDouble, "0",
           "contention mode: one host issues every task, in the order they start, and needs this "
           "long per op; no task starts before its issue (the cuda executor's one issuing thread; "
           "0: no host)"},
          {"host.copy_us", T::kDouble, "0", "contention mode: the same host's time to issue a copy"},
          {"costs", T::kPath, "", "a cost table (aware-cost-table JSON): measured µs per op "
                                  "and device kind; other ops keep the roofline"},
       },
       // The default (contention) mode: exact hand schedules, links first come first served.
       {{"deterministic", "1"}, {"models", "links"}, {"link_sharing", "fcfs"}, {"tolerance", "1e-9"}}},
      [](const Options& options) -> std::unique_ptr<Evaluator> {
        return AnalyticSimulator::from_options(options);
      });
}

}  // namespace aware
