#!/usr/bin/env bash
# The whole test suite, on a fresh machine with any Node + npm: installs Node 26 (everything
# below runs on it, bootstrap.sh), pnpm and the packages, starts the real test services
# (Ceph RGW, Azurite, fake-gcs-server), builds, typechecks, runs
# every vitest project and the Python package's checks (tooling/scripts/python-package.sh),
# stops the services, and prints "N passed, N failed" over both. The repo's one
# Python environment (.venv/, pylance as the Lance oracle) is created first; tests find its
# interpreter in HOLDFAST_PYTHON.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$HOLDFAST_ROOT"
HOLDFAST_PYTHON=$(bash tooling/scripts/python-env.sh) || { echo "[test] FAILED: the Python test environment could not be created (see above)" >&2; exit 1; }
export HOLDFAST_PYTHON

services_dir=${HOLDFAST_SERVICES_DIR:-/tmp/holdfast-services}
export HOLDFAST_SERVICES_DIR=$services_dir
stop_services() {
  bash tooling/services/gcs-stop.sh >/dev/null 2>&1 || true
  bash tooling/services/azurite-stop.sh >/dev/null 2>&1 || true
  bash tooling/services/rgw-stop.sh >/dev/null 2>&1 || true
}
trap stop_services EXIT

echo "[test] starting Ceph RGW and Azurite" >&2
bash tooling/services/rgw-start.sh >&2 || { echo "[test] FAILED: Ceph RGW did not start (see above)" >&2; exit 1; }
bash tooling/services/azurite-start.sh >&2 || { echo "[test] FAILED: Azurite did not start (see above)" >&2; exit 1; }
bash tooling/services/gcs-start.sh >&2 || { echo "[test] FAILED: fake-gcs-server did not start (see above)" >&2; exit 1; }
bash tooling/services/chromium-install.sh >&2 || { echo "[test] FAILED: Chromium (browser tests) could not be installed (see above)" >&2; exit 1; }
set -a
. "$services_dir/rgw.env"
. "$services_dir/azurite.env"
. "$services_dir/gcs.env"
set +a

echo "[test] lint, build and typecheck" >&2
pnpm biome check .
pnpm turbo run build typecheck --output-logs=errors-only

echo "[test] vitest" >&2
report=$(mktemp -t holdfast-vitest-XXXXXX.json)
status=0
pnpm vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?

echo "[test] python package (wheel, ruff, mypy --strict, pytest)" >&2
py_report=$(mktemp -t holdfast-pytest-XXXXXX.xml)
py_status=0
bash tooling/scripts/python-package.sh "$py_report" || py_status=$?
node -e '
  const fs = require("fs");
  const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  // pytest junit: <testsuite tests= failures= errors= skipped=> (absent if it never ran)
  const x = (fs.readFileSync(process.argv[3], "utf8").match(/<testsuite\b[^>]*>/) ?? [""])[0];
  const n = (k) => Number((x.match(new RegExp(`\\b${k}="(\\d+)"`)) ?? [0, 0])[1]);
  const pyFailed = n("failures") + n("errors");
  const pyPassed = n("tests") - pyFailed - n("skipped");
  const skipped = r.numPendingTests + r.numTodoTests + n("skipped");
  // Unhandled errors (or a Python step that failed outside a test) fail the run without failing a test: count one.
  const failed = r.numFailedTests + (process.argv[2] !== "0" && r.numFailedTests === 0 ? 1 : 0)
    + pyFailed + (process.argv[4] !== "0" && pyFailed === 0 ? 1 : 0);
  console.log(`${r.numPassedTests + pyPassed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
' "$report" "$status" "$py_report" "$py_status" || true
[ "$status" = 0 ] || exit "$status"
exit $py_status
