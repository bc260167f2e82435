#!/usr/bin/env bash
# The book's long experiment queue, highest value per CPU-hour first. Every step resumes from what is on disk
# (probe and run tables skip finished rows), so rerunning this script after an interruption continues where it
# stopped. Budgets are one-thread CPU-minutes, written beside each step before it runs.
#
# It runs with the code of a worktree pinned to a commit, writing into the main checkout's data/, from a copy of
# this file (bash reads a script as it goes: editing the running file would change what it runs). From the main
# checkout, after `make setup`:
#   bash data/QUEUE.sh start    pin ../queue to HEAD, copy this file to ../queue-run-main.sh, start the queue
#                               (log and process-group id in ../logs/queue-main.{log,pgid})
#   bash data/QUEUE.sh stop     stop it (a probe resumes from its last checkpoint, every 500 steps)
#   bash data/QUEUE.sh pause    pause it (e.g. while CI runs); `resume` continues it. Pause it too while
#                               `covlib book --snapshot` runs and until its commit: a probe row that lands in
#                               between makes the snapshot disagree with the committed table
# One lane since the give-up-floor milestone: two one-thread workers (--jobs 2), niced so that interactive work
# on the machine keeps its speed. Stop it with its process group (kill -- -PGID): its pool workers are not named
# after covlib. (PYTHONPATH makes the worktree's covlib win over the venv's editable install of the main checkout.)
set -uo pipefail
LANE=${1:-main}
LANES=${2:-main}
if [[ "$LANE" =~ ^(start|stop|pause|resume)$ ]]; then
  repo=$(git rev-parse --show-toplevel) && base=$(dirname "$repo") || exit 1
  tree=$base/queue logs=$base/logs
  mkdir -p "$logs"
  if [ "$LANE" = start ]; then
    [ -x "$repo/.venv/bin/python" ] || { echo "no $repo/.venv: run make setup first" >&2; exit 1; }
    [ -d "$tree" ] || git -C "$repo" worktree add -q --detach "$tree" HEAD || exit 1
    git -C "$tree" checkout -q --detach "$(git -C "$repo" rev-parse HEAD)" || exit 1
    for lane in $LANES; do
      cp "$repo/data/QUEUE.sh" "$base/queue-run-$lane.sh"
      (cd "$tree" && DATA=$repo/data PY=$repo/.venv/bin/python WORK=$tree/build PGID_FILE=$logs/queue-$lane.pgid \
        nohup setsid nice -n 10 bash "$base/queue-run-$lane.sh" "$lane" >> "$logs/queue-$lane.log" 2>&1 &)
    done
    echo "queue started at $(git -C "$repo" rev-parse --short HEAD): $logs/queue-main.log"
  else
    signal=$([ "$LANE" = stop ] && echo TERM || { [ "$LANE" = pause ] && echo STOP || echo CONT; })
    for lane in $LANES; do
      [ -f "$logs/queue-$lane.pgid" ] && kill -"$signal" -- -"$(cat "$logs/queue-$lane.pgid")" 2>/dev/null
    done
  fi
  exit 0
fi
# a lane started by `start` records its process group (setsid made it a group of its own) for stop/pause/resume
[ -n "${PGID_FILE:-}" ] && ps -o pgid= -p $$ | tr -d ' ' > "$PGID_FILE"
DATA=${DATA:-data}
PY=${PY:-.venv/bin/python}
export PYTHONPATH=$PWD HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
covlib() { "$PY" -m covlib.cli "$@"; }
step() { echo "=== $(date -u +%FT%TZ) $*"; }
WORK=${WORK:-build}
TABLE="$DATA/scaling/probes.csv"
FLOOR=2000
RECHECK=(--give-up-floor "$FLOOR" --table "$TABLE" --work "$WORK/scaling" --jobs 2 --run)

# The give-up rule, tested (chapters 4 and 7). The authors' rule gives up once the training set has been fitted
# for 100 epochs: a few hundred steps for a small training set. Every failing lower end of a finished bracket
# that gave up fewer than FLOOR steps past its fit is rerun under the floor (give up only after max(100 epochs,
# FLOOR steps) past the fit), fewest steps past the fit first; one that flips to success is searched downward
# again under the floor. FLOOR = 2,000: 95% of the 89 succeeding probes at n_train <= 10,000 first reached
# 99% by step 1,690 (data/scaling/probes.csv), rounded up. `covlib scaling recheck --give-up-floor 2000 --table
# data/scaling/probes.csv` prints where each bracket stands and the flips so far.
# Budgets: each rerun trains to its fit plus 2,000 steps unless it succeeds first, at the steps per minute its
# cell's probes ran (under three workers on two cores, so an upper estimate).
# 1. two-hop, plain and CoT (22 reruns): ~125 CPU-minutes
step floor_twohop;     covlib scaling recheck --task twohop twohop-cot --model L4-d128 "${RECHECK[@]}"
# 2. three-hop with CoT (10 reruns): ~145 CPU-minutes (the book's 1.45 against the paper's 1.76)
step floor_threehop_cot; covlib scaling recheck --task threehop-cot --model L4-d128 "${RECHECK[@]}"
# 3. parallel two-hop and three-hop (17 reruns): ~180 CPU-minutes
step floor_parallel_threehop; covlib scaling recheck --task parallel_twohop threehop --model L4-d128 "${RECHECK[@]}"
# 4. five-hop, CoT and plain (11 reruns): ~415 CPU-minutes at today's step (its probes evaluate 32 test types)
step floor_fivehop;    covlib scaling recheck --task fivehop fivehop-cot --model L4-d128 "${RECHECK[@]}"
# 5. the model sizes (4 reruns): ~65 CPU-minutes
step floor_sizes;      covlib scaling recheck --model L2-d64 L6-d128 "${RECHECK[@]}"
# 6. the Mamba (3 reruns): ~215 CPU-minutes at today's Mamba step
step floor_mamba;      covlib scaling recheck --model mamba-L4-d128 "${RECHECK[@]}"

step done
