#!/usr/bin/env bash
# Does the exact GELU (a cheaper step: 0.87 ms against 3.5 ms for the tanh GELU per step, profiled) need the same
# data as the book's default model? Searches n_req of twohop N = 20, 25, 30 (seed 0) with the L4-d128-gelu shape
# and prints both models' brackets side by side. A queue step, not part of the book: it trains (about 3 probes per
# cell, 3-10 CPU-minutes each; ~1-1.5 CPU-hours on two one-thread workers) into a copy of the book's probe table,
# so the book's table is untouched and each GELU search starts at the default model's finished estimate
# (first_guess reads other models' estimates of the same cell). The two models are separate cells: their probes
# never share a bracket. Adopt the exact GELU only if every bracket overlaps the default model's.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/speed
[ -f build/speed/probes_gelu.csv ] || cp data/scaling/probes.csv build/speed/probes_gelu.csv
export OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1
covlib scaling search --task twohop --N 20 25 30 --seeds 0 --model L4-d128-gelu \
  --table build/speed/probes_gelu.csv --work build/speed --jobs 2
covlib scaling status --task twohop --N 20 25 30 --seeds 0 --model L4-d128 L4-d128-gelu \
  --table build/speed/probes_gelu.csv
