// The parallel chain search under SimGrid's SMPI: one anneal chain per simulated
// node, with the same placer (agents/baselines, anneal as chains) and the same
// MPI exchange (experiments/mpi/mpi_exchange.cc) as
// `mpirun -np N aware place --method anneal`, compiled against SMPI's MPI and
// timed in simulated seconds. SMPI runs each rank's computation for real,
// measures it and charges it to the rank's simulated host; the meetings'
// allgather and broadcast cross the simulated network. scripts/mpi-scaling
// builds the platforms and runs it:
//   smpirun -np N -platform P.xml -hostfile H -no-privatize
//       --cfg=smpi/host-speed:1Gf build/experiments/libaware_smpi_chains.so
//       GRAPH CLUSTER EVALS_PER_CHAIN EXCHANGE_EVERY SEED
// Rank 0 prints one JSON object: ranks, evaluations, simulated_s, evals_per_s,
// meeting_s (the ranks' mean time in meetings), best step_us. Globals are
// shared by the ranks (-no-privatize): registration happens once; everything
// else a rank uses is its own.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "builtins/builtins.h"
#include "core/cluster.h"
#include "core/evaluator.h"
#include "core/formats.h"
#include "core/placer.h"
#include "datasets/load.h"
#include "experiments/mpi/mpi_exchange.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    if (argc != 6)
      throw aware::ConfigError("usage: smpi_chains GRAPH CLUSTER EVALS_PER_CHAIN EXCHANGE_EVERY SEED");
    aware::register_builtins();  // this build's minimal set: analytic and the baseline placers
    const aware::OpGraph graph = aware::load_graph(argv[1]);
    const aware::Cluster cluster = aware::load_cluster(argv[2]);
    const long long per_chain = std::atoll(argv[3]);
    std::unique_ptr<aware::Evaluator> evaluator = aware::EvaluatorRegistry::instance().create("analytic");
    std::unique_ptr<aware::MpiChainExchange> exchange = aware::make_mpi_exchange();
    aware::PlaceContext context;
    context.evaluator = evaluator.get();
    context.seed = static_cast<std::uint64_t>(std::atoll(argv[5]));
    context.budget_evals = per_chain * size;
    context.options["exchange_every"] = argv[4];
    context.exchange = size > 1 ? exchange.get() : nullptr;
    std::unique_ptr<aware::Placer> anneal = aware::PlacerRegistry::instance().create("anneal");
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    const aware::Placement best = anneal->place(graph, cluster, context);
    MPI_Barrier(MPI_COMM_WORLD);
    const double seconds = MPI_Wtime() - t0;
    // The ranks' mean time in meetings: what the chains spent not searching.
    double meeting = exchange->meeting_seconds(), meeting_sum = 0;
    MPI_Reduce(&meeting, &meeting_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double step_us = evaluator->evaluate(graph, cluster, best).step_time_us;
      const double evaluations = static_cast<double>(per_chain) * size;
      std::printf("{\"ranks\": %d, \"evaluations\": %.0f, \"simulated_s\": %.6f, \"evals_per_s\": %.1f, "
                  "\"meeting_s\": %.6f, \"step_us\": %.3f}\n",
                  size, evaluations, seconds, evaluations / seconds, meeting_sum / size, step_us);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
