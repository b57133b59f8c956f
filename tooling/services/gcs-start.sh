#!/usr/bin/env bash
# gcs-start.sh — start fake-gcs-server (a Google Cloud Storage JSON API emulator) on
# 127.0.0.1 for holdfast's GCS backend tests, in the background, in-memory.
#
# Usage: gcs-start.sh [PORT]              (default $GCS_EMULATOR_PORT or 4443)
# Env:   GCS_EMULATOR_PORT        port to listen on (4443)
#        HOLDFAST_GCS_BUCKET      bucket the tests use, created if missing (holdfast-test)
#        HOLDFAST_SERVICES_DIR    state root (/tmp/holdfast-services)
#        FAKE_GCS_SERVER_BIN      use this binary instead of building one
#
# The binary is built once from its Go module with the machine's Go
# (`go install github.com/fsouza/fake-gcs-server@$VERSION`) into
# .tooling/fake-gcs-server/$VERSION/ of this repository, and reused after that.
# v1.56.1 is the newest release: it enforces ifGenerationMatch on every upload kind
# (create-only and compare-and-swap) but ignores it on delete, so the GCS backend's probe
# turns conditional delete off there.
#
# Idempotent: if the recorded server is alive and answers, it only rewrites the env file.
# Writes $HOLDFAST_SERVICES_DIR/gcs.env with STORAGE_EMULATOR_HOST (which the Google client
# libraries read) and HOLDFAST_GCS_BUCKET; source it or let the tests read it. Stop with
# gcs-stop.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VERSION=v1.56.1
SERVICES=${HOLDFAST_SERVICES_DIR:-/tmp/holdfast-services}
STATE=$SERVICES/gcs
PID_FILE=$STATE/gcs.pid
PORT_FILE=$STATE/port
LOG=$STATE/gcs.log
ENV_FILE=$SERVICES/gcs.env
PORT=${1:-${GCS_EMULATOR_PORT:-4443}}
BUCKET=${HOLDFAST_GCS_BUCKET:-holdfast-test}
CACHE=$ROOT/.tooling/fake-gcs-server/$VERSION

die() { echo "[gcs-start] error: $*" >&2; exit 1; }
log() { echo "[gcs-start] $*" >&2; }

case $PORT in '' | *[!0-9]*) die "port must be a number, got '$PORT'" ;; esac

# A PID counts as running only if it exists and is not a zombie (kill -0 succeeds on zombies).
running() {
  local st
  st=$(cut -d')' -f2 "/proc/$1/stat" 2>/dev/null | awk '{print $1}')
  [ -n "$st" ] && [ "$st" != Z ]
}
# The emulator answers the bucket listing without credentials.
answers() {
  local code
  code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$1/storage/v1/b" 2>/dev/null || true)
  [ "$code" = 200 ]
}

# Creates the test bucket (idempotent: 409 means it exists).
ensure_bucket() {
  local code
  code=$(curl -s -o "$STATE/bucket.out" -m 5 -w '%{http_code}' -X POST \
    -H 'content-type: application/json' -d "{\"name\":\"$BUCKET\"}" \
    "http://127.0.0.1:$1/storage/v1/b" || true)
  case $code in
    200 | 409) ;;
    *) die "fake-gcs-server answers on $1 but creating bucket '$BUCKET' answered $code: $(cat "$STATE/bucket.out" 2>/dev/null)" ;;
  esac
}

write_env() {
  local port=$1 tmp
  tmp=$(mktemp "$SERVICES/.gcs.env.XXXXXX")
  cat >"$tmp" <<ENV
# written by tooling/services/gcs-start.sh; fake-gcs-server $VERSION pid $(cat "$PID_FILE")
GCS_EMULATOR_PORT=$port
STORAGE_EMULATOR_HOST=http://127.0.0.1:$port
HOLDFAST_GCS_BUCKET=$BUCKET
ENV
  mv "$tmp" "$ENV_FILE"
  cat "$ENV_FILE"
}

