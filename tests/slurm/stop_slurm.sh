#!/usr/bin/env bash
# stop_slurm.sh - stop what start_slurm.sh started, using its pid files only.
#   1. cancel all jobs of the private cluster and wait for them to drain
#   2. SIGTERM slurmd, slurmctld, slurmdbd, mariadbd, munged (in that order), SIGKILL after a grace period
#   3. sweep: leftover slurmstepd / job processes whose environment points at *our* slurm.conf (by pid)
# usage: stop_slurm.sh [--clean]     --clean also deletes $SLURM_BASE (state, DB, keys, logs)
set -uo pipefail
BASE=${SLURM_BASE:?set SLURM_BASE to the folder start_slurm.sh used}
export SLURM_CONF=$BASE/etc/slurm.conf
GRACE=${SLURM_STOP_GRACE:-20}
log() { echo "[stop_slurm $(date +%T)] $*" >&2; }
# alive_pid PIDFILE COMM -> prints the pid if it names a live (non-zombie) process called COMM
alive_pid() { local p st; p=$(cat "$1" 2>/dev/null) || return 1; [ -n "$p" ] || return 1
    [ "$(cat /proc/"$p"/comm 2>/dev/null)" = "$2" ] || return 1
    st=$(awk '{print $3}' /proc/"$p"/stat 2>/dev/null); [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && echo "$p"; }
gone() { local st; st=$(awk '{print $3}' /proc/"$1"/stat 2>/dev/null) || return 0; [ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]; }

# 1. drain jobs (only possible while slurmctld is up)
if alive_pid "$BASE/slurmctld.pid" slurmctld >/dev/null && alive_pid "$BASE/slurmd.pid" slurmd >/dev/null; then
    jobs=$(squeue -h -o %A 2>/dev/null | sort -u)
    if [ -n "$jobs" ]; then
        log "cancelling jobs: $(echo $jobs)"; scancel $jobs 2>/dev/null || true
        for _ in $(seq 1 $((GRACE * 2))); do [ -z "$(squeue -h -t R,CG,PD 2>/dev/null)" ] && break; sleep 0.5; done
    fi
fi

# 2. daemons, reverse start order
stop() {  # PIDFILE COMM
    local pid; pid=$(alive_pid "$1" "$2") || { log "$2 not running"; rm -f "$1"; return 0; }
    log "stopping $2 (pid $pid)"; kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 $((GRACE * 5))); do gone "$pid" && break; sleep 0.2; done
    if ! gone "$pid"; then log "$2 (pid $pid) ignored SIGTERM -> SIGKILL"; kill -KILL "$pid" 2>/dev/null; sleep 0.5; fi
    rm -f "$1"
}
stop "$BASE/slurmd.pid" slurmd
stop "$BASE/slurmctld.pid" slurmctld
stop "$BASE/slurmdbd.pid" slurmdbd
stop "$BASE/mysql/mysqld.pid" mariadbd
stop "$BASE/munge-sock/munged.pid" munged

# 3. sweep leftovers of jobs (slurmstepd outlives slurmd by design); identify ours via SLURM_CONF in environ
for e in /proc/[0-9]*/environ; do
    p=${e#/proc/}; p=${p%/environ}
    [ "$p" = $$ ] && continue
    env=$( { tr '\0' '\n' < "$e"; } 2>/dev/null ) || continue
    grep -qx "SLURM_CONF=$SLURM_CONF" <<<"$env" || continue
    comm=$(cat /proc/"$p"/comm 2>/dev/null)
    if [ "$comm" = slurmstepd ] || grep -q '^SLURM_JOB_ID=' <<<"$env"; then
        log "killing leftover job process $p ($comm)"; kill -KILL "$p" 2>/dev/null
    fi
done

if [ "${1:-}" = --clean ]; then log "removing $BASE"; rm -rf "$BASE"; fi
log "stopped"
