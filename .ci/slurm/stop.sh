#!/usr/bin/env bash
# Stops what .ci/slurm/start.sh started: slurmd, slurmctld (by their pid files) and munged.
set -uo pipefail
DIR="${BUREAU_SLURM_DIR:-/tmp/bureau-slurm}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
for name in slurmd slurmctld; do
  pidfile="$DIR/$name.pid"
  if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    $SUDO kill "$(cat "$pidfile")"
    for _ in $(seq 1 50); do kill -0 "$(cat "$pidfile")" 2>/dev/null || break; sleep 0.1; done
  fi
done
for pidfile in /run/munge/munged.pid /var/run/munge/munged.pid; do
  if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    $SUDO kill "$(cat "$pidfile")"
    break
  fi
done
exit 0
