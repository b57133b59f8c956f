#!/usr/bin/env bash
# gcs-stop.sh — stop the fake-gcs-server started by gcs-start.sh, by its recorded PID
# (never by process name, so another emulator on this machine is left alone).
# Env: HOLDFAST_SERVICES_DIR (/tmp/holdfast-services)
set -euo pipefail

SERVICES=${HOLDFAST_SERVICES_DIR:-/tmp/holdfast-services}
STATE=$SERVICES/gcs
PID_FILE=$STATE/gcs.pid

running() {
  local st
  st=$(cut -d')' -f2 "/proc/$1/stat" 2>/dev/null | awk '{print $1}')
  [ -n "$st" ] && [ "$st" != Z ]
}

if [ ! -f "$PID_FILE" ]; then
  echo "[gcs-stop] not running (no $PID_FILE)" >&2
  rm -f "$SERVICES/gcs.env"
  exit 0
fi
pid=$(cat "$PID_FILE")
if running "$pid"; then
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do running "$pid" || break; sleep 0.1; done
  if running "$pid"; then
    echo "[gcs-stop] pid $pid ignored SIGTERM for 5 s; sending SIGKILL" >&2
    kill -9 "$pid" 2>/dev/null || true
  fi
  echo "[gcs-stop] stopped pid $pid" >&2
else
  echo "[gcs-stop] recorded pid $pid was not running" >&2
fi
rm -f "$PID_FILE" "$STATE/port" "$SERVICES/gcs.env"
