#include "experiments/mpi/mpi_wait.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace aware::mpi {
namespace {
double g_limit_s = 0;
}  // namespace

void set_wait_limit(double seconds) { g_limit_s = seconds > 0 ? seconds : 0; }
double wait_limit() { return g_limit_s; }

void wait(MPI_Request& request, const char* what) {
  if (g_limit_s <= 0) {
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    return;
  }
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  // Polled, not blocked on: the first tests back to back (a meeting of ranks
  // that arrive together costs microseconds), then with sleeps growing to 1 ms.
  int done = 0;
  for (long tests = 0;; ++tests) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (tests < 2000) continue;
    const double waited = std::chrono::duration<double>(clock::now() - start).count();
    if (waited > g_limit_s) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      std::fprintf(stderr,
                   "\nerror: rank %d: no answer from the other ranks in %g s (%s): a rank has hung or "
                   "been stopped; ending the job (AWARE_MPI_TIMEOUT sets the limit)\n",
                   rank, g_limit_s, what);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
      std::_Exit(3);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(tests < 4000 ? 10 : tests < 6000 ? 100 : 1000));
  }
}

namespace {
// The blocking call without a limit; with one, the non-blocking call and wait().
template <typename Blocking, typename Start>
void limited(Blocking blocking, Start start, const char* what) {
  if (g_limit_s <= 0) {
    blocking();
    return;
  }
  MPI_Request request;
  start(&request);
  wait(request, what);
}
}  // namespace

void allgather(const void* send, int count, MPI_Datatype type, void* receive, const char* what) {
  limited([&] { MPI_Allgather(send, count, type, receive, count, type, MPI_COMM_WORLD); },
          [&](MPI_Request* r) { MPI_Iallgather(send, count, type, receive, count, type, MPI_COMM_WORLD, r); }, what);
}

void bcast(void* buffer, int count, MPI_Datatype type, int root, const char* what) {
  limited([&] { MPI_Bcast(buffer, count, type, root, MPI_COMM_WORLD); },
          [&](MPI_Request* r) { MPI_Ibcast(buffer, count, type, root, MPI_COMM_WORLD, r); }, what);
}

void reduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, int root,
            const char* what) {
  limited([&] { MPI_Reduce(send, receive, count, type, op, root, MPI_COMM_WORLD); },
          [&](MPI_Request* r) { MPI_Ireduce(send, receive, count, type, op, root, MPI_COMM_WORLD, r); }, what);
}

void allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, const char* what) {
  limited([&] { MPI_Allreduce(send, receive, count, type, op, MPI_COMM_WORLD); },
          [&](MPI_Request* r) { MPI_Iallreduce(send, receive, count, type, op, MPI_COMM_WORLD, r); }, what);
}

void gatherv(const void* send, int count, MPI_Datatype type, void* receive, const int* counts,
             const int* displacements, int root, const char* what) {
  limited([&] { MPI_Gatherv(send, count, type, receive, counts, displacements, type, root, MPI_COMM_WORLD); },
          [&](MPI_Request* r) {
            MPI_Igatherv(send, count, type, receive, counts, displacements, type, root, MPI_COMM_WORLD, r);
          },
          what);
}

void gather(const void* send, int count, MPI_Datatype type, void* receive, int root, const char* what) {
  limited([&] { MPI_Gather(send, count, type, receive, count, type, root, MPI_COMM_WORLD); },
          [&](MPI_Request* r) { MPI_Igather(send, count, type, receive, count, type, root, MPI_COMM_WORLD, r); },
          what);
}

}  // namespace aware::mpi
