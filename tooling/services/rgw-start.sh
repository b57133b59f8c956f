#!/usr/bin/env bash
# rgw-start.sh: bring up a real S3 implementation (Ceph RADOS Gateway) for holdfast's tests.
#
# One-node Ceph on 127.0.0.1: one monitor, one memstore OSD (data lives in RAM), and
# radosgw answering S3 on HOLDFAST_RGW_PORT. Installs the Debian packages it needs when they
# are missing (needs root and apt-get). Creates an S3 user with fixed test credentials and a
# test bucket, then writes an env file the tests read.
#
# Usage: tooling/services/rgw-start.sh [--port N] [--reset]
# Env:   HOLDFAST_RGW_PORT      S3 port                      (default 7480)
#        HOLDFAST_RGW_MON_PORT  monitor port (msgr v2)       (default 40790)
#        HOLDFAST_SERVICES_DIR  parent of data dir/env file  (default /tmp/holdfast-services)
#        HOLDFAST_RGW_BUCKET    bucket to create             (default holdfast-test)
#        HOLDFAST_RGW_RESET=1   rebuild even when already running
# Output: $HOLDFAST_SERVICES_DIR/rgw.env (HOLDFAST_S3_* and AWS_* variables); daemon PIDs
#         in $HOLDFAST_SERVICES_DIR/rgw/run/*.pid. Stop with tooling/services/rgw-stop.sh.
# Idempotent: when the recorded daemons run and S3 answers, it only re-checks the user,
# bucket and env file. Otherwise it kills the recorded daemons (never anything else),
# wipes the data dir (memstore keeps nothing worth saving) and builds a fresh cluster.
set -euo pipefail

SERVICES_DIR=${HOLDFAST_SERVICES_DIR:-/tmp/holdfast-services}
PORT=${HOLDFAST_RGW_PORT:-7480}
MON_PORT=${HOLDFAST_RGW_MON_PORT:-40790}
BUCKET=${HOLDFAST_RGW_BUCKET:-holdfast-test}
RESET=${HOLDFAST_RGW_RESET:-0}
while [ $# -gt 0 ]; do
  case $1 in
    --port) PORT=$2; shift 2 ;;
    --port=*) PORT=${1#--port=}; shift ;;
    --reset) RESET=1; shift ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "rgw-start: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

# Fixed, public test credentials: this gateway only listens on 127.0.0.1.
ACCESS_KEY=HOLDFASTTESTKEY00001
SECRET_KEY=holdfast-test-secret-0000000000000000001
REGION=us-east-1
DATA=$SERVICES_DIR/rgw
ENV_FILE=$SERVICES_DIR/rgw.env
CONF=$DATA/ceph.conf
ENDPOINT=http://127.0.0.1:$PORT
DAEMONS=(mon.a osd.0 client.rgw.holdfast)
STARTED=$(date +%s%N)

say() { printf '[rgw-start +%ss] %s\n' "$(elapsed)" "$*" >&2; }
elapsed() { local ns=$(($(date +%s%N) - STARTED)); printf '%d.%d' $((ns / 1000000000)) $((ns / 100000000 % 10)); }
STARTED_DAEMONS=0
die() {
  printf '[rgw-start] cannot start RGW: %s\n' "$*" >&2
  # Leave nothing half-started behind: stop the daemons this run recorded.
  [ "$STARTED_DAEMONS" = 1 ] && stop_recorded
  exit 1
}

mkdir -p "$SERVICES_DIR"

# ---------------------------------------------------------------- Debian packages
missing=()
for pair in ceph-mon:ceph-mon ceph-osd:ceph-osd radosgw:radosgw radosgw-admin:radosgw \
  ceph:ceph-common monmaptool:ceph-common curl:curl uuidgen:uuid-runtime; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  [ "$(id -u)" = 0 ] || die "packages missing (${missing[*]}) and not root: install them with apt-get first"
  command -v apt-get >/dev/null 2>&1 || die "packages missing (${missing[*]}) and apt-get not found (Debian/Ubuntu needed)"
  say "installing ${missing[*]} (apt-get, ~40 s on a fresh machine)"
  apt-get update -q >"$SERVICES_DIR/rgw-apt.log" 2>&1 || die "apt-get update failed; see $SERVICES_DIR/rgw-apt.log"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
    >>"$SERVICES_DIR/rgw-apt.log" 2>&1 || die "apt-get install ${missing[*]} failed; see $SERVICES_DIR/rgw-apt.log"
  say "packages installed"
fi

