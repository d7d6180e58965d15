#!/bin/bash
# best-of.sh N "bench simulate args" LABEL1 LABEL2 ...: the best evaluations/s of N
# alternated 1-second `aware bench simulate` runs of each binary (a noisy machine
# slows runs down, never speeds them up, so the best of several is the steadier figure).
# DIR holds one aware binary per label (DIR/aware-LABEL); DIR=/tmp/ab by default.
DIR=${DIR:-/tmp/ab}
N=$1; ARGS=$2; shift 2
declare -A best
for i in $(seq $N); do for b in "$@"; do
  $DIR/aware-$b bench simulate $ARGS --seconds 1 -o $DIR/r-$b.json >/dev/null 2>&1
  v=$(grep -o '"evaluations_per_second": [0-9.]*' $DIR/r-$b.json | head -1 | cut -d' ' -f2)
  best[$b]=$(/usr/bin/python3 -c "print(max(float('${best[$b]:-0}'), $v))")
done; done
for b in "$@"; do printf "%s %.0f\n" $b ${best[$b]}; done