# Builds the pinned release once; concurrent starts wait for the first build.
build_binary() {
  local bin=$CACHE/fake-gcs-server
  if [ -x "$bin" ]; then echo "$bin"; return; fi
  command -v go >/dev/null 2>&1 || die "go not found: fake-gcs-server is built from its Go module (install Go 1.26 or set FAKE_GCS_SERVER_BIN)"
  mkdir -p "$CACHE"
  (
    flock 9
    if [ ! -x "$bin" ]; then
      log "building fake-gcs-server $VERSION with $(go version | awk '{print $3}') into $CACHE (once, about a minute)"
      local tmp
      tmp=$(mktemp -d "$CACHE/.build.XXXXXX")
      GOBIN=$tmp GOFLAGS=-buildvcs=false GOTOOLCHAIN=local \
        go install "github.com/fsouza/fake-gcs-server@$VERSION" >&2 ||
        { rm -rf "$tmp"; die "go install github.com/fsouza/fake-gcs-server@$VERSION failed (see above)"; }
      mv "$tmp/fake-gcs-server" "$bin"
      rm -rf "$tmp"
    fi
  ) 9>"$CACHE/.build.lock"
  echo "$bin"
}

mkdir -p "$STATE"

# ---------------------------------------------------------------- already running?
if [ -f "$PID_FILE" ] && running "$(cat "$PID_FILE")"; then
  old_port=$(cat "$PORT_FILE" 2>/dev/null || echo "$PORT")
  if answers "$old_port"; then
    [ "$old_port" = "$PORT" ] || log "already running on port $old_port (asked for $PORT); keeping it"
    log "already running (pid $(cat "$PID_FILE"), port $old_port)"
    ensure_bucket "$old_port"
    write_env "$old_port"
    exit 0
  fi
  stale=$(cat "$PID_FILE")
  log "recorded pid $stale is alive but not answering on $old_port; stopping it"
  kill "$stale" 2>/dev/null || true
  for _ in $(seq 1 50); do running "$stale" || break; sleep 0.1; done
  if running "$stale"; then kill -9 "$stale" 2>/dev/null || true; sleep 0.2; fi
fi
rm -f "$PID_FILE" "$PORT_FILE"

code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$PORT/" 2>/dev/null || true)
if [ -n "$code" ] && [ "$code" != 000 ]; then
  die "port $PORT on 127.0.0.1 is already taken by another process; pick another: GCS_EMULATOR_PORT=4453 $0"
fi

BIN=${FAKE_GCS_SERVER_BIN:-$(build_binary)}
[ -x "$BIN" ] || die "fake-gcs-server binary $BIN is not executable"

# ---------------------------------------------------------------- start
# -scheme http: the tests' fault proxy forwards plain HTTP; -backend memory: nothing on disk.
args=(-scheme http -host 127.0.0.1 -port "$PORT" -backend memory -log-level warn
  -external-url "http://127.0.0.1:$PORT")
log "starting $BIN ${args[*]}"
# setsid: the server must outlive this script and the shell that ran it.
setsid "$BIN" "${args[@]}" >"$LOG" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$PID_FILE"
echo "$PORT" >"$PORT_FILE"

for _ in $(seq 1 100); do
  if ! running "$pid"; then
    rm -f "$PID_FILE" "$PORT_FILE"
    die "fake-gcs-server exited during start-up; log $LOG:
$(tail -n 20 "$LOG")"
  fi
  if answers "$PORT"; then
    log "listening on http://127.0.0.1:$PORT (pid $pid, in memory, log $LOG)"
    ensure_bucket "$PORT"
    write_env "$PORT"
    exit 0
  fi
  sleep 0.1
done
kill "$pid" 2>/dev/null || true
rm -f "$PID_FILE" "$PORT_FILE"
die "fake-gcs-server did not answer on 127.0.0.1:$PORT within 10 s; log $LOG:
$(tail -n 20 "$LOG")"
