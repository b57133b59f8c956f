#!/usr/bin/env bash
# Installs what the repo needs on a machine that has only an older Node and npm: Node 26 (the
# active LTS, the pinned official binary from the npm registry, tooling/scripts/node-install.sh)
# and pnpm 12.4.2 into .tooling/ (no global install needed), then the workspace's packages.
# Source it: `. tooling/scripts/bootstrap.sh`; it puts that Node first on PATH, so everything
# after it (pnpm, turbo, tsc, vitest, the CLI and servers the tests spawn, `node -e` in scripts)
# runs on Node 26, and pnpm on PATH.
set -euo pipefail
HOLDFAST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export HOLDFAST_ROOT
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
HOLDFAST_NODE_BIN=$(bash "$HOLDFAST_ROOT/tooling/scripts/node-install.sh" 26)
export HOLDFAST_NODE_BIN
case ":$PATH:" in
  ":$HOLDFAST_NODE_BIN:"*) ;;
  *) export PATH="$HOLDFAST_NODE_BIN:$PATH" ;;
esac
# `npm test` / `npm run` export the Node that runs npm (the machine's) to scripts: point them
# at this one, and node-gyp at its headers, so no tool falls back to the machine's Node.
export NODE="$HOLDFAST_NODE_BIN/node" npm_node_execpath="$HOLDFAST_NODE_BIN/node"
export npm_config_nodedir
npm_config_nodedir=$(dirname "$HOLDFAST_NODE_BIN")
hash -r
PNPM_VERSION=12.4.2
if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  if [ ! -x "$HOLDFAST_ROOT/.tooling/node_modules/.bin/pnpm" ]; then
    echo "[bootstrap] installing pnpm $PNPM_VERSION into .tooling/" >&2
    npm install --silent --no-audit --no-fund --prefix "$HOLDFAST_ROOT/.tooling" -E "pnpm@$PNPM_VERSION" >&2
  fi
  export PATH="$HOLDFAST_ROOT/.tooling/node_modules/.bin:$PATH"
fi
cd "$HOLDFAST_ROOT"
echo "[bootstrap] Node $(node --version), pnpm install --frozen-lockfile" >&2
pnpm install --frozen-lockfile --reporter=silent >&2
