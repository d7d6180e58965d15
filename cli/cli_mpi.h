// The MPI job, for the subcommands that run across ranks under mpirun (place,
// search, reproduce): brings experiments::mpi_job() and experiments::MpiJob into
// aware::cli where the build has MPI (AWARE_HAVE_MPI), and nothing otherwise, so
// each command keeps its MPI code under one #ifdef. No MPI header here: the job is
// experiments/mpi/mpi_job.h's; see there for ownership, threads and errors.
#pragma once

#ifdef AWARE_HAVE_MPI
#include "experiments/mpi/mpi_job.h"

namespace aware::cli {
using experiments::mpi_job;
using experiments::MpiJob;
}  // namespace aware::cli
#endif