# ---------------------------------------------------------------- helpers
# A PID counts as running only if it exists and is not a zombie: exited Ceph daemons
# linger as zombies, and kill -0 succeeds on those.
is_running() {
  local state
  state=$(sed -E 's/^.*\) ([A-Za-z]).*$/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}
# A recorded PID is ours only if that process was started with our ceph.conf: a PID file
# that outlived its daemon may name an unrelated process by now.
is_ours() { is_running "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$CONF"; }
recorded_alive() { [ -f "$DATA/run/$1.pid" ] && is_ours "$(cat "$DATA/run/$1.pid")"; }
# S3 answers only if the answer carries RGW's request id (not merely anything on the port).
s3_answers() { curl -s -D - -o /dev/null -m 2 "$ENDPOINT/" 2>/dev/null | grep -qi '^x-amz-request-id:'; }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
stop_recorded() {
  local d f pid
  for d in client.rgw.holdfast osd.0 mon.a; do
    f=$DATA/run/$d.pid
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if is_ours "$pid"; then
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 50); do is_running "$pid" || break; sleep 0.1; done
    fi
    rm -f "$f"
  done
}
ceph_cli() { ceph -c "$CONF" --connect-timeout 10 "$@"; }

ensure_user_bucket_env() {
  if ! radosgw-admin -c "$CONF" user info --uid=holdfast >/dev/null 2>&1; then
    radosgw-admin -c "$CONF" user create --uid=holdfast --display-name="holdfast tests" \
      --access-key="$ACCESS_KEY" --secret="$SECRET_KEY" >/dev/null 2>>"$DATA/log/admin.log" ||
      die "radosgw-admin user create failed; see $DATA/log/admin.log"
  fi
  # Bucket creation through S3 itself, SigV4-signed by curl. RGW rejects the signature unless
  # x-amz-content-sha256 is sent (here: SHA-256 of the empty body). 409 = already ours: fine.
  local status
  status=$(curl -s -o "$DATA/log/create-bucket.xml" -w '%{http_code}' -m 10 -X PUT \
    -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
    --aws-sigv4 "aws:amz:$REGION:s3" --user "$ACCESS_KEY:$SECRET_KEY" "$ENDPOINT/$BUCKET") || status=000
  case $status in
    200 | 409) ;;
    *) die "creating bucket $BUCKET answered HTTP $status; see $DATA/log/create-bucket.xml" ;;
  esac
  local tmp=$ENV_FILE.tmp.$$
  cat >"$tmp" <<EOF
# Written by tooling/services/rgw-start.sh; local Ceph RGW test gateway.
HOLDFAST_S3_ENDPOINT=$ENDPOINT
HOLDFAST_S3_BUCKET=$BUCKET
HOLDFAST_S3_REGION=$REGION
HOLDFAST_S3_PATH_STYLE=true
AWS_ACCESS_KEY_ID=$ACCESS_KEY
AWS_SECRET_ACCESS_KEY=$SECRET_KEY
EOF
  mv "$tmp" "$ENV_FILE"
  say "ready: $ENDPOINT bucket=$BUCKET env=$ENV_FILE"
  cat "$ENV_FILE" | grep -v '^#'
}

# ---------------------------------------------------------------- already running?
if [ "$RESET" != 1 ] && [ -f "$DATA/port" ] && [ "$(cat "$DATA/port")" = "$PORT" ]; then
  all=1
  for d in "${DAEMONS[@]}"; do recorded_alive "$d" || all=0; done
  if [ $all = 1 ] && s3_answers; then
    say "already running"
    grep -q 'tcp_nodelay=1' "$CONF" ||
      say "note: this gateway was started without tcp_nodelay (GET/LIST answers ~44 ms late); rebuild it with --reset when nobody is using it"
    ensure_user_bucket_env
    exit 0
  fi
fi

# ---------------------------------------------------------------- stop leftovers we recorded
[ -d "$DATA/run" ] && stop_recorded
port_busy "$PORT" && die "port $PORT is already in use by another process (pick another: --port N or HOLDFAST_RGW_PORT)"
port_busy "$MON_PORT" && die "monitor port $MON_PORT is already in use (pick another: HOLDFAST_RGW_MON_PORT)"
rm -rf "$DATA"
mkdir -p "$DATA"/{run,log,mon.a,osd.0,rgw,crash}
echo "$PORT" >"$DATA/port"

