#!/usr/bin/env bash
# azurite-start.sh — start Azurite's blob service (the real Azure Blob emulator) on
# 127.0.0.1 for holdfast's Azure backend tests, in the background.
#
# Usage: azurite-start.sh [PORT]            (default $AZURITE_BLOB_PORT or 10000)
# Env:   AZURITE_BLOB_PORT   port to listen on (10000)
#        AZURITE_PERSIST     "memory" (default: --inMemoryPersistence) or "disk"
#                            (--location under the data dir; use for big runs, since
#                            in-memory mode keeps every uploaded byte in RAM)
#        HOLDFAST_AZURE_CONTAINER  container the tests use, created if missing (holdfast-test)
#        HOLDFAST_SERVICES_DIR     state root (/tmp/holdfast-services)
#
# Idempotent: if the recorded Azurite is alive and answers, it only rewrites the env file.
# Writes $HOLDFAST_SERVICES_DIR/azurite.env with AZURE_STORAGE_CONNECTION_STRING
# (Azurite's published devstoreaccount1 key) and HOLDFAST_AZURE_CONTAINER; source it or
# let the tests read it. Stop with azurite-stop.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SERVICES=${HOLDFAST_SERVICES_DIR:-/tmp/holdfast-services}
STATE=$SERVICES/azurite
PID_FILE=$STATE/azurite.pid
PORT_FILE=$STATE/port
LOG=$STATE/azurite.log
ENV_FILE=$SERVICES/azurite.env
PORT=${1:-${AZURITE_BLOB_PORT:-10000}}
PERSIST=${AZURITE_PERSIST:-memory}
CONTAINER=${HOLDFAST_AZURE_CONTAINER:-holdfast-test}
# Azurite's documented development account; not a secret (it is the same on every machine).
ACCOUNT=devstoreaccount1
ACCOUNT_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

die() { echo "[azurite-start] error: $*" >&2; exit 1; }
log() { echo "[azurite-start] $*" >&2; }

case $PORT in '' | *[!0-9]*) die "port must be a number, got '$PORT'" ;; esac
case $PERSIST in memory | disk) ;; *) die "AZURITE_PERSIST must be memory or disk, got '$PERSIST'" ;; esac

# A PID counts as running only if it exists and is not a zombie (kill -0 succeeds on zombies).
running() {
  local st
  st=$(cut -d')' -f2 "/proc/$1/stat" 2>/dev/null | awk '{print $1}')
  [ -n "$st" ] && [ "$st" != Z ]
}
# Any HTTP answer means the blob service is listening (an unsigned request gets 4xx).
answers() {
  local code
  code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$1/$ACCOUNT?comp=list" 2>/dev/null || true)
  [ -n "$code" ] && [ "$code" != 000 ]
}

