#!/usr/bin/env python3
"""Rebuilds every generated results table from its committed data and compares.

The tables the docs show that no `aware reproduce` report holds are written by
small generators next to their data (Python 3 standard library only):

  experiments/tables/*.py             --root REPO -o OUT: read REPO's committed
                                      data, write OUT (runs side by side:
                                      hw_cpu.py, hw_cuda.py, performance.py)
  experiments/results/transfer-*/     a study's own table scripts, which write
                                      beside themselves: run over a copy of the
                                      folders they read, laid out as in the
                                      repository, with their committed command
  scripts/bench-agents --table-only   the learned agents' benchmark table, from
                                      a copy of bench-agents/*.json
  scripts that print their table      (STDOUT_SCRIPTS) run at the root; what
                                      they print is compared with the file

Each generated file must come out identical to the committed one, so a hand
edit of a generated table (or a generator change not re-run) fails here.
Exit 0 when all match; otherwise one line per file that differs and exit 1.

  check_tables.py REPO_ROOT SCRATCH_DIR
"""
import os
import shutil
import subprocess
import sys

# experiments/tables generators: (script, the file it writes, relative to the root).
TABLE_GENERATORS = [
    ("experiments/tables/hw_cpu.py", "experiments/results/hw-cpu-summary.md"),
    ("experiments/tables/hw_cuda.py", "experiments/results/gpu/SUMMARY.md"),
    ("experiments/tables/performance.py", "experiments/results/bench-tables.md"),
]

# Study scripts that write beside themselves: the paths they read (copied), then
# (command run at the copy's root, the file it writes).
STUDY_COPY = ["experiments/cellpack.py", "experiments/results/transfer-2000",
              "experiments/results/transfer-pretrain2000",
              "experiments/results/reproduce-small-3seeds-b/cells.pack.json.gz"]
STUDY_SCRIPTS = [
    (["experiments/results/transfer-2000/table.py"], "experiments/results/transfer-2000/TABLE.md"),
    (["experiments/results/transfer-2000/finetune_table.py"], "experiments/results/transfer-2000/FINETUNE.md"),
    (["experiments/results/transfer-pretrain2000/table.py"], "experiments/results/transfer-pretrain2000/TABLE.md"),
    (["experiments/results/transfer-2000/finetune_table.py", "experiments/results/transfer-pretrain2000",
      "experiments/results/transfer-pretrain2000/FINETUNE.md"],
     "experiments/results/transfer-pretrain2000/FINETUNE.md"),
]

