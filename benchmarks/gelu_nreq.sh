#!/usr/bin/env bash
# Does the exact GELU (a cheaper step: 0.87 ms against 3.5 ms for the tanh GELU per step, profiled) need the same
# data as the book's default model? Searches n_req of two-hop N = 25, 30 and 35 (seed 0: the cells whose brackets
# the default model finished under the authors' rule) with the L4-d128-gelu shape, under the same rule, and prints
# both models' brackets side by side. A step of data/QUEUE.sh, not part of the book: it trains about 3 probes per
# cell, 5-12 CPU-minutes each (~1 CPU-hour on two one-thread workers), into data/speed/probes_gelu.csv, which starts
# as a copy of the default model's probes of those cells, so that each GELU search starts at the default model's
# estimate (first_guess reads other models' estimates of the same cell); the two models' probes never share a
# bracket. Adopt the exact GELU only if every bracket overlaps the default model's. Resumes from its table.
#   bash benchmarks/gelu_nreq.sh            (from the repository; DATA, WORK and PY as data/QUEUE.sh sets them)
set -euo pipefail
DATA=${DATA:-data} WORK=${WORK:-build} PY=${PY:-.venv/bin/python}
TABLE="$DATA/speed/probes_gelu.csv"
CELLS=(--task twohop --N 25 30 35 --seeds 0)
mkdir -p "$DATA/speed"
if [ ! -f "$TABLE" ]; then
  "$PY" -c "from covlib.search.probes import read_probes; t = read_probes('$DATA/scaling/probes.csv'); \
t[(t.task == 'twohop') & t.N.isin([25, 30, 35]) & (t.seed == 0) & (t.model == 'L4-d128') & ~t.cot \
& (t.give_up_floor == 0)].to_csv('$TABLE', index=False)"
fi
export OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1
"$PY" -m covlib.cli scaling search "${CELLS[@]}" --model L4-d128-gelu --table "$TABLE" --work "$WORK/speed" --jobs 2
"$PY" -m covlib.cli scaling status "${CELLS[@]}" --model L4-d128 L4-d128-gelu --table "$TABLE"
