// aware bench simulate | scaling | moves: evaluator throughput on random placements;
// aware bench read: how reading a graph file grows with its size.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/cli_common.h"
#include "core/errors.h"
#include "core/evaluator_pool.h"
#include "core/formats.h"
#include "core/random_dag.h"
#include "datasets/load.h"

namespace aware::cli {
namespace {

struct BenchArgs {
  std::string graph;
  std::string cluster = "preset:k40x4";
  EvaluatorChoice evaluator;  // --evaluator, --mode, --option
  double seconds = 3;
  long long seed = 1;
  std::string out;  // empty: figures to stdout only; -o FILE writes them as JSON too
  std::string placement;  // empty: random placements
  std::string threads = "1";  // comma list: one measurement per thread count
  bool json = false;
  // bench moves
  int ops_per_move = 1;
  double accept = 0.25;
};

struct Measured {
  long long evaluations = 0;
  double seconds = 0;
  double mean_step_us = 0;
};

// `count` seeded uniform random placements (or copies of `fixed`), made before
// timing so that generating them is not timed.
std::vector<Placement> placement_pool(const OpGraph& graph, const Cluster& cluster, std::uint64_t seed,
                                      std::size_t count, const Placement* fixed) {
  std::uint64_t state = seed;
  std::vector<Placement> pool(count, Placement(std::vector<int>(graph.num_ops(), 0)));
  for (auto& p : pool) {
    if (fixed != nullptr) {
      p = *fixed;
      continue;
    }
    for (int op = 0; op < graph.num_ops(); ++op) p[op] = uniform_below(state, cluster.num_devices());
  }
  return pool;
}

// Runs `evaluator` on fresh random placements (one per call) until `seconds` pass.
Measured measure(Evaluator& evaluator, const OpGraph& graph, const Cluster& cluster, double seconds,
                 std::uint64_t seed, const Placement* fixed = nullptr) {
  using clock = std::chrono::steady_clock;
  const std::vector<Placement> pool = placement_pool(graph, cluster, seed, 64, fixed);
  evaluator.evaluate(graph, cluster, pool[0]);  // warm-up: preparation is not timed
  Measured m;
  double sum = 0;
  const auto start = clock::now();
  for (;;) {
    for (int i = 0; i < 16; ++i) {
      sum += evaluator.evaluate(graph, cluster, pool[m.evaluations % pool.size()]).step_time_us;
      ++m.evaluations;
    }
    m.seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (m.seconds >= seconds) break;
  }
  m.mean_step_us = sum / m.evaluations;
  return m;
}

// The same on `threads` clones at once: batches of the placement pool through an
// EvaluatorPool until `seconds` pass.
Measured measure_threads(const Evaluator& prototype, const OpGraph& graph, const Cluster& cluster,
                         double seconds, std::uint64_t seed, int threads,
                         const Placement* fixed = nullptr) {
  using clock = std::chrono::steady_clock;
  const std::vector<Placement> pool =
      placement_pool(graph, cluster, seed, 64 * static_cast<std::size_t>(threads), fixed);
  EvaluatorPool evaluators(prototype, threads);
  evaluators.evaluate_batch(graph, cluster, pool);  // warm-up: every clone prepares the graph
  Measured m;
  double sum = 0;
  const auto start = clock::now();
  for (;;) {
    for (const StepResult& r : evaluators.evaluate_batch(graph, cluster, pool)) sum += r.step_time_us;
    m.evaluations += static_cast<long long>(pool.size());
    m.seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (m.seconds >= seconds) break;
  }
  m.mean_step_us = sum / m.evaluations;
  return m;
}

// What every bench report of one graph starts with: which benchmark, on what.
nlohmann::json bench_report(const std::string& benchmark, const OpGraph& graph,
                            const Cluster& cluster, const Evaluator& evaluator) {
  return {{"benchmark", benchmark},    {"graph", graph.name()},
          {"ops", graph.num_ops()},    {"edges", graph.num_edges()},
          {"cluster", cluster.name()}, {"evaluator", evaluator.describe()}};
}

void run_bench_simulate(const BenchArgs& a) {
  if (!a.out.empty()) prepare_output_path(a.out, "-o");
  if (!(a.seconds > 0)) throw ConfigError("--seconds must be positive");
  const OpGraph graph = load_graph(a.graph);
  const Cluster cluster = load_cluster(a.cluster);
  auto evaluator = make_evaluator(a.evaluator);
  Placement fixed;
  if (!a.placement.empty()) fixed = resolve_placement(a.placement, graph, cluster);
  const std::vector<int> thread_counts = parse_int_list(a.threads, "--threads", 1, 256, "a thread count 1..256 (e.g. 1,2)");
  // The first count is the headline; every count is a row, its speed-up relative to
  // the first, all measured in this one run. A lone count of 1 times the evaluator
  // itself (as the figures before --threads were); a list times every count,
  // 1 included, through an EvaluatorPool, so that the rows compare like with like.
  nlohmann::json rows = nlohmann::json::array();
  Measured m;
  double first_per_s = 0;
  for (int threads : thread_counts) {
    const Placement* one = a.placement.empty() ? nullptr : &fixed;
    const Measured t = threads == 1 && thread_counts.size() == 1
                           ? measure(*evaluator, graph, cluster, a.seconds, static_cast<std::uint64_t>(a.seed), one)
                           : measure_threads(*evaluator, graph, cluster, a.seconds,
                                             static_cast<std::uint64_t>(a.seed), threads, one);
    const double t_per_s = t.evaluations / t.seconds;
    if (rows.empty()) {
      m = t;
      first_per_s = t_per_s;
    }
    rows.push_back({{"threads", threads},
                    {"evaluations", t.evaluations},
                    {"seconds", t.seconds},
                    {"evaluations_per_second", t_per_s},
                    {"speedup", t_per_s / first_per_s}});
  }
  const double per_s = m.evaluations / m.seconds;
  nlohmann::json out = bench_report("simulate", graph, cluster, *evaluator);
  out.update({{"devices", cluster.num_devices()},
              {"evaluations", m.evaluations},
              {"seconds", m.seconds},
              {"evaluations_per_second", per_s},
              {"us_per_evaluation", 1e6 / per_s},
              {"placements", a.placement.empty() ? std::string("random") : a.placement},
              {"mean_step_us", m.mean_step_us},
              {"threads", thread_counts.front()},
              {"by_threads", rows}});
  if (!a.out.empty()) write_json_file(a.out, out);
  if (a.json) {
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::printf("%s (%d ops, %d edges) on %s, %s\n", graph.name().c_str(), graph.num_ops(),
              graph.num_edges(), cluster.name().c_str(), evaluator->describe().c_str());
  std::printf("placements: %s\n", a.placement.empty() ? "random (a new one each call, seeded)" : a.placement.c_str());
  if (rows.size() == 1) {
    std::printf("%lld evaluations in %.2f s: %.0f evaluations/s, %.1f us each (%d thread%s)\n",
                m.evaluations, m.seconds, per_s, 1e6 / per_s, thread_counts.front(),
                thread_counts.front() == 1 ? "" : "s");
  } else {
    std::printf("%8s %12s %10s %14s %9s\n", "threads", "evaluations", "seconds", "evals/s", "speedup");
    for (const auto& r : rows)
      std::printf("%8d %12lld %10.2f %14.0f %8.2fx\n", r["threads"].get<int>(),
                  r["evaluations"].get<long long>(), r["seconds"].get<double>(),
                  r["evaluations_per_second"].get<double>(), r["speedup"].get<double>());
  }
  if (!a.out.empty()) std::printf("wrote %s\n", a.out.c_str());
}

void run_bench_scaling(const BenchArgs& a) {
  if (!a.out.empty()) prepare_output_path(a.out, "-o");
  const Cluster cluster = load_cluster(a.cluster);
  auto evaluator = make_evaluator(a.evaluator);
  nlohmann::json rows = nlohmann::json::array();
  if (!a.json) std::printf("%8s %8s %14s %12s %14s\n", "ops", "edges", "evals/s", "us/eval", "ns/eval/op");
  for (int n : {100, 300, 1000, 3000, 10000}) {
    const OpGraph graph = random_layered_dag(n, static_cast<std::uint64_t>(a.seed));
    const Measured m = measure(*evaluator, graph, cluster, a.seconds, static_cast<std::uint64_t>(a.seed));
    const double us = m.seconds * 1e6 / m.evaluations;
    rows.push_back({{"ops", n}, {"edges", graph.num_edges()}, {"evaluations", m.evaluations},
                    {"seconds", m.seconds}, {"us_per_evaluation", us}});
    if (!a.json)
      std::printf("%8d %8d %14.0f %12.1f %14.1f\n", n, graph.num_edges(), 1e6 / us, us, us * 1e3 / n);
  }
  nlohmann::json out = {{"benchmark", "scaling"}, {"cluster", cluster.name()},
                        {"evaluator", evaluator->describe()}, {"rows", rows}};
  if (!a.out.empty()) write_json_file(a.out, out);
  if (a.json) {
    std::cout << out.dump(1) << "\n";
  } else if (!a.out.empty()) {
    std::printf("wrote %s\n", a.out.c_str());
  }
}

// Reading a graph file, by size: the JSON text of a seeded layered DAG is made
// first (not timed), then parsed (text -> document) and converted (document ->
// OpGraph, with validation and the topological order), each timed once. Linear
// reading shows as a flat "us/op" column; issue 39's quadratic parser showed as
// one that grew with the graph.
void run_bench_read(const BenchArgs& a, long long max_ops) {
  using clock = std::chrono::steady_clock;
  if (max_ops < 1000 || max_ops > 10000000)
    throw ConfigError("--max-ops: " + std::to_string(max_ops) +
                      " is not between 1000 and 10000000");
  if (!a.out.empty()) prepare_output_path(a.out, "-o");
  const auto seconds = [](clock::time_point from) {
    return std::chrono::duration<double>(clock::now() - from).count();
  };
  nlohmann::json rows = nlohmann::json::array();
  if (!a.json)
    std::printf("%9s %9s %9s %10s %10s %10s %8s %12s\n", "ops", "edges", "MB", "parse s",
                "convert s", "total s", "us/op", "vs first row");
  double first_us_per_op = 0;
  for (long long n : {1000LL, 10000LL, 100000LL, 1000000LL, 10000000LL}) {
    if (n > max_ops) break;
    std::string text =
        graph_to_json(random_layered_dag(static_cast<int>(n), static_cast<std::uint64_t>(a.seed)))
            .dump();
    const auto start = clock::now();
    nlohmann::json doc = parse_json_text(text, "bench");
    const double parse_s = seconds(start);
    const auto convert_start = clock::now();
    const OpGraph graph = graph_from_json(doc, "bench");
    const double convert_s = seconds(convert_start);
    const double total_s = parse_s + convert_s;
    const double us_per_op = total_s * 1e6 / static_cast<double>(n);
    if (first_us_per_op == 0) first_us_per_op = us_per_op;
    rows.push_back({{"ops", n},
                    {"edges", graph.num_edges()},
                    {"text_bytes", text.size()},
                    {"parse_s", parse_s},
                    {"convert_s", convert_s},
                    {"total_s", total_s},
                    {"us_per_op", us_per_op},
                    {"us_per_op_vs_first", us_per_op / first_us_per_op}});
    if (!a.json)
      std::printf("%9lld %9d %9.1f %10.3f %10.3f %10.3f %8.2f %11.2fx\n", n, graph.num_edges(),
                  text.size() / 1e6, parse_s, convert_s, total_s, us_per_op,
                  us_per_op / first_us_per_op);
  }
  nlohmann::json out = {{"benchmark", "read"}, {"seed", a.seed}, {"rows", rows}};
  if (!a.out.empty()) write_json_file(a.out, out);
  if (a.json) {
    std::cout << out.dump(1) << "\n";
  } else if (!a.out.empty()) {
    std::printf("wrote %s\n", a.out.c_str());
  }
}

// One seeded sequence of moves: each moves `ops_per_move` random ops to random
// other devices and is accepted with probability `accept` (at random, not by
// its result, so that both ways of evaluating walk the same placements).
struct MoveRun {
  long long evaluations = 0;
  double seconds = 0;
  double checksum = 0;  // the sum of the step times: both ways must agree exactly
};

MoveRun run_moves(Evaluator& evaluator, const OpGraph& graph, const Cluster& cluster,
                  const Placement& start, const BenchArgs& a, bool incremental, long long count) {
  using clock = std::chrono::steady_clock;
  std::uint64_t state = static_cast<std::uint64_t>(a.seed) * 2654435761u + 7;
  const int D = cluster.num_devices();
  Placement current = start;
  Placement next = start;
  std::vector<OpMove> moves;
  MoveRun r;
  evaluator.evaluate(graph, cluster, start);  // warm-up: preparation is not timed
  const auto begin = clock::now();
  for (;;) {
    moves.clear();
    for (int k = 0; k < a.ops_per_move; ++k) {
      const int op = uniform_below(state, graph.num_ops());
      int to = uniform_below(state, D - 1);
      if (to >= next[op]) ++to;
      moves.push_back({op, to});
      next[op] = to;
    }
    const StepResult result = incremental ? evaluator.evaluate_move(graph, cluster, current, moves)
                                          : evaluator.evaluate(graph, cluster, next);
    r.checksum += result.step_time_us;
    ++r.evaluations;
    if (uniform_below(state, 1000000) < a.accept * 1e6) {
      current = next;
    } else {
      next = current;
    }
    if (count > 0 ? r.evaluations >= count : r.evaluations % 64 == 0 &&
        std::chrono::duration<double>(clock::now() - begin).count() >= a.seconds)
      break;
  }
  r.seconds = std::chrono::duration<double>(clock::now() - begin).count();
  return r;
}

void run_bench_moves(const BenchArgs& a) {
  if (!a.out.empty()) prepare_output_path(a.out, "-o");
  if (!(a.seconds > 0)) throw ConfigError("--seconds must be positive");
  if (a.ops_per_move < 1) throw ConfigError("--ops-per-move must be at least 1");
  if (!(a.accept >= 0 && a.accept <= 1)) throw ConfigError("--accept must be in [0, 1]");
  const OpGraph graph = load_graph(a.graph);
  const Cluster cluster = load_cluster(a.cluster);
  if (cluster.num_devices() < 2) throw ConfigError("bench moves: the cluster needs two devices");
  auto evaluator = make_evaluator(a.evaluator);
  Placement start;
  if (a.placement.empty()) {
    start = placement_pool(graph, cluster, static_cast<std::uint64_t>(a.seed), 1, nullptr).front();
  } else {
    start = resolve_placement(a.placement, graph, cluster);
  }
  // evaluate_move for --seconds, then the same moves evaluated in full.
  const MoveRun moved = run_moves(*evaluator, graph, cluster, start, a, true, 0);
  auto fresh = evaluator->clone();
  const MoveRun full = run_moves(*fresh, graph, cluster, start, a, false, moved.evaluations);
  const bool identical = moved.checksum == full.checksum;
  const double moved_per_s = moved.evaluations / moved.seconds;
  const double full_per_s = full.evaluations / full.seconds;
  nlohmann::json out = bench_report("moves", graph, cluster, *evaluator);
  out.update({{"start", a.placement.empty() ? std::string("random") : a.placement},
              {"ops_per_move", a.ops_per_move},
              {"accept", a.accept},
              {"evaluations", moved.evaluations},
              {"evaluate_move_per_second", moved_per_s},
              {"evaluate_per_second", full_per_s},
              {"speedup", moved_per_s / full_per_s},
              {"identical", identical}});
  if (!a.out.empty()) write_json_file(a.out, out);
  if (a.json) {
    std::cout << out.dump(1) << "\n";
  } else {
    std::printf("%s (%d ops, %d edges) on %s, %s\n", graph.name().c_str(), graph.num_ops(),
                graph.num_edges(), cluster.name().c_str(), evaluator->describe().c_str());
    std::printf("%lld moves of %d op%s from %s, %.0f%% accepted at random\n", moved.evaluations,
                a.ops_per_move, a.ops_per_move == 1 ? "" : "s",
                a.placement.empty() ? "a random placement" : a.placement.c_str(), a.accept * 100);
    std::printf("%-15s %12.0f evaluations/s %9.1f us each\n", "evaluate_move", moved_per_s, 1e6 / moved_per_s);
    std::printf("%-15s %12.0f evaluations/s %9.1f us each\n", "evaluate", full_per_s, 1e6 / full_per_s);
    std::printf("speed-up %.2fx; results %s\n", moved_per_s / full_per_s,
                identical ? "identical" : "DIFFER");
    if (!a.out.empty()) std::printf("wrote %s\n", a.out.c_str());
  }
  if (!identical) throw Error("bench moves: evaluate_move and evaluate gave different step times");
}

void add_common(CLI::App* c, BenchArgs& a) {
  c->add_option("--cluster", a.cluster, "preset:NAME or a cluster file")->capture_default_str();
  add_evaluator_options(c, a.evaluator);
  c->add_option("--seconds", a.seconds, "Seconds to measure (per graph)")->capture_default_str();
  c->add_option("--seed", a.seed, "Seed of the random placements")->capture_default_str();
  c->add_flag("--json", a.json, "Print one JSON object");
}

}  // namespace

void add_bench_commands(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Measure evaluator throughput");
  bench->require_subcommand(1);
  auto sim = std::make_shared<BenchArgs>();
  CLI::App* s = bench->add_subcommand("simulate", "Evaluations per second on random placements");
  s->add_option("--graph", sim->graph, graph_spec_help())->required();
  add_common(s, *sim);
  s->add_option("-o,--output", sim->out, "Also write the figures to this JSON file (default: print only)");
  s->add_option("--placement", sim->placement, "Evaluate this placement (file, single, round-robin) instead of random ones");
  s->add_option("--threads", sim->threads,
                "Thread counts to measure, comma list (e.g. 1,2): each thread evaluates on its "
                "own clone of the evaluator; speed-ups are relative to the first count")
      ->capture_default_str();
  s->callback([sim] { run_bench_simulate(*sim); });
  auto mv = std::make_shared<BenchArgs>();
  CLI::App* m = bench->add_subcommand(
      "moves", "Evaluations per second of small moves (evaluate_move) against full evaluations");
  m->add_option("--graph", mv->graph, graph_spec_help())->required();
  add_common(m, *mv);
  m->add_option("-o,--output", mv->out, "Also write the figures to this JSON file (default: print only)");
  m->add_option("--placement", mv->placement, "Start here (file, single, round-robin) instead of a random placement");
  m->add_option("--ops-per-move", mv->ops_per_move, "Ops each move changes")->capture_default_str();
  m->add_option("--accept", mv->accept, "Fraction of moves accepted (at random)")->capture_default_str();
  m->callback([mv] { run_bench_moves(*mv); });
  auto sc = std::make_shared<BenchArgs>();
  sc->seconds = 1;
  CLI::App* c = bench->add_subcommand("scaling", "Time per evaluation from 100 to 10,000 ops");
  add_common(c, *sc);
  c->add_option("-o,--output", sc->out, "Also write the figures to this JSON file (default: print only)");
  c->callback([sc] { run_bench_scaling(*sc); });
  auto rd = std::make_shared<BenchArgs>();
  auto read_max_ops = std::make_shared<long long>(1000000);
  CLI::App* r = bench->add_subcommand(
      "read", "Time to read a graph file (parse and convert) from 1,000 to 10^6 ops");
  r->add_option("--max-ops", *read_max_ops,
                "Largest graph, in ops (sizes are powers of ten from 1,000)")
      ->capture_default_str();
  r->add_option("--seed", rd->seed, "Seed of the generated graphs")->capture_default_str();
  r->add_flag("--json", rd->json, "Print one JSON object");
  r->add_option("-o,--output", rd->out,
                "Also write the figures to this JSON file (default: print only)");
  r->callback([rd, read_max_ops] { run_bench_read(*rd, *read_max_ops); });
}

}  // namespace aware::cli
