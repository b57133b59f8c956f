#!/usr/bin/env bash
# rgw-stop.sh: stop the Ceph RGW started by rgw-start.sh, by recorded PID only.
#
# Usage: tooling/services/rgw-stop.sh [--wipe] [--fast]
#   --wipe  also remove the data dir and the env file (memstore data never survives a stop)
#   --fast  SIGKILL at once instead of a graceful TERM (nothing on memstore is worth saving)
# Env:   HOLDFAST_SERVICES_DIR (default /tmp/holdfast-services)
set -uo pipefail

SERVICES_DIR=${HOLDFAST_SERVICES_DIR:-/tmp/holdfast-services}
DATA=$SERVICES_DIR/rgw
WIPE=0
FAST=0
for arg in "$@"; do
  case $arg in
    --wipe) WIPE=1 ;;
    --fast) FAST=1 ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "rgw-stop: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

# Exited Ceph daemons linger as zombies; kill -0 succeeds on those, /proc/PID/stat tells.
is_running() {
  local state
  state=$(sed -E 's/^.*\) ([A-Za-z]).*$/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}
# A recorded PID is ours only if that process was started with our ceph.conf: a PID file
# that outlived its daemon may name an unrelated process by now.
is_ours() { is_running "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$DATA/ceph.conf"; }

if [ -d "$DATA/run" ]; then
  # radosgw first (it flushes to the OSD), then the OSD, then the monitor: an OSD whose
  # monitor is gone waits several seconds before exiting.
  for d in client.rgw.holdfast osd.0 mon.a; do
    f=$DATA/run/$d.pid
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    rm -f "$f"
    is_ours "$pid" || continue
    if [ "$FAST" = 1 ]; then
      kill -KILL "$pid" 2>/dev/null
    else
      kill -TERM "$pid" 2>/dev/null
    fi
    for _ in $(seq 100); do is_running "$pid" || break; sleep 0.1; done
    if is_running "$pid"; then
      kill -KILL "$pid" 2>/dev/null
      echo "[rgw-stop] $d ($pid) did not exit on TERM: killed"
    else
      echo "[rgw-stop] $d ($pid) stopped"
    fi
  done
else
  echo "[rgw-stop] nothing recorded in $DATA/run"
fi
rm -f "$SERVICES_DIR/rgw.env"
if [ "$WIPE" = 1 ]; then
  rm -rf "$DATA"
  echo "[rgw-stop] removed $DATA"
fi
exit 0
