#!/usr/bin/python3
"""Best-so-far curves of scripts/agents-vs-searches cells, mean and spread over seeds.

  experiments/plot_curves.py CELLS BUDGET OUT METHOD... [--devices "2 4 8"] [--models "..."]

For each (model, k40xN) row it reads CELLS/MODEL__k40xN__METHOD__eBUDGET__sS.curve.csv
(evaluations, best_step_us, any other columns), takes each run's best step so far at 200
evenly spaced evaluation counts (the last row at or before each), and writes
OUT/curves-eBUDGET-MODEL-k40xN.plot.json: one line per method, the mean over the seeds
that have a curve, with a band from the fastest to the slowest seed (the spec of
gui/plot.h). It then renders each spec to PNG with aware-plot (AWARE_PLOT, default
build/gui/aware-plot) when that exists. A method with no curve for a row is left out of
that row's chart and named on stderr."""
import csv, glob, io, json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cellpack import CellFiles  # noqa: E402

def main(argv):
    opts = {"--devices": "2 4 8", "--models": "inception_v3 resnet50 nasnet nmt4 gnmt"}
    args = []
    i = 0
    while i < len(argv):
        if argv[i] in opts:
            if i + 1 >= len(argv):
                sys.exit("error: %s needs a value" % argv[i])
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) < 4:
        sys.exit(__doc__)
    cells, budget, out, methods = args[0], int(args[1]), args[2], args[3:]
    files = CellFiles(cells)  # loose or packed (cellpack.py)
    os.makedirs(out, exist_ok=True)
    grid = [budget * (k + 1) // 200 for k in range(200)]
    specs = []
    for model in opts["--models"].split():
        for d in opts["--devices"].split():
            series = []
            for m in methods:
                runs = []
                for name in files.names("%s__k40x%s__%s__e%d__s*.curve.csv" % (model, d, m, budget)):
                    path = os.path.join(cells, name)
                    try:
                        rows = [(int(r["evaluations"]), float(r["best_step_us"]))
                                for r in csv.DictReader(io.StringIO(files.read(name)))]
                    except (KeyError, ValueError) as e:
                        sys.exit("error: %s: not a curve (%s)" % (path, e))
                    if rows:
                        runs.append(rows)
                if not runs:
                    print("no curve: %s k40x%s %s" % (model, d, m), file=sys.stderr)
                    continue
                points, band = [], []
                for e in grid:
                    at = []
                    for rows in runs:
                        seen = [b for n, b in rows if n <= e]
                        if seen:
                            at.append(min(seen) / 1e3)
                    if len(at) == len(runs):
                        points.append([e, round(sum(at) / len(at), 3)])
                        band.append([e, round(min(at), 3), round(max(at), 3)])
                series.append({"name": "%s (%d seeds)" % (m, len(runs)), "points": points, "band": band})
            if not series:
                continue
            name = "curves-e%d-%s-k40x%s" % (budget, model, d)
            spec = {"title": "%s, k40x%s: best step so far (mean, fastest to slowest seed)" % (model, d),
                    "x_label": "evaluations", "y_label": "step ms", "kind": "line", "series": series}
            path = os.path.join(out, name + ".plot.json")
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(spec, f)
            os.replace(tmp, path)
            specs.append(path)
    plot = os.environ.get("AWARE_PLOT", "build/gui/aware-plot")
    if specs and os.access(plot, os.X_OK):
        subprocess.run([plot] + specs, check=True)
    elif specs:
        print("aware-plot not found at %s: wrote the specs only" % plot, file=sys.stderr)
    for p in specs:
        print(p)

if __name__ == "__main__":
    main(sys.argv[1:])
