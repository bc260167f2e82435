#!/usr/bin/env bash
# Debian's SLURM (controller, node daemon, accounting with MariaDB) and munge, for tests/test_slurm.py,
# which starts a private single-node cluster (tests/slurm/start_slurm.sh). Skipped when installed.
set -euo pipefail
need="munged slurmctld slurmd slurmdbd mariadbd sbatch sacct"
missing=0; for c in $need; do command -v "$c" >/dev/null || missing=1; done
[ "$missing" = 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then echo "install_slurm: not root, skipping (the SLURM tests will be skipped)"; exit 0; fi
# packaged services must not start (the tests run private instances): Debian's policy-rc.d convention
tmp_policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; tmp_policy=1; fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    munge slurmctld slurmd slurm-client slurmdbd slurm-wlm-mysql-plugin mariadb-server > /dev/null
[ -n "$tmp_policy" ] && rm -f /usr/sbin/policy-rc.d
exit 0
