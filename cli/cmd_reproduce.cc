// aware reproduce: the README's experiments as resumable cells, run as child
// processes of this binary, then one report.
//
// Each cell (table, model, cluster, method, seed, evaluations) is one
// `aware place ... --json` run whose output lands in DIR/cells/KEY.json by
// rename, so a run that is stopped keeps every finished cell and a rerun skips
// them. DIR/manifest.json names the build (a hash of this binary): results of
// another build are refused unless --recompute, which runs every cell again.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "agents/baselines/compare.h"
#include "cli/cli_common.h"
#include "core/errors.h"
#include "core/formats.h"

namespace aware::cli {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_json_file(const std::string& path) {
  return parse_json_text(read_text_file(path), path);
}

struct ReproduceArgs {
  std::string budget = "smoke";
  std::string only = "all";
  std::string seeds;  // empty: the budget's
  int jobs = 0;       // 0: the cores
  std::string out;
  bool recompute = false;
  std::string gui;  // aware-gui for the figures: empty finds it next to this binary; "none" skips
};

struct Cell {
  std::string table, model, cluster, method;
  int seed = 1;
  long long evals = 0;
  std::string key() const {
    return table + "__" + model + "__" + cluster + "__" + method + "__s" + std::to_string(seed) +
           "__e" + std::to_string(evals);
  }
  std::vector<std::string> args() const {
    return {"place", "--graph", "zoo:" + model, "--cluster", "preset:" + cluster, "--method", method,
            "--budget-evals", std::to_string(evals), "--seed", std::to_string(seed), "--json"};
  }
};

// What each budget runs. "compare" is the README's compare table: each placer on
// the zoo models over K40 boxes, against the lower bound.
struct Budget {
  std::vector<std::string> models, clusters, methods;
  long long evals;
  std::vector<int> seeds;
};

Budget budget_for(const std::string& name) {
  // The README's compare table: `aware compare --methods all,fused-m-etf,fused-anneal`.
  const std::vector<std::string> placers = {"single", "round-robin", "random",        "expert",
                                            "metis",  "m-topo",      "heft",          "m-etf",
                                            "m-sct",  "random-search", "anneal",      "fused-m-etf",
                                            "fused-anneal"};
  if (name == "smoke")
    return {{"resnet50", "nmt2"}, {"k40x4"}, {"single", "m-topo", "m-etf", "heft", "anneal"}, 50, {1}};
  const std::vector<std::string> models = {"inception_v3", "resnet50", "nasnet", "nmt4", "gnmt"};
  if (name == "small") return {models, {"k40x2", "k40x4", "k40x8"}, placers, 100, {1}};
  if (name == "paper") return {models, {"k40x2", "k40x4", "k40x8"}, placers, 2000, {1, 2, 3}};
  throw ConfigError("--budget: '" + name + "' unknown (known: smoke, small, paper)");
}

const std::vector<std::string>& table_names() {
  static const std::vector<std::string> names = {"compare"};
  return names;
}


std::vector<Cell> plan(const ReproduceArgs& a) {
  const Budget b = budget_for(a.budget);
  const std::vector<int> seeds = a.seeds.empty() ? b.seeds : parse_int_list(a.seeds, "--seeds", 1, 1 << 30, "a seed >= 1 (e.g. 1,2,3)");
  std::set<std::string> wanted;
  for (const std::string& t : split_list(a.only)) {
    if (t == "all") {
      wanted.insert(table_names().begin(), table_names().end());
      continue;
    }
    if (std::find(table_names().begin(), table_names().end(), t) == table_names().end())
      throw ConfigError("--only: table '" + t + "' unknown (known: all, compare)");
    wanted.insert(t);
  }
  if (wanted.empty()) throw ConfigError("--only: give at least one table (e.g. compare)");
  std::vector<Cell> cells;
  for (const std::string& cluster : b.clusters)
    for (const std::string& model : b.models)
      for (const std::string& method : b.methods)
        for (int seed : seeds) cells.push_back({"compare", model, cluster, method, seed, b.evals});
  return cells;
}

// FNV-1a of this binary: the same build gives the same id.
std::string build_id() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::uint64_t h = 1469598103934665603ull;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buffer[static_cast<size_t>(i)]);
      h *= 1099511628211ull;
    }
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// Checks or writes DIR/manifest.json; throws when DIR holds another build's cells.
void check_manifest(const fs::path& dir, const std::string& id, bool recompute) {
  const fs::path manifest = dir / "manifest.json";
  if (fs::exists(manifest) && !recompute) {
    const nlohmann::json m = read_json_file(manifest.string());
    const std::string had = m.value("build", "");
    if (had != id)
      throw ConfigError(dir.string() + ": holds results of another build (" + had + ", this is " + id +
                        "): use another -o folder, or --recompute to run every cell again");
  }
  write_json_file(manifest.string(), {{"tool", "aware reproduce"}, {"build", id}});
}

