#!/usr/bin/env bash
# `npm run demo:lance`: LanceDB writes a Lance table in a local directory (default
# ./holdfast-lance-demo); Lance's own cleanup breaks a reader of an old version on a copy,
# holdfast's cleanup keeps the leased version and retires it once the lease ends.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$HOLDFAST_ROOT"
dir="$(realpath -m "${1:-./holdfast-lance-demo}")"
exec pnpm --silent --filter @holdfast/format-lance demo "$dir"