# Scripts that print their table to stdout, saved as the committed file: (command, file).
STDOUT_SCRIPTS = [
    (["experiments/strategies_summary.py", "experiments/results/strategies", "analytic"],
     "experiments/results/strategies/summary-analytic.md"),
    (["experiments/strategies_agreement.py", "experiments/results/strategies", "k40x4"],
     "experiments/results/strategies/agreement-k40x4.md"),
    (["experiments/aware_vs_search.py", "--variant", "noelite"], "experiments/results/aware-defaults/vs-anneal-graph-2000-s1.md"),
    (["experiments/aware_vs_search.py", "--seeds", "1,2,3", "--variant", "noelite"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s123.md"),
    (["experiments/aware_vs_search.py", "--variant", "nonorm"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s1-nonorm.md"),
    (["experiments/aware_vs_search.py", "--seeds", "1,2", "--variant", "nonorm"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s12-nonorm.md"),
    (["experiments/aware_vs_search.py", "--seeds", "1,2,3", "--variant", "nonorm"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s123-nonorm.md"),
    (["experiments/aware_defaults_table.py", "experiments/results/aware-defaults/cells", "2000"],
     "experiments/results/aware-defaults/table-2000.md"),
    (["experiments/curve_summary.py",
      "experiments/results/aware-defaults/cells/inception_v3__k40x4__nonorm__e20000__s1.curve.csv",
      "experiments/results/aware-defaults/cells/inception_v3__k40x4__ent01-nofloor__e20000__s1.curve.csv",
      "experiments/results/aware-defaults/cells/inception_v3__k40x4__floor__e20000__s1.curve.csv",
      "experiments/results/aware-defaults/cells/inception_v3__k40x4__hierarchical-paper__e20000__s1-stopped.curve.csv",
      "experiments/results/aware-defaults/cells/inception_v3__k40x4__hierarchical__e20000__s1.curve.csv"],
     "experiments/results/aware-defaults/curves-20000.md"),
    (["experiments/zero_shot_table.py", "experiments/results/reproduce-small-3seeds-c"],
     "experiments/results/reproduce-small-3seeds-c/zero-shot.md"),
    (["experiments/zero_shot_table.py", "experiments/results/reproduce-small-3seeds-d"],
     "experiments/results/reproduce-small-3seeds-d/zero-shot.md"),
    (["experiments/zero_shot_table.py", "experiments/results/reproduce-small-3seeds-e"],
     "experiments/results/reproduce-small-3seeds-e/zero-shot.md"),
    (["experiments/zero_shot_table.py", "experiments/results/reproduce-small-3seeds-f"],
     "experiments/results/reproduce-small-3seeds-f/zero-shot.md"),
    (["experiments/transfer_pretrain_table.py", "experiments/results/transfer-pretrain18000"],
     "experiments/results/transfer-pretrain18000/TABLE.md"),
    (["experiments/transfer_pretrain_table.py", "experiments/results/transfer-pretrain18000-noelite",
      "--beside", "experiments/results/transfer-pretrain18000"],
     "experiments/results/transfer-pretrain18000-noelite/TABLE.md"),
    (["experiments/placeto_paper_net_table.py", "experiments/results/placeto-paper/net"],
     "experiments/results/placeto-paper/net/table.md"),
    (["experiments/aware_guided_table.py", "experiments/results/aware-guided/cells", "2000"],
     "experiments/results/aware-guided/table-2000.md"),
    (["experiments/aware_guided_table.py", "experiments/results/aware-guided/cells", "20000"],
     "experiments/results/aware-guided/table-20000.md"),
    (["experiments/aware_guided_table.py", "experiments/results/aware-guided-norm/cells", "2000"],
     "experiments/results/aware-guided-norm/table-2000.md"),
    (["experiments/aware_guided_table.py", "experiments/results/aware-guided-norm/cells", "20000"],
     "experiments/results/aware-guided-norm/table-20000.md"),
    (["experiments/bounds_table.py"], "experiments/results/bounds/table.md"),
    (["experiments/milp_exact_table.py", "experiments/results/milp-exact/cells"],
     "experiments/results/milp-exact/table.md"),
    (["experiments/aware_vs_search.py", "--budget", "20000", "--seeds", "1", "--variant", "noelite"],
     "experiments/results/aware-defaults/vs-anneal-graph-20000-s1.md"),
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x{d}__noelite__e20000__s1.curve.csv"
        for m in ("inception_v3", "resnet50", "nasnet", "nmt4", "gnmt") for d in (2, 4, 8)],
     "experiments/results/aware-defaults/curves-20000-default.md"),
    (["experiments/aware_vs_search.py", "--budget", "20000", "--seeds", "1", "--variant", "nonorm"],
     "experiments/results/aware-defaults/vs-anneal-graph-20000-s1-nonorm.md"),
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x{d}__nonorm__e20000__s1.curve.csv"
        for m in ("inception_v3", "resnet50", "nasnet", "nmt4", "gnmt") for d in (2, 4, 8)],
     "experiments/results/aware-defaults/curves-20000-default-nonorm.md"),
    (["experiments/aware_vs_search.py", "--variant", "fine"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s1-fine.md"),
    (["experiments/aware_vs_search.py", "--seeds", "1,2,3", "--variant", "fine"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s123-fine.md"),
    (["experiments/fused_ceiling.py"], "experiments/results/fused-ceiling/fused-ceiling.md"),
    (["experiments/aware_vs_search.py", "--budget", "20000", "--seeds", "1", "--variant", "fine"],
     "experiments/results/aware-defaults/vs-anneal-graph-20000-s1-fine.md"),
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x{d}__fine__e20000__s1.curve.csv"
        for m in ("inception_v3", "resnet50", "nasnet", "nmt4") for d in (2, 4)],
     "experiments/results/aware-defaults/curves-20000-fine.md"),
    (["experiments/aware_vs_search.py", "--variant", "explore5"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s1-explore5.md"),
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x2__explore5__e20000__s1.curve.csv"
        for m in ("inception_v3", "resnet50", "nasnet")],
     "experiments/results/aware-defaults/curves-20000-explore5.md"),
    (["experiments/aware_vs_search.py", "--variant", "around97", "--beside", "noelite"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s1-around97.md"),
    (["experiments/aware_vs_search.py", "--seeds", "1,2,3", "--variant", "around97", "--beside", "noelite"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s123-around97.md"),
    (["experiments/aware_vs_search.py", "--budget", "20000", "--variant", "around97", "--beside", "noelite"],
     "experiments/results/aware-defaults/vs-anneal-graph-20000-s1-around97.md"),
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x{d}__around97__e20000__s1.curve.csv"
        for d in (2, 4, 8) for m in ("inception_v3", "resnet50", "nasnet", "nmt4", "gnmt")],
     "experiments/results/aware-defaults/curves-20000-around97.md"),
    (["experiments/aware_vs_search.py", "--seeds", "1,2,3", "--variant", "elite10", "--beside", "noelite"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s123-elite10.md"),
    (["experiments/aware_vs_search.py", "--seeds", "1,2,3", "--variant", "hold20-elite10", "--beside", "elite10"],
     "experiments/results/aware-defaults/vs-anneal-graph-2000-s123-hold20.md"),
    (["experiments/aware_vs_search.py", "--budget", "20000", "--seeds", "1", "--variant", "elite10", "--beside", "noelite"],
     "experiments/results/aware-defaults/vs-anneal-graph-20000-s1-elite10.md"),
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x{d}__elite10__e20000__s1.curve.csv"
        for d in (4, 2, 8) for m in ("inception_v3", "resnet50", "nasnet", "nmt4", "gnmt")],
     "experiments/results/aware-defaults/curves-20000-elite10.md"),
    (["experiments/aware_decision.py"], "experiments/results/aware-defaults/decision-20000-s1.md"),
    (["experiments/aware_decision.py", "--seed", "1,2", "--variants", "noelite,elite10"],
     "experiments/results/aware-defaults/decision-20000-s12-elite10.md"),
    (["experiments/aware_decision.py", "--seed", "1,2,3", "--variants", "elite10"],
     "experiments/results/aware-defaults/decision-20000-s123-elite10.md"),
    (["experiments/aware_vs_search.py", "--budget", "20000", "--seeds", "1,2,3", "--variant", "elite10"],
     "experiments/results/aware-defaults/vs-anneal-graph-20000-s123-elite10.md"),
    (["experiments/aware_decision.py", "--seed", "1", "--variants", "elite10,hold20-elite10"],
     "experiments/results/aware-defaults/decision-20000-s1-hold20.md"),
    (["experiments/aware_vs_search.py", "--budget", "20000", "--seeds", "1", "--variant", "hold20-elite10",
      "--beside", "elite10"],
     "experiments/results/aware-defaults/vs-anneal-graph-20000-s1-hold20.md"),
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x{d}__hold20-elite10__e20000__s1.curve.csv"
        for d in (4, 2, 8) for m in ("inception_v3", "resnet50", "nasnet", "nmt4", "gnmt")],
     "experiments/results/aware-defaults/curves-20000-hold20.md"),
    (["experiments/aware_decision.py", "--seed", "1,2", "--variants", "elite10,hold20-elite10"],
     "experiments/results/aware-defaults/decision-20000-s12-hold20.md"),
    (["experiments/aware_vs_search.py", "--budget", "20000", "--seeds", "1,2", "--variant", "hold20-elite10",
      "--beside", "elite10"],
     "experiments/results/aware-defaults/vs-anneal-graph-20000-s12-hold20.md"),
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x{d}__hold20-elite10__e20000__s2.curve.csv"
        for d in (4, 2, 8) for m in ("inception_v3", "resnet50", "nasnet", "nmt4", "gnmt")],
     "experiments/results/aware-defaults/curves-20000-hold20-s2.md"),
    (["experiments/aware_decision.py", "--seed", "1,2,3", "--variants", "elite10,hold20-elite10"],
     "experiments/results/aware-defaults/decision-20000-s123-hold20.md"),
    (["experiments/aware_vs_search.py", "--budget", "20000", "--seeds", "1,2,3", "--variant", "hold20-elite10",
      "--beside", "elite10"],
     "experiments/results/aware-defaults/vs-anneal-graph-20000-s123-hold20.md"),
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x{d}__hold20-elite10__e20000__s3.curve.csv"
        for d in (4, 2, 8) for m in ("inception_v3", "resnet50", "nasnet", "nmt4", "gnmt")],
     "experiments/results/aware-defaults/curves-20000-hold20-s3.md"),
    (["experiments/aware_decision.py", "--seed", "1,2", "--variants", "hierarchical,hierarchical-explore5"],
     "experiments/results/aware-defaults/decision-20000-s12-hierarchical.md"),
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x4__paper__e20000__s1.curve.csv"
        for m in ("inception_v3", "resnet50", "nasnet", "nmt4", "gnmt")],
     "experiments/results/aware-defaults/curves-20000-paper.md"),
    # Inception-V3's default cell is a rerun on 2026-12-06's code (the older one
    # above, of 2026-12-03, gave the same best steps).
    (["experiments/curve_summary.py"] + [
        f"experiments/results/aware-defaults/cells/{m}__k40x{d}__{v}__e20000__s1"
        + ("-rerun" if (m, d, v) == ("inception_v3", 4, "hierarchical") else "") + ".curve.csv"
        for d in (4, 2, 8)
        for m in ("inception_v3", "resnet50", "nasnet", "nmt4", "gnmt")
        for v in ("hierarchical", "hierarchical-explore5")],
     "experiments/results/aware-defaults/curves-20000-hierarchical.md"),
]


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), 1):
        if x != y:
            return f"line {i}: committed {x[:120]!r}, rebuilt {y[:120]!r}"
    return f"lengths differ ({len(a.splitlines())} and {len(b.splitlines())} lines)"