cat >"$CONF" <<EOF
[global]
fsid = 3d6f0b52-9a41-4c1e-8e57-6b0a1d7c2f19
mon host = v2:127.0.0.1:$MON_PORT
mon initial members = a
public addr = 127.0.0.1
ms bind ipv6 = false
ms bind msgr1 = false
# Test cluster on loopback: no cephx. With auth none every messenger must use crc mode,
# otherwise radosgw insists on secure mode towards the monitor and loops on EACCES.
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
ms mon service mode = crc
ms mon cluster mode = crc
ms client mode = crc
ms service mode = crc
ms cluster mode = crc
keyring = /dev/null
run dir = $DATA/run
pid file = $DATA/run/\$name.pid
admin socket = $DATA/run/\$name.asok
log file = $DATA/log/\$name.log
crash dir = $DATA/crash
# One OSD: size-1 pools with few placement groups, no autoscaler (there is no mgr).
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
mon max pg per osd = 1000
mon data avail warn = 1
mon data avail crit = 0
mgr initial modules =
# Commit maps quickly: radosgw creates its pools at start and waits on each (13 s -> 2 s).
paxos propose interval = 0.05
paxos min wait = 0.01

[mon]
mon data = $DATA/\$name

[osd]
osd data = $DATA/\$name
osd objectstore = memstore
memstore device bytes = 2147483648
osd crush update on start = true
osd class load list = *
osd class default list = *

[client.rgw.holdfast]
# tcp_nodelay: without it beast's replies to sequential GET, LIST and DeleteObjects wait on
# the client's delayed ACK (~44 ms each instead of ~3 ms); real S3 does not stall like that,
# so latency and benchmark figures taken on this gateway would mean nothing.
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw data = $DATA/rgw
rgw thread pool size = 64
rgw enable usage log = false
rgw dns name = 127.0.0.1
# Free overwritten objects soon (default 2 h): memstore holds every byte in RAM.
rgw gc obj min wait = 10
rgw gc processor period = 10
EOF
export CEPH_CONF=$CONF

# ---------------------------------------------------------------- monitor
STARTED_DAEMONS=1
monmaptool --create --clobber --fsid 3d6f0b52-9a41-4c1e-8e57-6b0a1d7c2f19 \
  --addv a "[v2:127.0.0.1:$MON_PORT]" "$DATA/monmap" >/dev/null
ceph-mon -c "$CONF" --mkfs -i a --monmap "$DATA/monmap" 2>>"$DATA/log/mkfs.log" ||
  die "ceph-mon --mkfs failed; see $DATA/log/mkfs.log"
ceph-mon -c "$CONF" -i a 2>>"$DATA/log/mkfs.log" ||
  die "ceph-mon did not start (port $MON_PORT busy? set HOLDFAST_RGW_MON_PORT); see $DATA/log/mon.a.log"
for _ in $(seq 100); do ceph_cli -s >/dev/null 2>&1 && break; sleep 0.2; done
ceph_cli -s >/dev/null 2>&1 || die "monitor did not answer within 20 s; see $DATA/log/mon.a.log"
say "monitor up"

# ---------------------------------------------------------------- OSD on memstore
osd_uuid=$(uuidgen)
osd_id=$(ceph_cli osd new "$osd_uuid" 2>>"$DATA/log/mkfs.log") || die "ceph osd new failed"
[ "$osd_id" = 0 ] || die "expected osd id 0, got $osd_id"
ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" >>"$DATA/log/mkfs.log" 2>&1 ||
  die "ceph-osd --mkfs failed; see $DATA/log/mkfs.log"
ceph-osd -c "$CONF" -i 0 2>>"$DATA/log/mkfs.log" || die "ceph-osd did not start; see $DATA/log/osd.0.log"
for _ in $(seq 150); do ceph_cli osd stat 2>/dev/null | grep -q ' 1 up' && break; sleep 0.2; done
ceph_cli osd stat 2>/dev/null | grep -q ' 1 up' || die "osd.0 not up within 30 s; see $DATA/log/osd.0.log"
say "osd up"

# ---------------------------------------------------------------- radosgw
radosgw -c "$CONF" -n client.rgw.holdfast 2>>"$DATA/log/mkfs.log" ||
  die "radosgw did not start; see $DATA/log/client.rgw.holdfast.log"
for i in $(seq 300); do
  s3_answers && break
  # radosgw daemonizes at once; if it is gone a few seconds later it failed (see its log).
  [ "$i" -gt 25 ] && ! recorded_alive client.rgw.holdfast && die "radosgw exited; see $DATA/log/client.rgw.holdfast.log"
  sleep 0.2
done
s3_answers || die "radosgw did not answer on $ENDPOINT within 60 s; see $DATA/log/client.rgw.holdfast.log"
say "radosgw answering"

ensure_user_bucket_env
