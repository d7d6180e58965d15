// The reproduce run (reproduce_run.h): the README's experiments as resumable
// cells, run as child processes of the calling binary, then one report.
//
// Each cell (model, cluster, method, seed, evaluations; reproduce_plan.cc) is
// one `aware place|search|pretrain|simulate|fuse ... --json` run whose output
// lands in DIR/cells/KEY.json by rename, so a run that is stopped keeps every
// finished cell and a rerun skips them. A cell that needs another (a fine-tune
// needs its pre-trained policy) starts when that one has finished. DIR/manifest.json names the build (a hash of this binary): results of
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
#include <string_view>
#include <thread>

#include "experiments/reproduce_run.h"

#include "core/errors.h"
#include "core/evaluator.h"
#include "core/formats.h"
#include "experiments/cell_pack.h"
#include "experiments/reproduce.h"

extern char** environ;

namespace aware::reproduce {
namespace {

namespace fs = std::filesystem;



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
  int id;  // Launcher's: a child's pid here, or -rank for a cell on another rank
  Cell cell;
  fs::path tmp, err;
  std::chrono::steady_clock::time_point start;
};

// Seconds per cell, by kind and method (a Placeto search costs a hundred place
// runs): the ETA sums the cells left at their class's mean so far.
class CellCosts {
 public:
  void add(const Cell& c, double seconds) {
    auto& [sum, n] = by_class_[c.kind + "/" + c.method];
    sum += seconds;
    ++n;
    total_ += seconds;
    ++count_;
  }
  double estimate(const Cell& c) const {
    const auto it = by_class_.find(c.kind + "/" + c.method);
    if (it != by_class_.end()) return it->second.first / it->second.second;
    return count_ ? total_ / count_ : 0;
  }

