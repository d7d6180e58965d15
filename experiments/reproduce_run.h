// `aware reproduce` as a library call: plan the cells of the README's tables,
// run those not finished yet as child processes of the calling binary (each
// `aware place|search|... --json`, in the report's folder, its output renamed
// into DIR/cells/KEY.json when whole), optionally spread over the processes of
// an MPI job, then write DIR/REPORT.md, DIR/report.html and DIR/summary.json.
//
// A stopped run keeps every finished cell and a rerun skips them. DIR/manifest.json
// names the build (a hash of the calling binary): cells of another build are
// refused unless `recompute`. Figures are drawn by aware-plot and aware-gui,
// found next to the binary or in the build tree. Not thread-safe: one run per
// process (it forks).
#pragma once

#include <string>

#include "experiments/reproduce.h"

namespace aware::reproduce {

// Point-to-point text messages between the processes of a job (an MPI job's
// ranks): the cell queue of a run spread over several machines. experiments/mpi
// implements it over MPI.
class CellMessenger {
 public:
  virtual ~CellMessenger() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // A blocking send; a non-blocking look for a message with `tag` from any rank
  // (true and the message taken when one has arrived); a blocking receive from
  // `from`, any tag.
  virtual void send(int to, int tag, const std::string& text) = 0;
  virtual bool poll(int tag, int& from, std::string& text) = 0;
  virtual std::string receive(int from, int& tag) = 0;
};

struct RunRequest {
  std::string budget = "smoke";
  std::string only = "all";
  std::string seeds;  // empty: the budget's
  int jobs = 0;       // cells at once here; 0: the cores
  std::string out;    // DIR
  bool recompute = false;
  std::string gui;    // aware-gui for the figures: empty finds it; "none": no figures
  bool list = false;  // print the plan (key, tables, command) and run nothing
  bool report_only = false;
  bool pack = false;    // move DIR/cells' text files into DIR/cells.pack.json (cell_pack.h)
  bool unpack = false;  // and back
  long long evals = 0;  // 0: the budget's
  Features features;    // what the calling binary can run
  CellMessenger* messenger = nullptr;  // the job's other processes, or null
};

// Runs the request; on a rank other than 0 of a job, serves rank 0's cells until
// told to stop. Throws ConfigError for bad arguments or a folder of another
// build, Error when cells failed (after the report is written).
void run(const RunRequest& request);

// A rank other than 0: runs the cells rank 0 sends, one at a time, until told to stop.
void serve_cells(CellMessenger& job);

}  // namespace aware::reproduce
