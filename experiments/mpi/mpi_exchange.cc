#include "experiments/mpi/mpi_exchange.h"

#include <mpi.h>

#include "experiments/mpi/mpi_wait.h"

#include <vector>

namespace aware {
namespace {

class MpiExchange final : public MpiChainExchange {
 public:
  MpiExchange(int rank, int size) : rank_(rank), size_(size) {}
  int chain() const override { return rank_; }
  int chains() const override { return size_; }

  double meeting_seconds() const override { return meeting_s_; }

  ChainMeeting meet(const ChainBest& mine) override {
    const double t0 = MPI_Wtime();
    const double local[3] = {mine.feasible ? 1.0 : 0.0, mine.step_us, mine.stop ? 1.0 : 0.0};
    std::vector<double> all(static_cast<size_t>(3 * size_));
    mpi::allgather(local, 3, MPI_DOUBLE, all.data(), "a meeting of the chains");
    std::vector<ChainBest> brought(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      brought[static_cast<size_t>(r)].feasible = all[static_cast<size_t>(3 * r)] != 0;
      brought[static_cast<size_t>(r)].step_us = all[static_cast<size_t>(3 * r + 1)];
      brought[static_cast<size_t>(r)].stop = all[static_cast<size_t>(3 * r + 2)] != 0;
    }
    ChainMeeting met = best_of(brought);
    int n = static_cast<int>(mine.placement.size());
    mpi::bcast(&n, 1, MPI_INT, met.from_chain, "a meeting of the chains");
    std::vector<int> devices(static_cast<size_t>(n));
    if (rank_ == met.from_chain)
      for (int op = 0; op < n; ++op) devices[static_cast<size_t>(op)] = mine.placement[op];
    mpi::bcast(devices.data(), n, MPI_INT, met.from_chain, "a meeting of the chains");
    met.best.placement = Placement(devices);
    meeting_s_ += MPI_Wtime() - t0;
    return met;
  }

 private:
  int rank_, size_;
  double meeting_s_ = 0;
};

}  // namespace

std::unique_ptr<MpiChainExchange> make_mpi_exchange() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::make_unique<MpiExchange>(rank, size);
}

}  // namespace aware