 private:
  std::map<std::string, std::pair<double, int>> by_class_;
  double total_ = 0;
  int count_ = 0;
};

// Starts `aware ARGS` in the folder `workdir` (the report's: the cells' arguments
// name their files relative to it) with stdout to `tmp` and stderr to `err`. The argv is
// built before fork(), so the child only opens, dups and execs.
// The child's environment is this one without MPI's: a cell is a plain run,
// also when this process is a rank of an MPI job.
pid_t spawn(const std::vector<std::string>& args, const fs::path& workdir, const fs::path& tmp, const fs::path& err) {
  std::vector<std::string> copy = args;
  std::string self = "aware";
  std::vector<char*> argv;
  argv.push_back(self.data());
  for (std::string& s : copy) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view v(*e);
    if (v.rfind("OMPI_", 0) == 0 || v.rfind("PMIX_", 0) == 0 || v.rfind("PMI_", 0) == 0 || v.rfind("OPAL_", 0) == 0)
      continue;
    envp.push_back(*e);
  }
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Error("reproduce: fork failed");
  if (pid == 0) {
    const int o = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    if (chdir(workdir.c_str()) != 0) _exit(125);
    execve("/proc/self/exe", argv.data(), envp.data());
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

// Messages of the cell queue between rank 0 and the other ranks.
constexpr int kTagCell = 11, kTagDone = 12, kTagQuit = 13;

// Where cells run: up to `jobs` child processes here and, when this is rank 0
// of an MPI job, one cell at a time on each other rank (its own child process,
// its files in the same DIR: a folder every rank sees). Cells go to a free
// local slot first.
class Launcher {
 public:
  Launcher(int jobs, fs::path workdir, CellMessenger* job) : jobs_(jobs), workdir_(std::move(workdir)), job_(job) {
    if (job_ != nullptr)
      for (int r = 1; r < job_->size(); ++r) idle_ranks_.push_back(r);
    remotes_ = static_cast<int>(idle_ranks_.size());
  }
  int capacity() const { return jobs_ + remotes_; }
  int remotes() const { return remotes_; }

  // Starts `args` with stdout to `tmp` and stderr to `err`; returns its id.
  int start(const std::vector<std::string>& args, const fs::path& tmp, const fs::path& err) {
    if (local_ < jobs_ || idle_ranks_.empty()) {
      ++local_;
      return static_cast<int>(spawn(args, workdir_, tmp, err));
    }
    const int rank = idle_ranks_.back();
    idle_ranks_.pop_back();
    std::string message = workdir_.string() + '\0' + tmp.string() + '\0' + err.string();
    for (const std::string& a : args) message += '\0' + a;
    job_->send(rank, kTagCell, message);
    return -rank;
  }

  // Waits for a cell to end: its id, and whether it exited 0.
  std::pair<int, bool> wait_one() {
    while (true) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, remotes_ > 0 ? WNOHANG : 0);
      if (pid > 0) {
        --local_;
        return {static_cast<int>(pid), WIFEXITED(status) && WEXITSTATUS(status) == 0};
      }
      if (pid < 0 && remotes_ == 0) throw Error("reproduce: no cell is running");
      int from = 0;
      std::string text;
      if (job_ != nullptr && job_->poll(kTagDone, from, text)) {
        idle_ranks_.push_back(from);
        return {-from, text == "1"};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  // Tells the other ranks there is no more work.
  void finish() {
    if (job_ != nullptr)
      for (int r = 1; r < job_->size(); ++r) job_->send(r, kTagQuit, "");
  }

 private:
  int jobs_;
  fs::path workdir_;
  int local_ = 0;
  int remotes_ = 0;
  CellMessenger* job_ = nullptr;
  std::vector<int> idle_ranks_;
};


Counts run_cells(const Plan& plan, const fs::path& dir, Launcher& launcher, bool recompute) {
  const int jobs = launcher.capacity();
  const fs::path cell_dir = dir / "cells";
  fs::create_directories(cell_dir);
  for (const auto& entry : fs::directory_iterator(cell_dir))  // a stopped run's partial outputs
    if (entry.path().filename().string().rfind(".", 0) == 0) fs::remove(entry.path());
  Counts counts;
  std::set<std::string> finished, failed;
  std::vector<const Cell*> todo;
  const CellFiles before(cell_dir);  // a packed study's cells count as finished too
  for (const Cell& c : plan.cells) {
    if (!recompute && before.has(c.key + ".json")) {
      ++counts.skipped;
      finished.insert(c.key);
    } else {
      todo.push_back(&c);
    }
  }
  std::fprintf(stderr, "reproduce: %zu cells, %d finished before, %zu to run on %d job%s%s\n",
               plan.cells.size(), counts.skipped, todo.size(), jobs, jobs == 1 ? "" : "s",
               launcher.remotes() > 0 ? (" (" + std::to_string(launcher.remotes()) + " on other ranks)").c_str() : "");
  const auto begin = std::chrono::steady_clock::now();
  std::vector<Running> running;
  size_t done = 0;
  const size_t total = todo.size();
  CellCosts costs;
  auto report_progress = [&](const std::string& key) {
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - begin).count();
    double left = 0;
    for (const Cell* c : todo) left += costs.estimate(*c);
    for (const Running& r : running)
      left += std::max(0.0, costs.estimate(r.cell) - std::chrono::duration<double>(now - r.start).count());
    const double eta = done < total ? left / jobs : 0;
    std::fprintf(stderr, "[%zu/%zu] %s  %.0f s elapsed, eta %.0f s\n", done + counts.skipped,
                 plan.cells.size(), key.c_str(), elapsed, eta);
  };
  while (!todo.empty() || !running.empty()) {
    // Start every cell whose needs have finished, up to `jobs`; a cell whose
    // need failed fails without running. A cell that measures (exclusive) runs
    // alone: the cells before it finish first, none start beside it.
    const bool alone = std::any_of(running.begin(), running.end(), [](const Running& r) { return r.cell.exclusive; });
    for (auto it = todo.begin(); !alone && it != todo.end() && static_cast<int>(running.size()) < jobs;) {
      const Cell& c = **it;
      const auto lost = std::find_if(c.needs.begin(), c.needs.end(), [&](const std::string& k) { return failed.count(k) > 0; });
      if (lost != c.needs.end()) {
        const fs::path why = cell_dir / (c.key + ".failed.txt");
        write_text_file_atomic(why.string(), "error: not run: the cell it needs (" + *lost + ") failed\n");
        failed.insert(c.key);
        ++counts.failed;
        ++done;
        std::fprintf(stderr, "reproduce: cell %s not run: %s failed\n", c.key.c_str(), lost->c_str());
        report_progress(c.key);
        it = todo.erase(it);
        continue;
      }
      if (!std::all_of(c.needs.begin(), c.needs.end(), [&](const std::string& k) { return finished.count(k) > 0; })) {
        ++it;
        continue;
      }
      if (c.exclusive && !running.empty()) break;  // wait for the others to finish
      const fs::path tmp = cell_dir / ("." + c.key + ".tmp");
      const fs::path err = cell_dir / ("." + c.key + ".err");
      running.push_back({launcher.start(c.args, tmp, err), c, tmp, err, std::chrono::steady_clock::now()});
      it = todo.erase(it);
      if (c.exclusive) {
        std::fprintf(stderr, "reproduce: %s measures on this machine's cores: it runs alone\n", c.key.c_str());
        break;
      }
    }
    if (running.empty()) {
      if (todo.empty()) break;
      throw Error("reproduce: cells wait on cells that are not in the plan (" + todo.front()->key + ")");
    }
    const auto [id, exited_ok] = launcher.wait_one();
    auto it = std::find_if(running.begin(), running.end(), [&](const Running& r) { return r.id == id; });
    if (it == running.end()) continue;
    const Running r = *it;
    running.erase(it);
    ++done;
    const std::string key = r.cell.key;
    costs.add(r.cell, std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count());
    bool ok = exited_ok;
    if (ok) {
      try {
        read_json_file(r.tmp.string());  // one whole JSON document, or the cell failed
      } catch (const Error&) {
        ok = false;
      }
    }
    if (ok) {
      fs::rename(r.tmp, cell_dir / (key + ".json"));
      fs::remove(r.err);
      fs::remove(cell_dir / (key + ".failed.txt"));
      finished.insert(key);
      ++counts.computed;
    } else {
      fs::rename(r.err, cell_dir / (key + ".failed.txt"));
      fs::remove(r.tmp);
      failed.insert(key);
      ++counts.failed;
      std::fprintf(stderr, "reproduce: cell %s failed: %s\n", key.c_str(),
                   first_line_of(cell_dir / (key + ".failed.txt")).c_str());
    }
    report_progress(id < 0 ? key + " (rank " + std::to_string(-id) + ")" : key);
  }
  return counts;
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

// aware-plot next to this binary (an install) or in the build tree's gui/.
std::string find_plot(const std::string& gui_flag) {
  if (gui_flag == "none") return "";
  const fs::path self = fs::read_symlink("/proc/self/exe");
  for (const fs::path& candidate : {self.parent_path() / "aware-plot", self.parent_path().parent_path() / "gui" / "aware-plot"})
    if (fs::exists(candidate)) return candidate.string();
  return "";
}


// What DIR/summary.json says about the run that computed the cells.
std::string run_record(const fs::path& dir) {
  const fs::path file = dir / "summary.json";
  if (!fs::exists(file)) return "";
  const nlohmann::json s = read_json_file(file.string());
  std::ostringstream out;
  out << "The last run over these cells computed " << s.value("computed", 0) << " of " << s.value("cells", 0)
      << " in " << static_cast<long long>(s.value("seconds", 0.0) + 0.5) << " s (summary.json). ";
  return out.str();
}

// Cells of DIR that belong to another run's plan (another --budget, or the same
// budget with other --seeds or --evals) and not to this one: a report reads only
// its own plan's cells, so it says which others it ignored. "" when none.
std::string other_runs_note(const RunRequest& a, const fs::path& dir) {
  Features every;
  every.rl = every.simgrid = every.fusion = every.hw = true;
  const Plan ours = make_plan(a.budget, "all", a.seeds, dir / "cells", every, a.evals);
  const CellFiles files(dir / "cells");
  std::set<std::string> counted;
  std::string parts;
  std::size_t total = 0;
  for (const std::string& budget : {std::string("smoke"), std::string("small"), std::string("paper")}) {
    const Plan other = make_plan(budget, "all", "", dir / "cells", every, 0);
    std::size_t n = 0;
    std::string example;
    for (const Cell& c : other.cells) {
      if (ours.index.count(c.key) || counted.count(c.key) || !files.has(c.key + ".json")) continue;
      counted.insert(c.key);
      if (example.empty()) example = c.key;
      ++n;
    }
    if (n == 0) continue;
    total += n;
    parts += std::string(parts.empty() ? "" : "; ") + "`--budget " + budget + "`" +
             (budget == a.budget ? " with its own seeds and evaluations" : "") + ": " + std::to_string(n) +
             ", e.g. " + example;
  }
  if (total == 0) return "";
  return dir.string() + " also holds " + std::to_string(total) + " finished cell" + (total == 1 ? "" : "s") +
         " of another run (" + parts + "); this report reads only the cells of `--budget " + a.budget +
         (a.seeds.empty() ? "" : " --seeds " + a.seeds) +
         (a.evals > 0 ? " --evals " + std::to_string(a.evals) : "") +
         "` and ignores them; give that run's options to report it, or keep each run in its own folder";
}

}  // namespace

// A rank other than 0: runs the cells rank 0 sends, one at a time, until told to stop.
void serve_cells(CellMessenger& job) {
  while (true) {
    int tag = 0;
    const std::string message = job.receive(0, tag);
    if (tag != kTagCell) return;
    std::vector<std::string> parts;
    size_t begin = 0;
    while (true) {
      const size_t end = message.find('\0', begin);
      parts.push_back(message.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
      if (end == std::string::npos) break;
      begin = end + 1;
    }
    bool ok = false;
    if (parts.size() >= 3) {
      const std::vector<std::string> args(parts.begin() + 3, parts.end());
      int status = 0;
      const pid_t pid = spawn(args, parts[0], parts[1], parts[2]);
      ok = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    job.send(0, kTagDone, ok ? "1" : "0");
  }
}

void run(const RunRequest& a) {
  if (a.out.empty()) throw ConfigError("-o: give the folder for the cells and the report");
  // The modes exclude each other; taking one silently would answer another question.
  std::vector<std::string> modes;
  for (const auto& [given, flag] : {std::pair{a.list, "--list"}, std::pair{a.report_only, "--report-only"},
                                    std::pair{a.pack, "--pack"}, std::pair{a.unpack, "--unpack"}})
    if (given) modes.push_back(flag);
  if (modes.size() > 1) throw ConfigError(modes[0] + " and " + modes[1] + ": give one");
  // In a job of several processes rank 0 plans, runs cells and writes the
  // report; the other ranks run the cells it sends them (serve_cells).
  CellMessenger* job = a.messenger != nullptr && a.messenger->size() > 1 ? a.messenger : nullptr;
  if (job != nullptr) {
    if (a.report_only) throw ConfigError("--report-only runs no cell: run it without mpirun");
    if (job->rank() != 0) {
      if (!a.list) serve_cells(*job);
      return;
    }
  }
  const fs::path dir = fs::absolute(a.out);
  if (a.pack || a.unpack) {  // no plan, no run, no report: the cells' files only
    if (a.pack && a.unpack) throw ConfigError("--pack and --unpack: give one");
    if (!fs::exists(dir / "manifest.json"))
      throw ConfigError((a.pack ? "--pack: " : "--unpack: ") + dir.string() + " holds no cells (no manifest.json)");
    const std::size_t n = a.pack ? pack_cells(dir / "cells") : unpack_cells(dir / "cells");
    std::printf("%s %zu files %s %s\n", a.pack ? "packed" : "unpacked", n, a.pack ? "into" : "from",
                pack_path(dir / "cells").c_str());
    return;
  }
  const Plan plan = make_plan(a.budget, a.only, a.seeds, dir / "cells", a.features, a.evals);
  if (a.list) {  // the plan only: one line per cell, its table(s) and its command
    for (const Cell& c : plan.cells) {
      std::string tables;
      for (const auto& [name, keys] : plan.tables)
        if (std::find(keys.begin(), keys.end(), c.key) != keys.end()) tables += (tables.empty() ? "" : ",") + name;
      std::string command = "aware";
      for (const std::string& arg : c.args) command += " " + arg;
      std::printf("%s\t%s\t%s\n", c.key.c_str(), tables.c_str(), command.c_str());
    }
    for (const std::string& why : plan.left_out) std::printf("left out: %s\n", why.c_str());
    return;
  }
  const std::string gui = find_gui(a.gui), plot = find_plot(a.gui);
  int jobs = a.jobs > 0 ? a.jobs : std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  Launcher launcher(jobs, dir, job);
  // --report-only reads a folder that exists; it creates nothing before it knows.
  if (a.report_only && !fs::exists(dir / "manifest.json"))
    throw ConfigError("--report-only: " + dir.string() + " holds no cells (no manifest.json)");
  create_output_folder(dir.string(), "-o", a.out);
  const std::string this_build = build_id();
  std::string cells_build = this_build;
  Counts counts;
  double seconds = 0;
  if (a.report_only) {
    // Runs nothing and leaves the manifest alone: the report says whose cells it read.
    const fs::path manifest = dir / "manifest.json";
    cells_build = read_json_file(manifest.string()).value("build", "unknown");
    const CellFiles files(dir / "cells");
    for (const Cell& c : plan.cells) (files.has(c.key + ".json") ? counts.skipped : counts.failed)++;
  } else {
    check_manifest(dir, this_build, a.recompute);
    const auto begin = std::chrono::steady_clock::now();
    counts = run_cells(plan, dir, launcher, a.recompute);
    launcher.finish();
    jobs = launcher.capacity();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }

  const std::string other_runs = other_runs_note(a, dir);
  if (!other_runs.empty()) std::fprintf(stderr, "reproduce: %s\n", other_runs.c_str());

  std::ostringstream report;
  std::string tables;
  for (const auto& [name, keys] : plan.tables) tables += (tables.empty() ? "" : ", ") + name;
  report << "# aware reproduce: report\n\n"
         << "`aware reproduce --budget " << a.budget << " --only " << a.only
         << (a.seeds.empty() ? "" : " --seeds " + a.seeds) << (a.evals > 0 ? " --evals " + std::to_string(a.evals) : "")
         << (a.report_only ? " --report-only" : "") << " -o " << a.out << "`\n\n"
         << "Tables: " << (tables.empty() ? "none" : tables) << ". " << plan.cells.size() << " cells: ";
  if (a.report_only)
    report << counts.skipped << " read, " << counts.failed << " missing; no cell was run for this report. The cells "
           << "are build " << cells_build << "'s, the report is build " << this_build << "'s"
           << (cells_build == this_build ? " (the same)" : "") << ". "
           << run_record(dir);
  else
    report << counts.computed << " computed in this run (" << static_cast<long long>(seconds + 0.5) << " s on "
           << jobs << " job" << (jobs == 1 ? "" : "s") << "), " << counts.skipped << " from before, " << counts.failed
           << " failed (their errors are in cells/*.failed.txt). ";
  if (!other_runs.empty()) report << "**Mixed runs:** " << other_runs << ". ";
  report << "Every cell's output is in cells/KEY.json, its "
            "placement (open it in aware-gui) in cells/KEY.placement.json, a learning curve in "
            "cells/KEY.curve.csv.\n\n";
  report << write_report_sections(plan, dir, plot, gui);
  const std::string report_text = report.str();
  write_text_file_atomic((dir / "REPORT.md").string(), report_text);
  write_text_file_atomic((dir / "report.html").string(),
                         markdown_to_html(report_text, dir, "aware reproduce: report"));
  nlohmann::json table_list = nlohmann::json::array();
  for (const auto& [name, keys] : plan.tables) table_list.push_back(name);
  if (!a.report_only)  // the run's own record stays as it was
    write_json_file((dir / "summary.json").string(),
                    {{"cells", plan.cells.size()}, {"computed", counts.computed}, {"skipped", counts.skipped},
                     {"failed", counts.failed}, {"budget", a.budget}, {"tables", table_list},
                     {"left_out", plan.left_out}, {"seconds", seconds}});
  std::printf("%zu cells: %d computed, %d from before, %d failed; wrote %s and %s\n", plan.cells.size(),
              counts.computed, counts.skipped, counts.failed, (dir / "REPORT.md").c_str(),
              (dir / "report.html").c_str());
  if (counts.failed > 0)
    throw Error("reproduce: " + std::to_string(counts.failed) + (a.report_only ? " cells missing" : " cells failed"));
}

}  // namespace aware::reproduce
