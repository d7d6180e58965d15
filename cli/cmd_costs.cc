// aware costs fit: per-op-type fits for a measured cost table (core/cost_fit.h),
// so that the ops it does not name (another batch, a strategy's replicas, a model
// never profiled) are priced from the kinds of op it has measured.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/cli_common.h"
#include "core/cost_fit.h"
#include "core/cost_table.h"
#include "core/errors.h"
#include "datasets/load.h"

namespace aware::cli {
namespace {

struct CostsFitArgs {
  std::string costs;
  std::vector<std::string> graphs;
  std::string out;
  int min_samples = 4;
  bool json = false;
};

// The median |relative error| of `fit` over the samples of `type` ("*": all).
double median_error(const CostFit& fit, const std::vector<CostSample>& samples, const std::string& type) {
  std::vector<double> errors;
  for (const CostSample& s : samples) {
    if (type != "*" && s.type != type) continue;
    const double predicted = fit.overhead_us + fit.us_per_flop * s.flops + fit.us_per_byte * s.bytes;
    errors.push_back(std::abs(predicted - s.us) / std::max(s.us, 1.0));
  }
  if (errors.empty()) return 0;
  std::sort(errors.begin(), errors.end());
  return errors[errors.size() / 2];
}

void run_costs_fit(const CostsFitArgs& a) {
  check_distinct_files({{"-o", a.out}}, {{"--costs", a.costs}});
  prepare_output_path(a.out, "-o");
  CostTableInfo info;
  CostTable table = read_cost_table_file(a.costs, &info);
  std::vector<OpGraph> graphs;
  for (const std::string& spec : a.graphs) graphs.push_back(load_graph(spec));
  CostFitOptions options;
  options.min_samples = a.min_samples;
  const int used = fit_cost_table(table, graphs, options);
  if (used == 0)
    throw ConfigError(a.costs + ": no entry of the table names an op of the --graph graphs: give the "
                      "graphs it was profiled from");
  write_cost_table_file(table, a.out, info);
  const auto samples = cost_samples(table, graphs);
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [key, fit] : table.fits)
      rows.push_back({{"kind", key.second}, {"type", key.first}, {"samples", fit.samples}, {"from", fit.from},
                      {"overhead_us", fit.overhead_us}, {"us_per_flop", fit.us_per_flop},
                      {"us_per_byte", fit.us_per_byte},
                      {"median_error", median_error(fit, samples.at(key.second), key.first)}});
    std::cout << nlohmann::json{{"costs", a.out}, {"samples", used}, {"fits", rows}}.dump(1) << "\n";
    return;
  }
  std::printf("%-10s %-36s %7s %-6s %12s %12s %12s %9s\n", "kind", "op type", "ops", "from", "overhead us",
              "GFLOP/s", "GB/s", "median err");
  for (const auto& [key, fit] : table.fits) {
    const auto rate = [](double us_per_unit) {
      char text[32];
      if (us_per_unit > 0) std::snprintf(text, sizeof text, "%.2f", 1e-3 / us_per_unit);
      else std::snprintf(text, sizeof text, "-");
      return std::string(text);
    };
    std::printf("%-10s %-36s %7d %-6s %12.2f %12s %12s %8.1f%%\n", key.second.c_str(), key.first.c_str(),
                fit.samples, fit.from.c_str(), fit.overhead_us, rate(fit.us_per_flop).c_str(),
                rate(fit.us_per_byte).c_str(), 100 * median_error(fit, samples.at(key.second), key.first));
  }
  std::printf("samples        %d (op, device kind) entries matched to the graphs' ops\n", used);
  std::printf("written        %s\n", a.out.c_str());
}

}  // namespace

void add_costs_commands(CLI::App& app) {
  CLI::App* costs = app.add_subcommand("costs", "Work with measured op-cost tables");
  costs->require_subcommand(1);
  auto args = std::make_shared<CostsFitArgs>();
  CLI::App* f = costs->add_subcommand(
      "fit", "Fit per-op-type costs to a table's entries, so that ops it does not name are priced "
             "from the ops it measured (what aware calibrate --costs-out now writes itself)");
  f->add_option("--costs", args->costs, "The cost table (aware calibrate --costs-out)")->required();
  f->add_option("--graph", args->graphs,
                std::string("A graph the table was profiled from (repeatable). ") + graph_spec_help())
      ->required();
  f->add_option("-o,--out", args->out, "Write the table with its fits here")->required();
  f->add_option("--min-samples", args->min_samples,
                "Ops of one type (of two sizes or more) needed for the type's own fit; fewer take "
                "the pooled fit, scaled")
      ->capture_default_str()
      ->check(whole_range(2, 1000000));
  f->add_flag("--json", args->json, "Print the fits as JSON");
  f->callback([args] { run_costs_fit(*args); });
}

}  // namespace aware::cli
