// One chain per MPI rank (core/search_exchange.h) over MPI_COMM_WORLD: a
// meeting is one allgather of every rank's (feasible, step, stop), the same
// choice on every rank (best_of), and the winner's placement broadcast from it.
// Compiled into `aware` against Open MPI (cli/mpi_job.cc) and into the SMPI
// scaling program against SimGrid's MPI (experiments/mpi/smpi_chains.cc): the
// same code, so what SMPI projects is what mpirun runs. MPI-free header.
#pragma once

#include <memory>

#include "core/search_exchange.h"

namespace aware {

class MpiChainExchange : public SearchExchange {
 public:
  // Wall-clock seconds this rank spent in meet() (waiting for the others and
  // exchanging): the parallel overhead of its chain. Under SMPI, simulated seconds.
  virtual double meeting_seconds() const = 0;
};

// MPI must be initialised; the exchange is valid until MPI_Finalize.
std::unique_ptr<MpiChainExchange> make_mpi_exchange();

}  // namespace aware
