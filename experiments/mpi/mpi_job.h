// The MPI job an `aware` process is a rank of, when it was started by mpirun
// (built with AWARE_WITH_MPI; Debian's Open MPI). MPI-free header.
//
// Under `mpirun -np N aware place --method anneal ...` every rank runs the same
// command; the search runs as N chains, one per rank, that meet over MPI
// (core/search_exchange.h); rank 0 alone prints and writes files. At start rank
// 0 broadcasts a hash of its command line and of its binary, and a rank whose
// own differs ends the job with an error. An error on any rank ends every rank
// (MPI_Abort) after printing it with the rank's number; a rank that dies is
// noticed by mpirun, which ends the others; a rank that hangs or is stopped is
// noticed by the others, whose collective waits end the job after
// AWARE_MPI_TIMEOUT seconds (default 300; 0: no limit).
#pragma once

#include <string>

#include "core/search_exchange.h"
#include "experiments/reproduce_run.h"
#ifdef AWARE_HAVE_RL
#include "agents/rl/trainer.h"
#endif

namespace aware::experiments {

class MpiJob : public reproduce::CellMessenger {
 public:
  virtual ~MpiJob() = default;
  int rank() const override = 0;
  int size() const override = 0;
  // This rank as one chain of a search (chain = rank, chains = size).
  virtual SearchExchange& exchange() = 0;
#ifdef AWARE_HAVE_RL
  // This rank as one process of data-parallel policy-gradient training.
  virtual rl::ParallelTraining& training() = 0;
#endif
  // Seconds this rank's chain spent in meetings so far.
  virtual double meeting_seconds() const = 0;
  // Point-to-point text messages (reproduce's cell queue): a blocking send; a
  // non-blocking look for a message with `tag` from any rank (true and the
  // message taken when one has arrived); a blocking receive from `from`, any tag.
  void send(int to, int tag, const std::string& text) override = 0;
  bool poll(int tag, int& from, std::string& text) override = 0;
  std::string receive(int from, int& tag) override = 0;
  // Prints `message` on this rank (prefixed "rank K: ") and ends every rank with `code`.
  [[noreturn]] virtual void abort(const std::string& message, int code) = 0;
};

// Joins the job when this process was started by mpirun (MPI's environment is
// present) and this build has MPI; checks that every rank runs the same command
// and binary. Returns null otherwise (a plain run: no MPI is initialised). Call
// once, first thing in main; the job lives until exit (MPI_Finalize at exit).
MpiJob* join_mpi_job(int argc, char** argv);

// The job joined by join_mpi_job, or null.
MpiJob* mpi_job();

}  // namespace aware::experiments
