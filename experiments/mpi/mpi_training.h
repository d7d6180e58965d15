// Data-parallel policy-gradient training over MPI_COMM_WORLD
// (rl::ParallelTraining): gradients summed on rank 0 and broadcast, so every
// rank gets the same bits; every wait limited as experiments/mpi/mpi_wait.h
// says. Compiled into `aware` against Open MPI (cli/mpi_job.cc) and into the
// SMPI projection of the training (experiments/mpi/smpi_training.cc): the same
// collectives in both. MPI-free header; MPI must be initialised.
#pragma once

#include <memory>

#include "agents/rl/trainer.h"

namespace aware {

std::unique_ptr<rl::ParallelTraining> make_mpi_training();

}  // namespace aware