struct Running {
  pid_t pid;
  Cell cell;
  fs::path tmp, err;
};

// Starts `aware ARGS` with stdout to `tmp` and stderr to `err`. The argv is
// built before fork(), so the child only opens, dups and execs.
pid_t spawn(const std::vector<std::string>& args, const fs::path& tmp, const fs::path& err) {
  std::vector<std::string> copy = args;
  std::string self = "aware";
  std::vector<char*> argv;
  argv.push_back(self.data());
  for (std::string& s : copy) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Error("reproduce: fork failed");
  if (pid == 0) {
    const int o = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  return pid;
}

std::string first_line_of(const fs::path& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line))
    if (line.rfind("error:", 0) == 0) return line;
    else if (!line.empty()) last = line;
  return last;
}

struct Counts {
  int computed = 0, skipped = 0, failed = 0;
};

Counts run_cells(const std::vector<Cell>& cells, const fs::path& dir, int jobs, bool recompute) {
  const fs::path cell_dir = dir / "cells";
  fs::create_directories(cell_dir);
  for (const auto& entry : fs::directory_iterator(cell_dir))  // a stopped run's partial outputs
    if (entry.path().filename().string().rfind(".", 0) == 0) fs::remove(entry.path());
  Counts counts;
  std::vector<Cell> todo;
  for (const Cell& c : cells) {
    if (!recompute && fs::exists(cell_dir / (c.key() + ".json"))) {
      ++counts.skipped;
    } else {
      todo.push_back(c);
    }
  }
  std::fprintf(stderr, "reproduce: %zu cells, %d finished before, %zu to run on %d job%s\n",
               cells.size(), counts.skipped, todo.size(), jobs, jobs == 1 ? "" : "s");
  const auto begin = std::chrono::steady_clock::now();
  std::vector<Running> running;
  size_t next = 0, done = 0;
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && static_cast<int>(running.size()) < jobs) {
      const Cell& c = todo[next++];
      const fs::path tmp = cell_dir / ("." + c.key() + ".tmp");
      const fs::path err = cell_dir / ("." + c.key() + ".err");
      running.push_back({spawn(c.args(), tmp, err), c, tmp, err});
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) break;
    auto it = std::find_if(running.begin(), running.end(), [&](const Running& r) { return r.pid == pid; });
    if (it == running.end()) continue;
    const Running r = *it;
    running.erase(it);
    ++done;
    const std::string key = r.cell.key();
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok) {
      try {
        read_json_file(r.tmp.string());  // a whole JSON object, or the cell failed
      } catch (const Error&) {
        ok = false;
      }
    }
    if (ok) {
      fs::rename(r.tmp, cell_dir / (key + ".json"));
      fs::remove(r.err);
      fs::remove(cell_dir / (key + ".failed.txt"));
      ++counts.computed;
    } else {
      fs::rename(r.err, cell_dir / (key + ".failed.txt"));
      fs::remove(r.tmp);
      ++counts.failed;
      std::fprintf(stderr, "reproduce: cell %s failed: %s\n", key.c_str(),
                   first_line_of(cell_dir / (key + ".failed.txt")).c_str());
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    const double eta = elapsed / static_cast<double>(done) * static_cast<double>(todo.size() - done);
    std::fprintf(stderr, "[%zu/%zu] %s  %.0f s elapsed, eta %.0f s\n", done + counts.skipped,
                 cells.size(), key.c_str(), elapsed, eta);
  }
  return counts;
}

