#!/usr/bin/env bash
# start_slurm.sh - a private single-node SLURM cluster for covlib's tests (tests/test_slurm.py), from the
# recipe measured on this project's machines (shared/notes/slurm-single-node.md), on non-default ports.
#
#   munged -> [mariadbd -> slurmdbd] -> slurmctld -> slurmd      (all as root, no systemd, no cgroups)
#
# Everything (keys, configs, state, logs, pid files, DB) lives under $SLURM_BASE; nothing in /etc or /run
# is touched. Idempotent: a daemon whose pid file points at a live process of the right name is left alone.
# Needs the Debian/Ubuntu packages:  munge slurmctld slurmd slurm-client   (+ slurmdbd mariadb-server for sacct)
#
# stdout (nothing else goes there):
#   SLURM_CONF=<path>          -> export it for sinfo/sbatch/submitit (or: eval "$(start_slurm.sh)"; export SLURM_CONF)
#   SLURM_PARTITION=<name>
# Knobs (env): SLURM_BASE, SLURM_PARTITION_NAME, SLURM_WITH_DBD (1|0), SLURM_CTLD_PORT, SLURM_SLURMD_PORT,
#              SLURM_DBD_PORT, SLURM_DB_PORT, SLURM_START_TIMEOUT (s per wait), SLURM_INSTALL=1 (apt-get install first)
set -euo pipefail

BASE=${SLURM_BASE:?set SLURM_BASE to the folder that holds this cluster (state, logs, keys, DB)}
PART=${SLURM_PARTITION_NAME:-debug}
WITH_DBD=${SLURM_WITH_DBD:-1}
CTLD_PORT=${SLURM_CTLD_PORT:-16817}
SLURMD_PORT=${SLURM_SLURMD_PORT:-16818}
DBD_PORT=${SLURM_DBD_PORT:-16819}
DB_PORT=${SLURM_DB_PORT:-13307}
TIMEOUT=${SLURM_START_TIMEOUT:-60}

