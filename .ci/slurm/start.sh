#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for crates/cli/tests/slurm.rs (issue 18 §3).
# Installs slurm-wlm and munge from Debian when missing, writes a config into a directory
# this script owns (BUREAU_SLURM_DIR, default /tmp/bureau-slurm), starts munged, slurmctld and
# slurmd as root (no systemd, no cgroups: proctrack/linuxproc, task/none) and waits until
# `sinfo` shows the node idle. .ci/slurm/stop.sh stops it. Idempotent: a running cluster
# started by this script is left alone. See docs/distributed.md.
set -euo pipefail

DIR="${BUREAU_SLURM_DIR:-/tmp/bureau-slurm}"
WAIT="${BUREAU_SLURM_WAIT:-60}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

say() { printf 'slurm fixture: %s\n' "$*" >&2; }

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
  || ! command -v sinfo >/dev/null || ! command -v munged >/dev/null; then
  say "installing slurm-wlm and munge (apt-get)"
  timeout 300 $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive timeout 900 $SUDO apt-get install -y -qq --no-install-recommends \
    slurm-wlm munge >/dev/null
fi

# munge: a key, its directories, the daemon.
if [ ! -s /etc/munge/munge.key ]; then
  $SUDO mkdir -p /etc/munge
  $SUDO dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
for d in /etc/munge /run/munge /var/log/munge /var/lib/munge; do
  $SUDO mkdir -p "$d"
  $SUDO chown munge:munge "$d" 2>/dev/null || true
done
$SUDO chown munge:munge /etc/munge/munge.key 2>/dev/null || true
$SUDO chmod 0400 /etc/munge/munge.key
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  say "starting munged"
  $SUDO mkdir -p "$DIR" && echo munged | $SUDO tee -a "$DIR/started" >/dev/null
  $SUDO munged --force 2>/dev/null || $SUDO munged --force
  for _ in $(seq 1 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.1
  done
  munge -n | unmunge >/dev/null || { say "munged does not answer (munge -n | unmunge)"; exit 1; }
fi

# The config, in a directory of our own; /etc/slurm/slurm.conf points at it so that plain
# sbatch/squeue/sinfo find it. A slurm.conf that is not ours is never replaced.
HOST="$(hostname -s)"
CPUS="$(nproc)"
MEM_MB=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 8 / 10 ))
$SUDO mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
cat <<CONF | $SUDO tee "$DIR/slurm.conf" >/dev/null
# Written by .ci/slurm/start.sh (Bureau's one-node test cluster).
ClusterName=bureau
SlurmctldHost=$HOST
AuthType=auth/munge
CryptoType=crypto/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=600
NodeName=$HOST CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
$SUDO mkdir -p /etc/slurm
if [ -e /etc/slurm/slurm.conf ] && [ "$(readlink /etc/slurm/slurm.conf || true)" != "$DIR/slurm.conf" ]; then
  say "/etc/slurm/slurm.conf exists and is not this fixture's; not replacing it (move it away or set SLURM_CONF=$DIR/slurm.conf)"
  exit 1
fi
$SUDO ln -sfn "$DIR/slurm.conf" /etc/slurm/slurm.conf

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if ! alive "$DIR/slurmctld.pid"; then
  say "starting slurmctld"
  echo slurmctld | $SUDO tee -a "$DIR/started" >/dev/null
  $SUDO slurmctld
fi
if ! alive "$DIR/slurmd.pid"; then
  say "starting slurmd"
  echo slurmd | $SUDO tee -a "$DIR/started" >/dev/null
  $SUDO slurmd
fi

for _ in $(seq 1 "$((WAIT * 2))"); do
  state="$(sinfo -h -N -o '%T' 2>/dev/null | head -n 1 || true)"
  case "$state" in
    idle|mixed|allocated) say "node $HOST is $state"; exit 0 ;;
  esac
  sleep 0.5
done
say "the node did not become idle within ${WAIT}s (sinfo: ${state:-no answer}); logs in $DIR/log"
exit 1