# Creates the test container (idempotent) with the SDK that backends-azure installs.
ensure_container() {
  local port=$1
  (cd "$ROOT/packages/backends-azure" &&
    AZ_CS="DefaultEndpointsProtocol=http;AccountName=$ACCOUNT;AccountKey=$ACCOUNT_KEY;BlobEndpoint=http://127.0.0.1:$port/$ACCOUNT;" \
      AZ_CONTAINER="$CONTAINER" node --input-type=module -e '
        import { BlobServiceClient } from "@azure/storage-blob";
        await BlobServiceClient.fromConnectionString(process.env.AZ_CS, { retryOptions: { maxTries: 1 } })
          .getContainerClient(process.env.AZ_CONTAINER)
          .createIfNotExists();
      ') || die "Azurite answers on $port but creating container '$CONTAINER' failed (see above)"
}

write_env() {
  local port=$1 tmp
  tmp=$(mktemp "$SERVICES/.azurite.env.XXXXXX")
  cat >"$tmp" <<EOF
# written by tooling/services/azurite-start.sh; Azurite pid $(cat "$PID_FILE")
AZURITE_BLOB_PORT=$port
AZURE_STORAGE_CONNECTION_STRING='DefaultEndpointsProtocol=http;AccountName=$ACCOUNT;AccountKey=$ACCOUNT_KEY;BlobEndpoint=http://127.0.0.1:$port/$ACCOUNT;'
HOLDFAST_AZURE_CONTAINER=$CONTAINER
EOF
  mv "$tmp" "$ENV_FILE"
  cat "$ENV_FILE"
}

mkdir -p "$STATE"

# ---------------------------------------------------------------- already running?
if [ -f "$PID_FILE" ] && running "$(cat "$PID_FILE")"; then
  old_port=$(cat "$PORT_FILE" 2>/dev/null || echo "$PORT")
  if answers "$old_port"; then
    [ "$old_port" = "$PORT" ] || log "already running on port $old_port (asked for $PORT); keeping it"
    log "already running (pid $(cat "$PID_FILE"), port $old_port)"
    ensure_container "$old_port"
    write_env "$old_port"
    exit 0
  fi
  # A wedged Azurite (seen once: busy, answering nothing) may ignore SIGTERM.
  stale=$(cat "$PID_FILE")
  log "recorded pid $stale is alive but not answering on $old_port; stopping it"
  kill "$stale" 2>/dev/null || true
  for _ in $(seq 1 50); do running "$stale" || break; sleep 0.1; done
  if running "$stale"; then kill -9 "$stale" 2>/dev/null || true; sleep 0.2; fi
fi
rm -f "$PID_FILE" "$PORT_FILE"

if answers "$PORT"; then
  die "port $PORT on 127.0.0.1 is already taken by another process; pick another: AZURITE_BLOB_PORT=10010 $0"
fi

# ---------------------------------------------------------------- find the binary
BIN=""
for candidate in "$ROOT/packages/backends-azure/node_modules/.bin/azurite-blob" "$ROOT/node_modules/.bin/azurite-blob"; do
  if [ -x "$candidate" ]; then BIN=$candidate; break; fi
done
if [ -z "$BIN" ] && command -v pnpm >/dev/null 2>&1; then
  BIN=$(cd "$ROOT" && pnpm --silent --filter @holdfast/backends-azure exec which azurite-blob 2>/dev/null || true)
fi
if [ -z "$BIN" ]; then BIN=$(command -v azurite-blob || true); fi
[ -n "$BIN" ] || die "azurite-blob not found; run 'pnpm install' in $ROOT (azurite is a devDependency of @holdfast/backends-azure)"

# ---------------------------------------------------------------- start
# --skipApiVersionCheck: @azure/storage-blob 12.34 sends an API version newer than Azurite 3.37 knows.
args=(--blobHost 127.0.0.1 --blobPort "$PORT" --skipApiVersionCheck --disableTelemetry)
if [ "$PERSIST" = disk ]; then
  mkdir -p "$STATE/data"
  args+=(--location "$STATE/data")
else
  args+=(--inMemoryPersistence)
fi

log "starting $BIN ${args[*]}"
# setsid: the server must outlive this script and the shell that ran it.
setsid "$BIN" "${args[@]}" >"$LOG" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$PID_FILE"
echo "$PORT" >"$PORT_FILE"

for _ in $(seq 1 100); do
  if ! running "$pid"; then
    rm -f "$PID_FILE" "$PORT_FILE"
    die "Azurite exited during start-up; log $LOG:
$(tail -n 20 "$LOG")"
  fi
  if answers "$PORT"; then
    log "listening on http://127.0.0.1:$PORT (pid $pid, $PERSIST persistence, log $LOG)"
    ensure_container "$PORT"
    write_env "$PORT"
    exit 0
  fi
  sleep 0.1
done
kill "$pid" 2>/dev/null || true
rm -f "$PID_FILE" "$PORT_FILE"
die "Azurite did not answer on 127.0.0.1:$PORT within 10 s; log $LOG:
$(tail -n 20 "$LOG")"