log() { echo "[start_slurm $(date +%T)] $*" >&2; }
die() { log "ERROR: $*"; for f in "$BASE"/log/*.log; do [ -f "$f" ] && { echo "--- tail $f" >&2; tail -n 15 "$f" >&2; }; done; exit 1; }

if [ "${SLURM_INSTALL:-0}" = 1 ]; then
    pkgs="munge slurmctld slurmd slurm-client"; [ "$WITH_DBD" = 1 ] && pkgs="$pkgs slurmdbd mariadb-server"
    log "apt-get install $pkgs"
    apt-get update -qq >&2
    # keep the packaged services (system munged on /run/munge, mariadb on :3306, slurm*) from being started by
    # the postinst scripts: we run private instances. Docker images already ship this policy-rc.d.
    tmp_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; tmp_policy=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >&2 || {
        [ -n "$tmp_policy" ] && rm -f /usr/sbin/policy-rc.d; echo "apt-get install failed" >&2; exit 1; }
    [ -n "$tmp_policy" ] && rm -f /usr/sbin/policy-rc.d
fi
need="munged munge unmunge slurmctld slurmd sinfo scontrol squeue"
[ "$WITH_DBD" = 1 ] && need="$need slurmdbd sacctmgr mariadbd mariadb-install-db mariadb mariadb-admin"
for c in $need; do command -v "$c" >/dev/null || die "missing command $c (apt-get install munge slurmctld slurmd slurm-client [slurmdbd mariadb-server], or SLURM_INSTALL=1)"; done
[ "$(id -u)" = 0 ] || die "run as root (SlurmUser=root/SlurmdUser=root)"

H=$(hostname -s)
ETC=$BASE/etc; export SLURM_CONF=$ETC/slurm.conf
MSOCK=$BASE/munge-sock/munge.socket
mkdir -p "$ETC" "$BASE/state" "$BASE/spool" "$BASE/log" "$BASE/munge" "$BASE/munge-sock"
chmod 755 "$BASE" "$BASE/munge-sock" "$BASE/log"   # munged: socket dir must be a+x and not group/other writable
chmod 700 "$BASE/munge"                             # munged: key dir private

# alive PIDFILE COMM -> 0 if the pid file names a live (non-zombie) process called COMM
alive() { local p st; p=$(cat "$1" 2>/dev/null) || return 1; [ -n "$p" ] || return 1
    [ "$(cat /proc/"$p"/comm 2>/dev/null)" = "$2" ] || return 1
    st=$(awk '{print $3}' /proc/"$p"/stat 2>/dev/null); [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]; }
# wait_for DESC CMD... -> poll CMD until success or TIMEOUT
wait_for() { local d=$1 t0=$SECONDS; shift; until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - t0)) -ge "$TIMEOUT" ] && die "timeout waiting for $d"; sleep 0.3; done; }

# ---------------------------------------------------------------- munge
if [ ! -s "$BASE/munge/munge.key" ]; then   # mungekey exists from munge 0.5.14 on; older: plain random bytes
    if command -v mungekey >/dev/null; then mungekey --create --keyfile="$BASE/munge/munge.key" >&2
    else dd if=/dev/urandom of="$BASE/munge/munge.key" bs=1024 count=1 2>/dev/null; fi
fi
chmod 600 "$BASE/munge/munge.key"
if alive "$BASE/munge-sock/munged.pid" munged; then log "munged already running"; else
    log "starting munged"
    rm -f "$MSOCK" "$MSOCK.lock"
    munged --key-file="$BASE/munge/munge.key" --socket="$MSOCK" --pid-file="$BASE/munge-sock/munged.pid" \
           --log-file="$BASE/log/munged.log" --seed-file="$BASE/munge/munged.seed" --num-threads=4 \
        || die "munged failed"
fi
wait_for "munge round trip" bash -c "munge -n -S '$MSOCK' | unmunge -S '$MSOCK'"

# ---------------------------------------------------------------- mariadb + slurmdbd (accounting -> sacct works)
if [ "$WITH_DBD" = 1 ]; then
    DB=$BASE/mysql; DBSOCK=$DB/mysqld.sock
    mkdir -p "$DB"
    if [ ! -d "$DB/data/mysql" ]; then
        log "initialising MariaDB datadir"
        mariadb-install-db --no-defaults --user=root --datadir="$DB/data" --auth-root-authentication-method=socket \
            --skip-test-db > "$BASE/log/mariadb-install.log" 2>&1 || die "mariadb-install-db failed"
    fi
    if alive "$DB/mysqld.pid" mariadbd; then log "mariadbd already running"; else
        log "starting mariadbd on 127.0.0.1:$DB_PORT"
        rm -f "$DBSOCK"
        setsid nohup mariadbd --no-defaults --user=root --datadir="$DB/data" --socket="$DBSOCK" \
            --pid-file="$DB/mysqld.pid" --bind-address=127.0.0.1 --port="$DB_PORT" --skip-name-resolve \
            --log-error="$BASE/log/mariadb.log" --innodb-buffer-pool-size=128M --innodb-lock-wait-timeout=900 \
            </dev/null >/dev/null 2>&1 &
    fi
    wait_for "mariadb" mariadb-admin --no-defaults -S "$DBSOCK" -uroot ping
    mariadb --no-defaults -S "$DBSOCK" -uroot -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm';
        GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;" || die "mariadb grant failed"
    if [ ! -f "$ETC/slurmdbd.conf" ]; then cat > "$ETC/slurmdbd.conf" <<EOF
DbdHost=$H
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$MSOCK
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
PidFile=$BASE/slurmdbd.pid
LogFile=$BASE/log/slurmdbd.log
DebugLevel=info
EOF
    fi
    chmod 600 "$ETC/slurmdbd.conf"     # slurmdbd refuses a config readable by others
    ACCT="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
# munge socket used for the slurmctld/sacct -> slurmdbd connection (AuthInfo is NOT used for that one)
AccountingStoragePass=$MSOCK"
else
    ACCT="AccountingStorageType=accounting_storage/none"
fi

# ---------------------------------------------------------------- slurm.conf
if [ ! -f "$SLURM_CONF" ]; then
    # exact hardware line ("NodeName=h CPUs=.. Boards=.. SocketsPerBoard=.. CoresPerSocket=.. ThreadsPerCore=.. RealMemory=..")
    NODE=$(slurmd -C 2>/dev/null | grep -m1 '^NodeName=') || NODE=""
    [ -n "$NODE" ] || NODE="NodeName=$H CPUs=$(nproc) RealMemory=$(free -m | awk '/^Mem:/{print $2}')"
    cat > "$SLURM_CONF" <<EOF
# generated by start_slurm.sh - private single-node test cluster
ClusterName=testcluster
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MSOCK
CredType=cred/munge
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool
SlurmctldPidFile=$BASE/slurmctld.pid
SlurmdPidFile=$BASE/slurmd.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# no cgroups, no systemd: plain process tracking, no task binding
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$ACCT
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=5
MinJobAge=300
$NODE NodeAddr=127.0.0.1 NodeHostname=$H State=UNKNOWN
PartitionName=$PART Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
fi
NODENAME=$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' "$SLURM_CONF")

if [ "$WITH_DBD" = 1 ]; then
    if alive "$BASE/slurmdbd.pid" slurmdbd; then log "slurmdbd already running"; else
        log "starting slurmdbd"; slurmdbd || die "slurmdbd failed"; fi
    wait_for "slurmdbd" sacctmgr -n -P show cluster
fi

# ---------------------------------------------------------------- slurmctld + slurmd
if alive "$BASE/slurmctld.pid" slurmctld; then log "slurmctld already running"; else
    log "starting slurmctld"; slurmctld || die "slurmctld failed"; fi
wait_for "slurmctld" bash -c "scontrol ping | grep -q UP"
if alive "$BASE/slurmd.pid" slurmd; then log "slurmd already running"; else
    log "starting slurmd"; slurmd -N "$NODENAME" || die "slurmd failed"; fi

# node must become usable; resume it if it came back DOWN/DRAIN (e.g. after an unclean stop)
t0=$SECONDS
while :; do
    st=$(sinfo -h -n "$NODENAME" -o %T 2>/dev/null | head -1)
    case "$st" in
        idle|mixed|allocated|completing) break ;;
        down*|drain*|fail*) log "node state '$st' -> resume"; scontrol update nodename="$NODENAME" state=resume >&2 || true ;;
    esac
    [ $((SECONDS - t0)) -ge "$TIMEOUT" ] && die "node $NODENAME stuck in state '$st'"
    sleep 0.5
done
log "cluster up: node $NODENAME is $st, partition $PART"
echo "SLURM_CONF=$SLURM_CONF"
echo "SLURM_PARTITION=$PART"
