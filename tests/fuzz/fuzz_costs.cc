// Fuzz target: the cost-table reader (core/cost_table.h), then what the
// simulators do with a table that parsed: its coverage of a fixed graph and
// cluster, a write-and-read round trip, and the analytic simulator in both modes
// pricing the fixed graph's ops from it. Bad input must end in an aware::Error;
// anything else (a crash, a sanitizer report, another exception type, a broken
// invariant below) is a finding.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cost_table.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/placement.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace aware;
  const std::string text = fuzz::input_text(data, size);
  // The seeds name ops a..d (the diamond) and kinds "test" (the star's devices)
  // and "*", so that accepted tables really price the simulated ops.
  const auto& [graph, cluster] = fuzz::small_fixture();
  try {
    CostTableInfo info;
    const auto table = std::make_shared<const CostTable>(
        cost_table_from_json(parse_json_text(text, "fuzz"), "fuzz", &info));

    // What the reader promises: non-empty names, finite costs >= 0.
    for (const auto& [key, us] : table->us) {
      fuzz::require(!key.first.empty() && !key.second.empty(), "non-empty op name and kind");
      fuzz::require(std::isfinite(us) && us >= 0, "finite, non-negative cost");
    }

    // Whatever was read is written back and read again unchanged (the writer's
    // output is a table the strict reader accepts).
    CostTableInfo info_again;
    const CostTable again =
        cost_table_from_json(cost_table_to_json(*table, info), "round trip", &info_again);
    fuzz::require(again.us == table->us, "round trip keeps every entry");
    fuzz::require(info_again.graph == info.graph && info_again.backend == info.backend,
                  "round trip keeps graph and backend");
    fuzz::require(cost_table_fingerprint(again) == cost_table_fingerprint(*table),
                  "round trip keeps the fingerprint");

    const CostTableCoverage coverage = cost_table_coverage(*table, graph, cluster);
    fuzz::require(coverage.pairs_total == graph.num_ops() * cluster.num_devices(), "pairs total");
    fuzz::require(
        coverage.pairs_from_table >= 0 && coverage.pairs_from_table <= coverage.pairs_total,
        "pairs from the table within the total");
    fuzz::require(coverage.ops_missed >= 0 && coverage.ops_missed <= graph.num_ops(),
                  "missed ops within the graph");
    fuzz::require((coverage.ops_missed == 0) == coverage.first_missed_op.empty(),
                  "first missed op named exactly when an op is missed");
    fuzz::require(coverage.entries_unused >= 0 &&
                      coverage.entries_unused <= static_cast<int>(table->us.size()),
                  "unused entries within the table");

    for (AnalyticMode mode : {AnalyticMode::kContention, AnalyticMode::kPlaceto}) {
      AnalyticSimulator sim(mode);
      sim.set_cost_table(table, "fuzz");
      for (const Placement& p :
           {single_device_placement(graph, 0), round_robin_placement(graph, cluster)}) {
        try {
          const StepResult r = sim.evaluate(graph, cluster, p);
          fuzz::require(std::isfinite(r.step_time_us) && r.step_time_us >= 0, "finite step time");
          // A step is never shorter than the longest op it runs, priced as the table says.
          for (int op = 0; op < graph.num_ops(); ++op) {
            const double priced = op_time_us(graph.op(op), cluster.device(p[op]), table.get());
            fuzz::require(r.step_time_us >= priced * (1 - 1e-12), "step covers each op");
          }
        } catch (const Error&) {
          // Costs so large that the step overflows are refused, not reported as inf.
        }
      }
    }
  } catch (const Error&) {
    // Bad input, reported: the expected outcome for most inputs.
  }
  return 0;
}
