"""Drives the TypeScript side (``ts_peer.mjs`` over the built workspace packages)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# The workspace whose built packages and CLI the tests drive (default: this repo).
REPO = Path(os.environ.get("HOLDFAST_TS_REPO", HERE.parent.parent))
PEER = HERE / "ts_peer.mjs"
CLI = REPO / "apps" / "cli" / "dist" / "bin.js"


def node() -> str:
    found = os.environ.get("HOLDFAST_NODE") or shutil.which("node")
    if found is None:
        raise RuntimeError("node is needed for the cross-language tests (npm test installs it)")
    return found


def ts(request: dict[str, Any], *, check: bool = True) -> Any:
    """Runs one TypeScript operation; answers its result (or raises with its error)."""
    done = subprocess.run(
        [node(), str(PEER), json.dumps(request)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(
            f"ts_peer printed nothing (exit {done.returncode}): {done.stderr[-2000:]}"
        )
    answer = json.loads(lines[-1])
    if check and not answer["ok"]:
        raise TSError(answer["error"])
    return answer["result"] if answer["ok"] else answer["error"]


class TSError(Exception):
    def __init__(self, shape: dict[str, Any]) -> None:
        super().__init__(shape.get("message"))
        self.shape = shape


def spawn(request: dict[str, Any]) -> subprocess.Popen[str]:
    """Starts a long-running operation (``hold-lock``); it prints one line once ready."""
    process = subprocess.Popen(
        [node(), str(PEER), json.dumps(request)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    ready = process.stdout.readline()
    if '"ok":true' not in ready:
        process.kill()
        raise RuntimeError(
            f"peer did not get ready: {ready} {process.stderr.read() if process.stderr else ''}"
        )
    return process


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs the built ``holdfast`` command line."""
    done = subprocess.run(
        [node(), str(CLI), *args], capture_output=True, text=True, timeout=300, check=False
    )
    if check and done.returncode != 0:
        raise RuntimeError(
            f"holdfast {' '.join(args)} exited {done.returncode}: {done.stdout}{done.stderr}"
        )
    return done
