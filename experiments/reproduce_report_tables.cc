// aware reproduce's report: the paper's Tables 1-4 and the claims checklist
// (reproduce_report.h).
#include "experiments/reproduce_report.h"

namespace aware::reproduce::report {
namespace {

// ---------------------------------------------------------------- table 1

struct Table1Row {
  std::string model, cluster;
  Stat aware, placeto, hierarchical, best_nl;
  std::string best_nl_method;
  double bound = 0;               // the cells' stored bound: max(critical path, work)
  double certified = 0;           // the best certified solver-free bound (docs/bounds.md)
  std::string binding;            // its term
  // " (1.23x)": a mean's gap to the certified bound.
  std::string gap(const Stat& s) const { return s.ok() && certified > 0 ? fmt(" (%.2fx)", s.mean / certified) : ""; }
  bool complete() const { return aware.ok() && placeto.ok() && hierarchical.ok(); }
  double gain_p() const { return 100 * (placeto.mean - aware.mean) / placeto.mean; }
  double gain_h() const { return 100 * (hierarchical.mean - aware.mean) / hierarchical.mean; }
};

// Table 1's rows from `table`'s cells: the agents' runs of `variant` (the
// presets table's paper-tSECONDS; "" for table1's), and table1's non-learned placers.
std::vector<Table1Row> table1_rows(Results& r, const Plan& plan, const std::string& table = "table1",
                                   const std::string& variant = "") {
  std::vector<Table1Row> rows;
  const Budget& b = plan.budget;
  for (const std::string& cluster : b.table1_clusters)
    for (const std::string& model : b.table1_models) {
      Table1Row row;
      row.model = model;
      row.cluster = cluster;
      row.bound = lower_bound_of(r, plan, table, model, cluster);
      if (const CertifiedBound* c = certified_of(model, cluster)) row.certified = c->best_us(), row.binding = c->binding();
      row.aware = stat_of(over_seeds(r, plan, table, model, cluster, "aware", variant));
      row.placeto = stat_of(over_seeds(r, plan, table, model, cluster, "placeto", variant));
      row.hierarchical = stat_of(over_seeds(r, plan, table, model, cluster, "hierarchical", variant));
      for (const std::string& m : nonlearned_placers()) {
        const Stat s = stat_of(over_seeds(r, plan, "table1", model, cluster, m));
        if (s.ok() && (!row.best_nl.ok() || s.mean < row.best_nl.mean)) row.best_nl = s, row.best_nl_method = m;
      }
      rows.push_back(row);
    }
  return rows;
}

// The mean number of episodes the runs of one agent in one row played.
double mean_episodes(Results& r, const Plan& plan, const std::string& model, const std::string& cluster,
                     const std::string& agent) {
  double sum = 0;
  int n = 0;
  for (int seed : plan.budget.seeds)
    if (const auto key = find_cell(plan, "presets", "search", model, cluster, agent, seed, preset_variant(plan.budget)))
      if (const json* j = r.get(*key); j && j->is_object() && j->contains("episodes"))
        sum += j->at("episodes").get<double>(), ++n;
  return n ? sum / n : 0;
}

// Runs of fewer seconds than this carry no verdict on a claim: at 30 s faithful
// Placeto plays about two Inception-V3 episodes, not one update's four.
constexpr double kClaimMinSeconds = 120;

std::string verdict_p(double g) { return g > 0.5 ? "beats P" : (g < -0.5 ? "loses to P" : "ties P"); }
std::string verdict_h(double g) {
  return g > 8 ? "beats H by >8%" : (g > 0.5 ? "beats H by <8%" : (g < -0.5 ? "loses to H" : "ties H"));
}

// ---------------------------------------------------------------- tables 2 and 3

struct TransferRow {
  std::string family, graph;
  int seed = 0;
  std::optional<double> single, zero_shot, zero_shot_balanced, pretrained, scratch, placeto, best_nl;
  std::string best_nl_method;
  double target = 0, scratch_to = kNever, pretrained_to = kNever;
  bool has_curves = false;
};

double evals_to(const Curve& c, double target) {
  for (const auto& p : c)
    if (p.second <= target) return p.first;
  return kNever;
}

std::vector<TransferRow> transfer_rows(Results& r, const Plan& plan, const std::vector<std::string>& models) {
  std::vector<TransferRow> rows;
  const Budget& b = plan.budget;
  const std::string& cluster = b.transfer_cluster;
  for (const std::string& model : models)
    for (int seed : b.seeds) {
      TransferRow row;
      row.graph = model;
      row.seed = seed;
      auto step = [&](const std::string& kind, const std::string& method, int s, const std::string& variant)
          -> std::optional<double> {
        const auto key = find_cell(plan, "transfer", kind, model, cluster, method, s, variant);
        return key ? r.step_us(*key) : std::nullopt;
      };
      row.single = step("simulate", "single", 1, "");
      row.zero_shot = step("search", "aware", seed, "zero-shot");
      row.zero_shot_balanced = step("search", "aware", seed, "zero-shot-balanced");
      row.pretrained = step("search", "aware", seed, "pretrained");
      row.scratch = step("search", "aware", seed, "");
      row.placeto = step("search", "placeto", seed, "");
      for (const std::string& m : nonlearned_placers()) {
        const auto v = step("place", m, seed, "");
        if (v && (!row.best_nl || *v < *row.best_nl)) row.best_nl = v, row.best_nl_method = m;
      }
      const auto k_scratch = find_cell(plan, "transfer", "search", model, cluster, "aware", seed, "");
      const auto k_pre = find_cell(plan, "transfer", "search", model, cluster, "aware", seed, "pretrained");
      if (k_scratch && k_pre) {
        const Curve cs = r.curve(*k_scratch), cp = r.curve(*k_pre);
        if (!cs.empty() && !cp.empty()) {
          row.has_curves = true;
          row.target = 1.05 * std::min(cs.back().second, cp.back().second);
          row.scratch_to = evals_to(cs, row.target);
          row.pretrained_to = evals_to(cp, row.target);
        }
      }
      rows.push_back(row);
    }
  return rows;
}

std::vector<std::string> held_out(const Plan& plan, const std::string& family) {
  std::vector<std::string> out;
  for (int m = 4; m <= plan.budget.family_count; m += 4) out.push_back(family + "-" + std::to_string(m));
  return out;
}

// ---------------------------------------------------------------- table 4

// ---------------------------------------------------------------- claims

}  // namespace

std::string table1_section(Results& r, const Plan& plan, Figures& figures) {
  const Budget& b = plan.budget;
  const std::vector<Table1Row> rows = table1_rows(r, plan);
  std::ostringstream out;
  out << "## table1: the Aware paper's Table 1 (step time per model and GPU count)\n\n"
      << "Aware, Placeto and Hierarchical (`aware search`) against the best non-learned placer of ";
  for (size_t i = 0; i < nonlearned_placers().size(); ++i) out << (i ? ", " : "") << nonlearned_placers()[i];
  out << " (`aware place`), " << b.evals << " evaluations per method and run, seeds " << seeds_text(b.seeds)
      << ", analytic simulator (contention); mean ± population std over seeds; gains = (other − Aware) / other "
         "of the means; within 0.5% is a tie. *Bound*: the best certified lower bound on any placement's step "
         "without a solver (`aware bound`'s solver-free terms, docs/bounds.md) and the term that binds; "
         "(N.NNx) after a mean is its gap, the mean over the bound.\n\n"
      << "| model | cluster | bound ms | Aware ms | Placeto ms | Hierarchical ms | best non-learned ms | Aware vs "
         "Placeto | Aware vs Hierarchical | paper claim (≤5% vs P, >8% vs H) |\n"
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  json categories = json::array(), aware = json::array(), placeto = json::array(), hier = json::array(),
       best = json::array(), bound = json::array();
  for (const Table1Row& row : rows) {
    out << "| " << row.model << " | " << row.cluster << " | "
        << (row.certified > 0 ? ms(row.certified) + " (" + row.binding + ")" : "-") << " | " << ms_pm(row.aware)
        << row.gap(row.aware) << " | " << ms_pm(row.placeto) << row.gap(row.placeto) << " | "
        << ms_pm(row.hierarchical) << row.gap(row.hierarchical) << " | "
        << (row.best_nl.ok() ? row.best_nl_method + " " + ms_pm(row.best_nl) + row.gap(row.best_nl) : "-") << " | ";
    if (row.complete())
      out << pct(row.gain_p()) << " | " << pct(row.gain_h()) << " | " << verdict_p(row.gain_p()) << " / "
          << verdict_h(row.gain_h()) << " |\n";
    else
      out << "n/a | n/a | n/a |\n";
    if (!row.complete() || !row.best_nl.ok()) continue;
    categories.push_back(row.model + " " + row.cluster);
    aware.push_back(row.aware.mean / 1000);
    placeto.push_back(row.placeto.mean / 1000);
    hier.push_back(row.hierarchical.mean / 1000);
    best.push_back(row.best_nl.mean / 1000);
    bound.push_back((row.certified > 0 ? row.certified : row.bound) / 1000);
  }
  out << "\n";
  if (!categories.empty())
    out << figures.add("table1-bars", "Table 1: step time per method",
                       {{"title", "Table 1: step time per method (mean over seeds) against the lower bound"},
                        {"x_label", "model and cluster"}, {"y_label", "step time (ms)"}, {"kind", "bar"},
                        {"width", std::max(1000, 90 * static_cast<int>(categories.size()))}, {"height", 700},
                        {"categories", categories},
                        {"series", {{{"name", "Aware"}, {"values", aware}},
                                    {{"name", "Placeto"}, {"values", placeto}},
                                    {{"name", "Hierarchical"}, {"values", hier}},
                                    {{"name", "best non-learned"}, {"values", best}},
                                    {{"name", "certified bound"}, {"values", bound}}}}});
  return out.str();
}

std::string presets_section(Results& r, const Plan& plan) {
  const Budget& b = plan.budget;
  const std::string variant = preset_variant(b);
  std::ostringstream out;
  out << "## presets: the paper presets at equal wall-clock\n\n"
      << "Aware, Placeto and Hierarchical as their papers and code define them (`aware search --preset paper`, "
         "docs/agents.md), each run given "
      << fmt("%g", b.preset_seconds) << " s of wall-clock on one core, seeds " << seeds_text(b.seeds)
      << ", analytic simulator (contention); mean ± population std over seeds, and the complete placements "
         "each started (episodes; a Placeto episode is one simulation per op, a Hierarchical one its k "
         "placements of one grouping; one cut short by the clock counts). The cells run beside each other as "
         "`--jobs` allows, and the greedy placement after training is outside the seconds. Runs bounded by time "
         "are not reproducible to the digit. Gains = (other − Aware) / other of the means; within 0.5% is a tie; "
         "(N.NNx) after a mean is its gap to the certified bound (as in table1). Claims get a verdict from runs of "
      << fmt("%g", kClaimMinSeconds) << " s or more.\n\n"
      << "| model | cluster | bound ms | Aware ms | Placeto ms | Hierarchical ms | Aware vs Placeto | Aware vs "
         "Hierarchical | paper claim (≤5% vs P, >8% vs H) |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const Table1Row& row : table1_rows(r, plan, "presets", variant)) {
    auto cell = [&](const Stat& s, const char* agent) {
      return ms_pm(s) + row.gap(s) +
             (s.ok() ? fmt(", %.0f episodes", mean_episodes(r, plan, row.model, row.cluster, agent)) : "");
    };
    out << "| " << row.model << " | " << row.cluster << " | " << (row.certified > 0 ? ms(row.certified) : "-")
        << " | " << cell(row.aware, "aware") << " | "
        << cell(row.placeto, "placeto") << " | " << cell(row.hierarchical, "hierarchical") << " | ";
    if (row.complete())
      out << pct(row.gain_p()) << " | " << pct(row.gain_h()) << " | " << verdict_p(row.gain_p()) << " / "
          << verdict_h(row.gain_h()) << " |\n";
    else
      out << "n/a | n/a | n/a |\n";
  }
  return out.str() + "\n";
}