def compare(committed_path, rebuilt_path, name, problems):
    if not os.path.exists(rebuilt_path):
        problems.append(f"{name}: the generator wrote nothing")
        return
    committed = open(committed_path, encoding="utf-8").read() if os.path.exists(committed_path) else ""
    rebuilt = open(rebuilt_path, encoding="utf-8").read()
    if committed != rebuilt:
        problems.append(f"{name}: differs from its rebuild, {first_difference(committed, rebuilt)}")


def run(cmd, cwd, name, problems, python=True):
    done = subprocess.run([sys.executable, *cmd] if python else cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        problems.append(f"{name}: the generator failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return done.returncode == 0


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root, scratch = (os.path.abspath(p) for p in sys.argv[1:])
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    problems, checked = [], 0

    for script, out in TABLE_GENERATORS:
        rebuilt = os.path.join(scratch, "tables", out.replace("/", "__"))
        os.makedirs(os.path.dirname(rebuilt), exist_ok=True)
        checked += 1
        if run([os.path.join(root, script), "--root", root, "-o", rebuilt], root, out, problems):
            compare(os.path.join(root, out), rebuilt, out, problems)

    tree = os.path.join(scratch, "tree")
    for path in STUDY_COPY:
        src, dst = os.path.join(root, path), os.path.join(tree, path)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.isdir(src):
            shutil.copytree(src, dst)
        else:
            shutil.copy(src, dst)
    for cmd, out in STUDY_SCRIPTS:
        target = os.path.join(tree, out)
        if os.path.exists(target):
            os.remove(target)  # the rebuild must write it, not find the committed copy
        checked += 1
        if run(cmd, tree, out, problems):
            compare(os.path.join(root, out), target, out, problems)

    for cmd, out in STDOUT_SCRIPTS:
        checked += 1
        done = subprocess.run([sys.executable, *cmd], cwd=root, capture_output=True, text=True)
        if done.returncode != 0:
            problems.append(f"{out}: the generator failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
            continue
        rebuilt = os.path.join(scratch, "stdout", out.replace("/", "__"))
        os.makedirs(os.path.dirname(rebuilt), exist_ok=True)
        with open(rebuilt, "w", encoding="utf-8") as f:
            f.write(done.stdout)
        compare(os.path.join(root, out), rebuilt, out, problems)

    # The learned agents' table: its script's table step over a copy of the JSON.
    out = "experiments/results/bench-agents/bench-agents.md"
    copy = os.path.join(scratch, "bench-agents")
    shutil.copytree(os.path.join(root, os.path.dirname(out)), copy)
    os.remove(os.path.join(copy, "bench-agents.md"))
    checked += 1
    if run([os.path.join(root, "scripts", "bench-agents"), "--table-only", "--out", copy], root, out, problems,
           python=False):
        compare(os.path.join(root, out), os.path.join(copy, "bench-agents.md"), out, problems)

    for p in problems:
        print(p)
    print(f"{checked} generated tables rebuilt from their data: {len(problems)} differ")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
