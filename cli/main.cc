// `aware`: the workbench's command line. Every subcommand has --help; those that
// print results also take --json and then print one JSON object.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "builtins/builtins.h"
#include "cli/cli_common.h"
#include "core/errors.h"
#include "core/progress.h"
#ifdef AWARE_HAVE_MPI
#include "experiments/mpi/mpi_job.h"
#endif

namespace {

// One error line on stderr, after ending a progress line left open on a
// terminal; with --json also {"error": ...} on stdout, so that a JSON consumer
// has something to parse.
void report_error(const std::string& message, bool json) {
  if (aware::stderr_progress_line_open()) std::fputc('\n', stderr);
  std::fprintf(stderr, "error: %s\n", message.c_str());
  if (json) std::printf("%s\n", nlohmann::json({{"error", message}}).dump().c_str());
}

// Every floating option of every command refuses nan and inf: CLI11 parses both,
// and a range check lets nan through (each comparison with it is false). One pass
// over the tree, so that an option added later has the check too.
void refuse_non_finite_numbers(CLI::App& app) {
  const CLI::Validator finite(
      [](std::string& input) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(input.c_str(), &end);
        if (!input.empty() && *end == '\0' && !std::isfinite(value))
          return "'" + input + "' is not a finite number";
        return "";  // a finite number, or not a number at all (the conversion says so)
      },
      "");
  for (CLI::Option* option : app.get_options())
    if (option->get_type_name() == "FLOAT") option->check(finite);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_non_finite_numbers(*sub);
}

// "aware graph build --help": the subcommands named on the command line.
std::string help_command(CLI::App& app, int argc, char** argv) {
  std::string command = "aware";
  CLI::App* at = &app;
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    CLI::App* sub = nullptr;
    for (CLI::App* s : at->get_subcommands([](CLI::App*) { return true; }))
      if (s->get_name() == argv[i]) sub = s;
    if (sub == nullptr) break;
    command += std::string(" ") + argv[i];
    at = sub;
  }
  return command + " --help";
}

bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--json") return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const bool json = wants_json(argc, argv);
#ifdef AWARE_HAVE_MPI
  // Under mpirun: join the job (every rank must run the same command), and let
  // an error on any rank end them all.
  aware::experiments::MpiJob* job = aware::experiments::join_mpi_job(argc, argv);
  const auto fail = [job, json](const std::string& message, int code) {
    if (job != nullptr && job->size() > 1) job->abort(message, code);
    report_error(message, json);
    return code;
  };
#else
  const auto fail = [json](const std::string& message, int code) {
    report_error(message, json);
    return code;
  };
  // Started by mpirun, but built without MPI: N copies would each run the whole
  // command and write the same files.
  for (const char* size : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* n = std::getenv(size); n != nullptr && std::atoi(n) > 1)
      return fail("started by mpirun, but this aware was built without MPI (install libopenmpi-dev and rebuild: "
                  "AWARE_WITH_MPI)",
                  2);
#endif
#ifdef AWARE_HAVE_MPI
  // The commands that share their work over ranks; any other would run N times.
  if (job != nullptr && job->size() > 1 && argc > 1) {
    const std::string command = argv[1];
    if (command != "place" && command != "search" && command != "pretrain" && command != "reproduce")
      return fail("'" + command + "' does not run across MPI ranks (place, search, pretrain and reproduce do): "
                  "run it without mpirun",
                  2);
  }
#endif
  aware::register_builtins();
  CLI::App app{"aware: automatic parallel-strategy search for deep-learning training steps"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  aware::cli::add_graph_commands(app);
  aware::cli::add_cluster_commands(app);
  aware::cli::add_simulate_command(app);
  aware::cli::add_strategy_commands(app);
  aware::cli::add_bench_commands(app);
  aware::cli::add_list_command(app);
  aware::cli::add_costs_commands(app);
  aware::cli::add_bound_command(app);
  aware::cli::add_trace_commands(app);
#ifdef AWARE_HAVE_BASELINES
  aware::cli::add_place_commands(app);
  aware::cli::add_reproduce_command(app);
  aware::cli::add_mesh_commands(app);
#endif
#ifdef AWARE_HAVE_HW
  aware::cli::add_hw_commands(app);
#endif
#ifdef AWARE_HAVE_MEASURE
  aware::cli::add_measure_command(app);
#endif
#ifdef AWARE_HAVE_FUSION
  aware::cli::add_fuse_commands(app);
#endif
#ifdef AWARE_HAVE_RL
  aware::cli::add_search_commands(app);
#endif
  refuse_non_finite_numbers(app);
  // CLI11 would answer "A subcommand is required" for a misspelt one: name it.
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      found = found || sub->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found)
      return fail("unknown command '" + std::string(argv[1]) + "' (known: " + known + "; see aware --help)", 1);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and friends exit 0 through here and print what they print. A real
    // parse error is one line like every other error, naming the command's help.
    if (e.get_exit_code() == 0) return app.exit(e);
    return fail(std::string(e.what()) + " (see " + help_command(app, argc, argv) + ")", e.get_exit_code());
  } catch (const aware::Error& e) {
    return fail(e.what(), 1);
  } catch (const std::exception& e) {
    return fail(e.what(), 2);
  }
  return 0;
}
