#!/usr/bin/env python3
"""Adds a run's wall-clock seconds to its cell: stamp_cell.py CELL.json START END
(START and END as `date +%s.%N` prints them). Used by the cell scripts
(experiments/aware_defaults.sh, experiments/aware_variants.sh,
scripts/agents-vs-searches, scripts/anneal-budgets)."""
import json
import sys

path, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
with open(path) as f:
    cell = json.load(f)
cell["wall_seconds"] = end - start
with open(path, "w") as f:
    json.dump(cell, f, indent=1)
