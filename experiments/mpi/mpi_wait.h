// MPI's collectives with a limit on the wait: a rank that hangs or is stopped
// (not one that dies: mpirun notices those) would otherwise keep the others
// inside a collective for ever. Shared by `aware` (Open MPI) and the SMPI
// scaling program; includes <mpi.h>, so only MPI code includes it.
#pragma once

#include <mpi.h>

namespace aware::mpi {

// Seconds a rank waits for the others in one collective before it ends the
// job. 0 (the default, and SMPI's: simulated time must not be polled against
// the wall clock) calls the blocking collectives, without a limit.
void set_wait_limit(double seconds);
double wait_limit();

// Waits for `request`. Past the limit: prints "error: rank K: no answer from the
// other ranks in S s (<what>): ..." and ends every rank (MPI_Abort, exit code 3).
void wait(MPI_Request& request, const char* what);

// MPI_COMM_WORLD collectives, blocking or non-blocking + wait() by the limit.
void allgather(const void* send, int count, MPI_Datatype type, void* receive, const char* what);
void bcast(void* buffer, int count, MPI_Datatype type, int root, const char* what);
void reduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, int root,
            const char* what);
void allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, const char* what);
void gatherv(const void* send, int count, MPI_Datatype type, void* receive, const int* counts,
             const int* displacements, int root, const char* what);
void gather(const void* send, int count, MPI_Datatype type, void* receive, int root, const char* what);

}  // namespace aware::mpi
