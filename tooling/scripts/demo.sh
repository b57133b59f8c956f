#!/usr/bin/env bash
# The README's first command: installs what is needed, builds the CLI and runs
# `holdfast demo` on a local directory (default ./holdfast-demo).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$HOLDFAST_ROOT"
pnpm turbo run build --filter=@holdfast/cli... --output-logs=errors-only >&2
exec node apps/cli/dist/bin.js demo "${1:-./holdfast-demo}"