std::string transfer_section(Results& r, const Plan& plan, Figures& figures) {
  const Budget& b = plan.budget;
  std::ostringstream out;
  const int train = b.family_count - b.family_count / 4;
  out << "## transfer: the Aware paper's Tables 2 and 3 (transplantation, pre-training)\n\n"
      << "On " << b.transfer_cluster << ". Per family and seed, one Aware policy is pre-trained over the family's "
      << train << " training members (`aware pretrain --count " << b.family_count << "`, " << b.pretrain_per_graph
      << " evaluations per member); each held-out member (every fourth) is then placed zero-shot (the policy's "
         "greedy placement, one evaluation: the paper's argmax decode, and `decode=balanced`, the load-aware one), "
         "fine-tuned from the policy, and searched from scratch, "
      << b.evals << " evaluations each; beside them Placeto, one GPU and the best non-learned placer.\n\n"
      << "### Table 2: transplantation\n\n"
      << "| held-out graph | seed | single GPU ms | zero-shot ms | zero-shot, balanced decode ms | pre-trained + "
         "fine-tune ms | from scratch ms | Placeto ms | best non-learned ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  std::vector<TransferRow> all;
  for (const std::string& family : b.families) {
    const auto rows = transfer_rows(r, plan, held_out(plan, family));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  int zs_better = 0, zsb_better = 0, zsb_n = 0, ft_better = 0, ft_nl = 0, n = 0;
  for (const TransferRow& row : all) {
    out << "| " << row.graph << " | " << row.seed << " | " << opt_ms(row.single) << " | " << opt_ms(row.zero_shot)
        << " | " << opt_ms(row.zero_shot_balanced) << " | " << opt_ms(row.pretrained) << " | " << opt_ms(row.scratch) << " | " << opt_ms(row.placeto) << " | "
        << (row.best_nl ? row.best_nl_method + " " + ms(*row.best_nl) : "-") << " |\n";
    if (row.single && row.zero_shot_balanced) ++zsb_n, zsb_better += *row.zero_shot_balanced < *row.single * 0.999;
    if (!row.single || !row.zero_shot || !row.pretrained || !row.scratch) continue;
    ++n;
    zs_better += *row.zero_shot < *row.single * 0.999;
    ft_better += *row.pretrained < *row.scratch;
    ft_nl += row.best_nl && *row.pretrained <= *row.best_nl;
  }
  out << "\nZero-shot better than one GPU on " << zs_better << " of " << n << " (balanced decode: " << zsb_better
      << " of " << zsb_n << ")"
      << "; pre-trained + fine-tune better than from scratch on " << ft_better << " of " << n
      << "; pre-trained + fine-tune at or below the best non-learned placer on " << ft_nl << " of " << n << ".\n\n";

  out << "### Table 3: does pre-training speed up convergence?\n\n"
      << "Evaluations until a run's best-so-far first comes within 5% of the better of the two runs' final "
         "results (curve points are one update apart).\n\n"
      << "| graph | seed | from scratch: evaluations to target (final ms) | pre-trained: evaluations to target "
         "(final ms) | target ms |\n|---|---|---:|---:|---:|\n";
  std::vector<TransferRow> t3 = all;
  if (!b.transfer_zoo_model.empty()) {
    const auto zoo = transfer_rows(r, plan, {b.transfer_zoo_model});
    t3.insert(t3.end(), zoo.begin(), zoo.end());
  }
  json categories = json::array(), scratch_bars = json::array(), pre_bars = json::array();
  for (const TransferRow& row : t3) {
    if (!row.has_curves) {
      out << "| " << row.graph << " | " << row.seed << " | - | - | - |\n";
      continue;
    }
    out << "| " << row.graph << (row.graph == b.transfer_zoo_model ? " (zoo, cifar10 policy)" : "") << " | "
        << row.seed << " | " << evals_text(row.scratch_to) << " (" << opt_ms(row.scratch) << ") | "
        << evals_text(row.pretrained_to) << " (" << opt_ms(row.pretrained) << ") | " << ms(row.target) << " |\n";
    categories.push_back(row.graph + " s" + std::to_string(row.seed));
    const double cap = static_cast<double>(b.evals) * 1.1;
    scratch_bars.push_back(std::isinf(row.scratch_to) ? cap : row.scratch_to);
    pre_bars.push_back(std::isinf(row.pretrained_to) ? cap : row.pretrained_to);
  }
  out << "\n";
  if (!categories.empty())
    out << figures.add("evals-to-target", "evaluations to target",
                       {{"title", "Evaluations to reach the target (never = drawn at 1.1 x the budget)"},
                        {"x_label", "held-out graph and seed"}, {"y_label", "evaluations"}, {"kind", "bar"},
                        {"width", std::max(1000, 70 * static_cast<int>(categories.size()))},
                        {"categories", categories},
                        {"series", {{{"name", "from scratch"}, {"values", scratch_bars}},
                                    {{"name", "pre-trained"}, {"values", pre_bars}}}}});
  // Learning curves of the first held-out member of each family: scratch vs pre-trained.
  for (const std::string& family : b.families) {
    const std::string model = held_out(plan, family).front();
    json series = json::array();
    for (const std::string& variant : {std::string(""), std::string("pretrained")}) {
      std::vector<Curve> curves;
      for (int seed : b.seeds)
        if (const auto key = find_cell(plan, "transfer", "search", model, b.transfer_cluster, "aware", seed, variant)) {
          Curve c = r.curve(*key);
          if (!c.empty()) curves.push_back(std::move(c));
        }
      if (curves.empty()) continue;
      json points, band;
      mean_curve(curves, points, band);
      series.push_back({{"name", variant.empty() ? "Aware from scratch" : "Aware pre-trained"},
                        {"points", points}, {"band", band}});
    }
    if (series.empty()) continue;
    out << figures.add("transfer-curves-" + model, "pre-trained vs scratch on " + model,
                       {{"title", model + " on " + b.transfer_cluster +
                                      ": best sampled step time so far (mean over seeds, band = min to max)"},
                        {"x_label", "evaluations"}, {"y_label", "step time (ms)"}, {"kind", "line"},
                        {"series", series}});
  }
  return out.str();
}

std::string ablation_section(Results& r, const Plan& plan) {
  const Budget& b = plan.budget;
  std::ostringstream out;
  out << "## ablation: the Aware paper's Table 4\n\n"
      << "Aware with its fusion or its position-aware features switched off (`--agent-option fusion=off`, "
         "`position=off`), "
      << b.evals << " evaluations per run, seeds " << seeds_text(b.seeds) << ", mean ± population std.\n\n"
      << "| model | cluster | Aware ms | fusion=off ms | position=off ms |\n|---|---|---:|---:|---:|\n";
  for (const std::string& cluster : b.ablation_clusters)
    for (const std::string& model : b.ablation_models) {
      out << "| " << model << " | " << cluster;
      for (const char* variant : {"", "fusion=off", "position=off"})
        out << " | " << ms_pm(stat_of(over_seeds(r, plan, "ablation", model, cluster, "aware", variant)));
      out << " |\n";
    }
  return out.str() + "\n";
}

std::string claims_section(Results& r, const Plan& plan) {
  const Budget& b = plan.budget;
  std::ostringstream out;
  out << "## claims: the Aware abstract's claims, checked\n\n"
      << "At this report's budget (" << b.evals << " evaluations per run, seeds " << seeds_text(b.seeds)
      << "). A verdict is *reproduced* when every row behind it agrees, *partly* when some do, *not reproduced* "
         "when none do; *not run* when its table was not run or has no finished rows; *not enough evidence at "
         "this budget* when fewer than "
      << kClaimMinRows << " rows stand behind it or the runs had fewer than " << kClaimMinEvals
      << " evaluations.\n\n"
      << "| claim | verdict | the rows behind it |\n|---|---|---|\n";
  const bool thin_budget = b.evals < kClaimMinEvals;
  auto enough = [&](int n) { return n >= kClaimMinRows && !thin_budget; };
  auto verdict = [&](int yes, int n) {
    return n == 0              ? std::string("not run")
           : !enough(n)        ? std::string(kNotEnoughEvidence)
           : yes == n          ? "reproduced"
           : yes > 0           ? "partly"
                               : "not reproduced";
  };
  if (plan.has("table1")) {
    int ahead = 0, ties = 0, behind = 0, over8 = 0, n = 0;
    double lo = kNever, hi = -kNever, lo_h = kNever, hi_h = -kNever;
    for (const Table1Row& row : table1_rows(r, plan)) {
      if (!row.complete()) continue;
      ++n;
      const double g = row.gain_p(), h = row.gain_h();
      ahead += g > 0.5, ties += std::abs(g) <= 0.5, behind += g < -0.5, over8 += h > 8;
      lo = std::min(lo, g), hi = std::max(hi, g), lo_h = std::min(lo_h, h), hi_h = std::max(hi_h, h);
    }
    out << "| Aware's step time is up to 5% lower than Placeto's | " << verdict(ahead + ties, n)
        << " (Aware at least as fast in " << ahead + ties << " of " << n << " rows) | table1: Aware ahead in "
        << ahead << ", tied (±0.5%) in " << ties << ", behind in " << behind << " of " << n
        << " rows; gains " << (n ? pct(lo) + " to " + pct(hi) : "n/a") << " |\n";
    out << "| Aware's step time is more than 8% lower than Hierarchical's | " << verdict(over8, n) << " | table1: "
        << over8 << " of " << n << " rows more than 8% ahead; gains " << (n ? pct(lo_h) + " to " + pct(hi_h) : "n/a")
        << " |\n";
  } else {
    out << "| up to 5% lower than Placeto; more than 8% lower than Hierarchical | not run | table1 not run |\n";
  }
  if (plan.has("presets")) {
    int ahead = 0, ties = 0, over8 = 0, n = 0;
    for (const Table1Row& row : table1_rows(r, plan, "presets", preset_variant(b))) {
      if (!row.complete()) continue;
      ++n;
      ahead += row.gain_p() > 0.5, ties += std::abs(row.gain_p()) <= 0.5, over8 += row.gain_h() > 8;
    }
    const bool thin = b.preset_seconds < kClaimMinSeconds;
    auto timed = [&](int yes) {
      return n == 0 ? std::string("not run")
             : (n < kClaimMinRows || thin) ? std::string(kNotEnoughEvidence)
             : yes == n ? "reproduced" : yes > 0 ? "partly" : "not reproduced";
    };
    out << "| The same two claims with the paper presets at equal wall-clock (" << preset_variant(b) << ") | "
        << timed(ahead + ties) << " / " << timed(over8) << " | presets: Aware at least as fast as Placeto in "
        << ahead + ties << " of " << n << " rows; more than 8% ahead of Hierarchical in " << over8 << " of " << n
        << " |\n";
  }
  if (plan.has("transfer")) {
    int zs = 0, n = 0, zsb = 0, nb = 0, earlier = 0, later = 0, m = 0;
    for (const std::string& family : b.families)
      for (const TransferRow& row : transfer_rows(r, plan, held_out(plan, family))) {
        if (row.single && row.zero_shot) ++n, zs += *row.zero_shot < *row.single * 0.999;
        if (row.single && row.zero_shot_balanced) ++nb, zsb += *row.zero_shot_balanced < *row.single * 0.999;
        if (row.has_curves) ++m, earlier += row.pretrained_to < row.scratch_to, later += row.pretrained_to > row.scratch_to;
      }
    out << "| A policy trained on some networks transplants to similar ones (zero-shot, no training on the "
           "graph) | "
        << verdict(zs, n) << " | transfer, Table 2: zero-shot better than one GPU on " << zs << " of " << n
        << " held-out runs (the paper's argmax decode); with the load-aware decode (not the paper's) on " << zsb
        << " of " << nb << " |\n";
    const std::string v = m == 0 ? "not run"
                          : !enough(m) ? kNotEnoughEvidence
                          : (earlier > 0 && later == 0) ? "reproduced"
                          : earlier > 0 ? "partly"
                                        : "not reproduced";
    out << "| Pre-training speeds up convergence | " << v << " | transfer, Table 3: the pre-trained run reaches "
        << "the target earlier in " << earlier << ", later in " << later << ", at the same point in "
        << m - earlier - later << " of " << m << " held-out runs |\n";
  } else {
    out << "| transplantation; pre-training speeds up convergence | not run | transfer not run |\n";
  }
  if (plan.has("table1")) {
    int nl = 0, n = 0;
    for (const Table1Row& row : table1_rows(r, plan))
      if (row.aware.ok() && row.best_nl.ok()) ++n, nl += row.best_nl.mean < row.aware.mean;
    out << "\nNot a claim of the paper, but the question a reader asks next: the best non-learned placer is "
           "faster than Aware in "
        << nl << " of " << n << " Table 1 rows.\n";
  }
  return out.str() + "\n";
}

}  // namespace aware::reproduce::report
