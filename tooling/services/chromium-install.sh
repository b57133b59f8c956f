#!/usr/bin/env bash
# chromium-install.sh: Debian's Chromium for the dashboard's browser tests (apps/server),
# driven by playwright-core (no browser download: `playwright install` cannot work here).
# Idempotent: does nothing when /usr/bin/chromium exists. Needs root and apt-get otherwise.
set -euo pipefail
SERVICES_DIR=${HOLDFAST_SERVICES_DIR:-/tmp/holdfast-services}
[ -x /usr/bin/chromium ] && exit 0
die() { echo "[chromium] $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "chromium is missing and this is not root: apt-get install -y chromium"
command -v apt-get >/dev/null 2>&1 || die "chromium is missing and apt-get was not found (Debian needed)"
mkdir -p "$SERVICES_DIR"
echo "[chromium] installing chromium (apt-get)" >&2
apt-get update -q >"$SERVICES_DIR/chromium-apt.log" 2>&1 || die "apt-get update failed; see $SERVICES_DIR/chromium-apt.log"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >>"$SERVICES_DIR/chromium-apt.log" 2>&1 ||
  die "apt-get install chromium failed; see $SERVICES_DIR/chromium-apt.log"
[ -x /usr/bin/chromium ] || die "chromium installed but /usr/bin/chromium is missing"
