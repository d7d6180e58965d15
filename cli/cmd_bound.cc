// aware bound: the best certified lower bound on the step of any placement of a
// graph on a cluster (core/bounds.h; with CBC, the MILP's too: agents/exact).
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/cli_common.h"
#include "core/bounds.h"
#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/cost_table.h"
#include "core/errors.h"
#include "datasets/load.h"
#ifdef AWARE_HAVE_EXACT
#include "agents/exact/milp.h"
#endif

namespace aware::cli {
namespace {

struct BoundArgs {
  std::string graph;
  std::string cluster = "preset:k40x4";
  std::string costs;
  double milp_seconds = 10;
  bool json = false;
  bool solver_free = false;
};

void run_bound(const BoundArgs& a) {
  const OpGraph graph = load_graph(a.graph);
  const Cluster cluster = load_cluster(a.cluster);
  CostTable table;
  if (!a.costs.empty()) table = read_cost_table_file(a.costs);
  const OpCostMatrix costs(graph, cluster, a.costs.empty() ? nullptr : &table);
  CertifiedBound bound = certified_bound(graph, cluster, costs, least_stretch(table));
#ifdef AWARE_HAVE_EXACT
  if (a.solver_free) {
    bound.add({"lp", 0, "not run (--solver-free)", false});
    bound.add({"milp", 0, "not run (--solver-free)", false});
  } else {
  const exact::RelaxationBounds relaxed =
      exact::relaxation_bounds(graph, cluster, costs, a.milp_seconds, bound.best_us());
  bound.add(relaxed.lp);
  bound.add(relaxed.milp);
  }
#else
  bound.add({"milp", 0, "not built (needs COIN-OR CBC: coinor-libcbc-dev)", false});
#endif
  if (a.json) {
    nlohmann::json terms = nlohmann::json::array();
    for (const BoundTerm& t : bound.terms)
      terms.push_back({{"name", t.name}, {"us", t.applies ? nlohmann::json(t.us) : nlohmann::json()},
                       {"applies", t.applies}, {"detail", t.detail}});
    std::cout << nlohmann::json{{"graph", graph.name()},       {"cluster", cluster.name()},
                                {"ops", graph.num_ops()},       {"devices", cluster.num_devices()},
                                {"bound_us", bound.best_us()},  {"binding", bound.binding()},
                                {"terms", terms}}
                     .dump(1)
              << "\n";
    return;
  }
  std::printf("graph    %s (%d ops) on %s (%d devices)\n", graph.name().c_str(), graph.num_ops(),
              cluster.name().c_str(), cluster.num_devices());
  for (const BoundTerm& t : bound.terms) {
    if (t.applies)
      std::printf("%-14s %12.3f ms  %s%s\n", t.name.c_str(), t.us / 1000, t.detail.c_str(),
                  t.name == bound.binding() ? "  <- binding" : "");
    else
      std::printf("%-14s %12s     %s\n", t.name.c_str(), "-", t.detail.c_str());
  }
  std::printf("bound    %.3f ms (%s): no placement's step in the analytic simulator is below it\n",
              bound.best_us() / 1000, bound.binding().c_str());
}

}  // namespace

void add_bound_command(CLI::App& app) {
  auto args = std::make_shared<BoundArgs>();
  CLI::App* b = app.add_subcommand(
      "bound", "The best certified lower bound on any placement's step (analytic simulator, "
               "contention mode), with each bound and which one binds (docs/bounds.md)");
  b->add_option("graph", args->graph, graph_spec_help())->required();
  b->add_option("--cluster", args->cluster, "Cluster preset or file")->capture_default_str();
  b->add_option("--costs", args->costs, "Price ops from this measured cost table");
  b->add_option("--milp-seconds", args->milp_seconds,
                "Seconds for the MILP's proven bound (0: the LP relaxation only)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  b->add_flag("--json", args->json, "Print the terms as JSON");
  b->add_flag("--solver-free", args->solver_free,
              "Only the solver-free terms (seconds on graphs where the LP takes minutes)");
  b->callback([args] { run_bound(*args); });
}

}  // namespace aware::cli
