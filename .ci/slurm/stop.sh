#!/usr/bin/env bash
# Stops what .ci/slurm/start.sh started (listed in $DIR/started): slurmd and slurmctld by
# their pid files, munged by its own. Daemons it found already running are left alone.
set -uo pipefail
DIR="${BUREAU_SLURM_DIR:-/tmp/bureau-slurm}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
started() { [ -f "$DIR/started" ] && grep -qx "$1" "$DIR/started"; }
stop_pidfile() {
  local pid
  pid="$(cat "$1" 2>/dev/null || true)"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    $SUDO kill "$pid"
    # Wait (bounded) until it is gone, so a following start finds its port free.
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
}
started slurmd && stop_pidfile "$DIR/slurmd.pid"
started slurmctld && stop_pidfile "$DIR/slurmctld.pid"
if started munged; then
  for pidfile in /run/munge/munged.pid /var/run/munge/munged.pid; do
    [ -s "$pidfile" ] && { stop_pidfile "$pidfile"; break; }
  done
fi
$SUDO rm -f "$DIR/started"
exit 0
