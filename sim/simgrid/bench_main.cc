// aware-simgrid-bench: evaluations per second of the simgrid evaluator's worker
// pool on a seeded random layered DAG.
//   aware-simgrid-bench [OPS=1000] [DEVICES=4] [EVALS=200] [WORKERS=0 (cores)]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "sim/simgrid/bench_inputs.h"
#include "sim/simgrid/simgrid_evaluator.h"

int main(int argc, char** argv) {
  using namespace aware;
  const int ops = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int devices = argc > 2 ? std::atoi(argv[2]) : 4;
  const int evals = argc > 3 ? std::atoi(argv[3]) : 200;
  SimGridOptions options;
  options.workers = argc > 4 ? std::atoi(argv[4]) : 0;
  const OpGraph graph = measured_layered_dag(ops, 1);
  const Cluster cluster = bench_star_cluster(devices);
  std::vector<Placement> placements;
  for (int i = 0; i < evals; ++i) placements.push_back(random_placement(graph, devices, 100 + i));
  SimGridEvaluator evaluator(options);
  // Warm-up: start the workers and send them the graph and the cluster.
  std::vector<Placement> warm(placements.begin(),
                              placements.begin() + std::min(evals, evaluator.options().workers));
  evaluator.evaluate_batch(graph, cluster, warm);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < evals; ++i) evaluator.evaluate(graph, cluster, placements[i]);
  const double serial_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t0 = std::chrono::steady_clock::now();
  const auto results = evaluator.evaluate_batch(graph, cluster, placements);
  const double batch_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%d ops, %d edges, %d devices, %d transfers (first placement)\n", ops,
              graph.num_edges(), devices, results.front().transfers);
  std::printf("evaluate():       %d evals in %.2f s = %.1f evals/s (one worker at a time)\n", evals,
              serial_s, evals / serial_s);
  std::printf("evaluate_batch(): %d evals in %.2f s = %.1f evals/s (%d workers)\n", evals, batch_s,
              evals / batch_s, evaluator.options().workers);
  return 0;
}
