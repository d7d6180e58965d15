// The learned agents' data-parallel training projected with SimGrid's SMPI:
// each simulated node plays its share of every update's episodes (charged as
// computation: the seconds per episode measured by a one-process `aware search`
// on this machine) and then meets the others through the same collectives, in
// the same order, as the trainer under mpirun (experiments/mpi/mpi_training.cc):
// the learning rate's maximum, the average of every gradient (PARAMETERS
// floats, summed on rank 0 and broadcast), the curve's job-wide evaluations and
// best, and whether to go on. LibTorch is not
// loaded: the networks' work is the measured time, the exchange is the real
// code. scripts/mpi-scaling measures the inputs and runs it:
//   smpirun -np N -platform P.xml -hostfile H -no-privatize
//       --cfg=smpi/host-speed:1Gf build/experiments/libaware_smpi_training.so
//       PARAMETERS EPISODE_SECONDS EPISODES_PER_UPDATE EVALS_PER_RANK
// Each rank plays ceil(E / N) episodes an update (at least one, as the trainer
// does) and EVALS_PER_RANK evaluations in all (weak scaling: one evaluation an
// episode, as the Aware and Hierarchical agents make). Rank 0 prints one JSON
// object: ranks, evaluations, updates, simulated_s, evals_per_s, exchange_s
// (the ranks' mean time in the collectives).
#include <mpi.h>
#include <smpi/smpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "core/errors.h"
#include "experiments/mpi/mpi_training.h"

namespace {

double positive(const char* text, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0) || !std::isfinite(v))
    throw aware::ConfigError(std::string(what) + " must be a positive number, got '" + text + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    if (argc != 5)
      throw aware::ConfigError("usage: smpi_training PARAMETERS EPISODE_SECONDS EPISODES_PER_UPDATE EVALS_PER_RANK");
    const auto parameters = static_cast<size_t>(positive(argv[1], "PARAMETERS"));
    const double episode_s = positive(argv[2], "EPISODE_SECONDS");
    const int episodes = static_cast<int>(positive(argv[3], "EPISODES_PER_UPDATE"));
    const auto evals_per_rank = static_cast<long long>(positive(argv[4], "EVALS_PER_RANK"));
    const int mine = std::max(1, (episodes + size - 1) / size);
    const long long updates = std::max(1LL, evals_per_rank / mine);
    std::unique_ptr<aware::rl::ParallelTraining> training = aware::make_mpi_training();
    std::vector<float> gradient(parameters, 1e-3f * static_cast<float>(rank + 1));
    double exchange_s = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (long long u = 0; u < updates; ++u) {
      smpi_execute(mine * episode_s);  // this rank's episodes: forward passes, evaluations, backward
      const double t = MPI_Wtime();
      training->maximum(static_cast<double>(u) / static_cast<double>(updates));  // the learning rate
      training->average(gradient);
      training->sum(static_cast<double>((u + 1) * mine));  // the curve: the job's evaluations
      training->minimum(1.0 / static_cast<double>(u + 1));  // and its best
      training->maximum(u + 1 < updates ? 1 : 0);  // go on
      exchange_s += MPI_Wtime() - t;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double seconds = MPI_Wtime() - t0;
    const double exchange_sum = training->sum(exchange_s);
    if (rank == 0) {
      const double evaluations = static_cast<double>(updates) * mine * size;
      std::printf("{\"ranks\": %d, \"evaluations\": %.0f, \"updates\": %lld, \"episodes_per_rank\": %d, "
                  "\"simulated_s\": %.6f, \"evals_per_s\": %.2f, \"exchange_s\": %.6f}\n",
                  size, evaluations, updates, mine, seconds, evaluations / seconds, exchange_sum / size);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    // Every rank reads the same arguments, so every rank ends here: a clean
    // finish and a non-zero exit (SMPI's MPI_Abort leaves smpirun's status at 0).
    if (rank == 0) std::fprintf(stderr, "error: %s\n", e.what());
    MPI_Finalize();
    return 1;
  }
  MPI_Finalize();
  return 0;
}