// The compare cells of one cluster as a CompareTable (what `aware compare
// --format json` writes), for aware-gui's chart: rows are models, results in
// method order; a missing cell is an "error" result.
CompareTable compare_table_of(const std::vector<Cell>& cells, const fs::path& dir,
                              const std::string& cluster) {
  CompareTable table;
  std::vector<std::string> models;
  for (const Cell& c : cells) {
    if (c.cluster != cluster) continue;
    if (std::find(table.methods.begin(), table.methods.end(), c.method) == table.methods.end())
      table.methods.push_back(c.method);
    if (std::find(models.begin(), models.end(), c.model) == models.end()) models.push_back(c.model);
    table.budget_evals = c.evals;
    table.seed = static_cast<std::uint64_t>(c.seed);
  }
  for (const std::string& model : models) {
    CompareRow row;
    row.model = model;
    row.cluster = cluster;
    for (const std::string& method : table.methods) {
      MethodResult r;
      r.method = method;
      r.status = "error";
      double sum = 0;
      int n = 0;
      for (const Cell& c : cells) {
        if (c.cluster != cluster || c.model != model || c.method != method) continue;
        const fs::path file = dir / "cells" / (c.key() + ".json");
        if (!fs::exists(file)) continue;
        const nlohmann::json j = read_json_file(file.string());
        if (j.contains("devices") && j.at("devices").is_array())
          row.devices = static_cast<int>(j.at("devices").size());
        row.lower_bound_us = j.value("lower_bound_us", 0.0);
        if (table.evaluator.empty()) table.evaluator = j.value("evaluator", "");
        if (!j.value("feasible", false)) {
          r.status = "oom";
          continue;
        }
        sum += j.value("step_time_us", 0.0);
        ++n;
      }
      if (n > 0) {
        r.status = "ok";
        r.step_time_us = sum / n;
        if (row.winner.empty() || r.step_time_us < row.results[static_cast<size_t>(
                                       std::find(table.methods.begin(), table.methods.end(), row.winner) -
                                       table.methods.begin())].step_time_us)
          row.winner = method;
      }
      row.results.push_back(r);
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

// The compare table per cluster, from the same tables the charts are drawn from:
// models down, methods across, step time in ms (mean over seeds), the lower
// bound, and the best method's time in bold.
std::string compare_report(const std::vector<Cell>& cells, const fs::path& dir) {
  std::vector<std::string> clusters;
  for (const Cell& c : cells)
    if (std::find(clusters.begin(), clusters.end(), c.cluster) == clusters.end()) clusters.push_back(c.cluster);
  std::ostringstream out;
  out << "## compare: step time (ms) per placer\n\n";
  out << "Each cell is `aware place --graph zoo:MODEL --cluster preset:CLUSTER --method METHOD "
         "--budget-evals "
      << (cells.empty() ? 0 : cells.front().evals)
      << " --seed S --json`; the mean over seeds, the best in bold, `-` where the cell failed or "
         "ran out of memory.\n\n";
  for (const std::string& cluster : clusters) {
    const CompareTable table = compare_table_of(cells, dir, cluster);
    out << "### " << cluster << "\n\n| model | lower bound |";
    for (const std::string& m : table.methods) out << " " << m << " |";
    out << "\n|---|---:|";
    for (size_t i = 0; i < table.methods.size(); ++i) out << "---:|";
    out << "\n";
    char buffer[64];
    for (const CompareRow& row : table.rows) {
      double best = 1e300;
      for (const MethodResult& r : row.results)
        if (r.ok()) best = std::min(best, r.step_time_us);
      if (row.lower_bound_us > 0) {
        std::snprintf(buffer, sizeof buffer, "%.1f", row.lower_bound_us / 1000);
      } else {
        std::snprintf(buffer, sizeof buffer, "-");
      }
      out << "| " << row.model << " | " << buffer << " |";
      for (const MethodResult& r : row.results) {
        if (!r.ok()) {
          out << " - |";
          continue;
        }
        std::snprintf(buffer, sizeof buffer, r.step_time_us == best ? "**%.1f**" : "%.1f",
                      r.step_time_us / 1000);
        out << " " << buffer << " |";
      }
      out << "\n";
    }
    out << "\n";
  }
  return out.str();
}

// aware-gui next to this binary (an install) or in the build tree's gui/.
std::string find_gui(const std::string& given) {
  if (given == "none") return "";
  if (!given.empty()) {
    if (!fs::exists(given)) throw ConfigError("--gui " + given + ": no such file");
    return given;
  }
  const fs::path self = fs::read_symlink("/proc/self/exe");
  for (const fs::path& candidate : {self.parent_path() / "aware-gui", self.parent_path().parent_path() / "gui" / "aware-gui"})
    if (fs::exists(candidate)) return candidate.string();
  return "";
}

// Draws DIR/figures/compare-CLUSTER.png with aware-gui's compare view; returns
// the report's lines about the figures.
std::string draw_compare_figures(const std::vector<Cell>& cells, const fs::path& dir, const std::string& gui) {
  std::vector<std::string> clusters;
  for (const Cell& c : cells)
    if (std::find(clusters.begin(), clusters.end(), c.cluster) == clusters.end()) clusters.push_back(c.cluster);
  std::ostringstream out;
  fs::create_directories(dir / "figures");
  for (const std::string& cluster : clusters) {
    const fs::path json = dir / ("compare-" + cluster + ".json");
    write_json_file(json.string(), compare_to_json(compare_table_of(cells, dir, cluster)));
    if (gui.empty()) continue;
    const fs::path png = dir / "figures" / ("compare-" + cluster + ".png");
    const fs::path log = dir / "figures" / (".compare-" + cluster + ".log");
    const pid_t pid = fork();
    if (pid < 0) throw Error("reproduce: fork failed");
    if (pid == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      execl(gui.c_str(), "aware-gui", "--compare-table", json.c_str(), "--view", "compare",
            "--size", "1400x900", "--screenshot", png.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && fs::exists(png)) {
      fs::remove(log);
      out << "![compare on " << cluster << "](figures/compare-" << cluster << ".png)\n\n";
    } else {
      out << "(The figure for " << cluster << " was not drawn: " << first_line_of(log) << ")\n\n";
    }
  }
  if (gui.empty())
    out << "(No figures: aware-gui is not built here; the tables above are complete. The chart "
           "data are in compare-CLUSTER.json.)\n\n";
  return out.str();
}

void run_reproduce(const ReproduceArgs& a) {
  if (a.out.empty()) throw ConfigError("-o: give the folder for the cells and the report");
  const std::vector<Cell> cells = plan(a);
  const std::string gui = find_gui(a.gui);
  const int jobs = a.jobs > 0 ? a.jobs : std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  const fs::path dir(a.out);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw ConfigError("-o " + a.out + ": cannot create the folder (" + ec.message() + ")");
  check_manifest(dir, build_id(), a.recompute);
  const Counts counts = run_cells(cells, dir, jobs, a.recompute);

  std::ostringstream report;
  report << "# aware reproduce: report\n\n"
         << "`aware reproduce --budget " << a.budget << " --only " << a.only
         << (a.seeds.empty() ? "" : " --seeds " + a.seeds) << " -o " << a.out << "`\n\n"
         << cells.size() << " cells: " << counts.computed << " computed in this run, " << counts.skipped
         << " from before, " << counts.failed << " failed (their errors are in cells/*.failed.txt).\n\n";
  report << compare_report(cells, dir);
  report << draw_compare_figures(cells, dir, gui);
  const std::string report_text = report.str();
  write_text_file_atomic((dir / "REPORT.md").string(), report_text);
  write_json_file((dir / "summary.json").string(),
                  {{"cells", cells.size()}, {"computed", counts.computed},
                   {"skipped", counts.skipped}, {"failed", counts.failed}, {"budget", a.budget}});
  std::printf("%zu cells: %d computed, %d from before, %d failed; wrote %s\n", cells.size(),
              counts.computed, counts.skipped, counts.failed, (dir / "REPORT.md").c_str());
  if (counts.failed > 0) throw Error("reproduce: " + std::to_string(counts.failed) + " cells failed");
}

}  // namespace

void add_reproduce_command(CLI::App& app) {
  auto a = std::make_shared<ReproduceArgs>();
  CLI::App* c = app.add_subcommand(
      "reproduce", "Run the README's experiments as resumable cells and write a report (DIR/REPORT.md)");
  c->add_option("--budget", a->budget, "smoke (minutes), small (the README's tables), paper (2,000 evaluations, 3 seeds)")
      ->capture_default_str();
  c->add_option("--only", a->only, "Tables, comma-separated: all, compare")->capture_default_str();
  c->add_option("--seeds", a->seeds, "Seeds, comma-separated (default: the budget's)");
  c->add_option("--jobs", a->jobs, "Cells run at once, each a process (default: the cores)")
      ->check(CLI::Range(0, 256));
  c->add_option("-o,--output", a->out, "Folder for the cells, REPORT.md and summary.json")->required();
  c->add_option("--gui", a->gui,
                "aware-gui, which draws the figures (default: found next to this binary or in the "
                "build tree; none: no figures)");
  c->add_flag("--recompute", a->recompute,
              "Run every cell again, also over results of another build");
  c->callback([a] { run_reproduce(*a); });
}

}  // namespace aware::cli
