#!/usr/bin/env bash
# Installs what the repo needs on a machine that has only Node 20 and npm:
# pnpm 12.4.2 (into .tooling/, no global install needed) and the workspace's packages.
# Source it: `. tooling/scripts/bootstrap.sh`; it puts pnpm on PATH.
set -euo pipefail
HOLDFAST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export HOLDFAST_ROOT
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
PNPM_VERSION=12.4.2
if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  if [ ! -x "$HOLDFAST_ROOT/.tooling/node_modules/.bin/pnpm" ]; then
    echo "[bootstrap] installing pnpm $PNPM_VERSION into .tooling/" >&2
    npm install --silent --no-audit --no-fund --prefix "$HOLDFAST_ROOT/.tooling" -E "pnpm@$PNPM_VERSION" >&2
  fi
  export PATH="$HOLDFAST_ROOT/.tooling/node_modules/.bin:$PATH"
fi
cd "$HOLDFAST_ROOT"
echo "[bootstrap] pnpm install --frozen-lockfile" >&2
pnpm install --frozen-lockfile --reporter=silent >&2
