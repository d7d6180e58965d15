// aware reproduce: the README's experiments as resumable cells, then one report.
// Argument parsing only: the plan, the cell launcher, the MPI cell server and the
// report are experiments/ (reproduce_run.h).
#include <memory>
#include <string>

#include "cli/cli_common.h"
#include "cli/cli_mpi.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "experiments/reproduce.h"
#include "experiments/reproduce_run.h"

namespace aware::cli {
namespace {

reproduce::Features features_here() {
  reproduce::Features f;
#ifdef AWARE_HAVE_RL
  f.rl = true;
#endif
#ifdef AWARE_HAVE_FUSION
  f.fusion = true;
#endif
  f.simgrid = EvaluatorRegistry::instance().has("simgrid");
  f.hw = EvaluatorRegistry::instance().has("cpu");
  return f;
}

}  // namespace

void add_reproduce_command(CLI::App& app) {
  auto a = std::make_shared<reproduce::RunRequest>();
  CLI::App* c = app.add_subcommand(
      "reproduce", "Run the README's experiments as resumable cells and write a report (DIR/REPORT.md)");
  c->add_option("--budget", a->budget, "smoke (minutes), small (the README's tables), paper (2,000 evaluations, 3 seeds)")
      ->capture_default_str();
  std::string only_help = "Tables, comma-separated: all";
  for (const std::string& t : reproduce::table_names()) only_help += ", " + t;
  c->add_option("--only", a->only, only_help)->capture_default_str();
  c->add_option("--seeds", a->seeds, "Seeds, comma-separated (default: the budget's)");
  c->add_option("--evals", a->evals,
                "Evaluations per search (>= 1), replacing the budget's (its cases stay; fusion keeps its own)")
      ->check(whole_range(0, 100000000));
  c->add_option("--jobs", a->jobs, "Cells run at once, each a process (default: the cores)")
      ->check(whole_range(0, 256));
  c->add_option("-o,--output", a->out, "Folder for the cells, REPORT.md and summary.json")->required();
  c->add_option("--gui", a->gui,
                "aware-gui, which draws the compare charts (default: found next to this binary or in the "
                "build tree; none: no figures at all, neither its nor aware-plot's)");
  c->add_flag("--list", a->list, "Print the cells (key, tables, command) and exit; runs nothing");
  c->add_flag("--report-only", a->report_only,
              "Write the report from the cells DIR holds, also another build's (the report says whose); runs "
              "nothing, changes no cell");
  c->add_flag("--pack", a->pack,
              "Move the cells' text files into DIR/cells.pack.json, which every later run and --report-only "
              "reads as they were (one file to keep in version control); runs nothing");
  c->add_flag("--unpack", a->unpack, "Write the packed files back into DIR/cells/ and remove the pack");
  c->add_flag("--recompute", a->recompute,
              "Run every cell again, also over results of another build");
  c->callback([a, c] {
    // Given but empty, or 0: not "the budget's", which is what leaving them out means.
    if (c->count("--seeds") > 0 && split_list(a->seeds).empty())
      throw ConfigError("--seeds '" + a->seeds +
                        "' names no seed: give seeds >= 1, comma-separated (e.g. 1,2,3), or leave it out for "
                        "the budget's");
    if (c->count("--evals") > 0 && a->evals == 0)
      throw ConfigError("--evals 0: give the evaluations per search (>= 1), or leave it out for the budget's");
    reproduce::RunRequest request = *a;
    request.features = features_here();
#ifdef AWARE_HAVE_MPI
    request.messenger = mpi_job();
#endif
    reproduce::run(request);
  });
}

}  // namespace aware::cli
