"""Under ``npm test`` the suite runs against the installed wheel, never the source tree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import holdfast


def pytest_report_header() -> str:
    return f"holdfast {holdfast.__version__} from {Path(holdfast.__file__).parent}"


if os.environ.get("HOLDFAST_WHEEL_UNDER_TEST"):
    where = Path(holdfast.__file__).resolve()
    if not where.is_relative_to(Path(sys.prefix).resolve()):
        raise RuntimeError(f"holdfast was imported from {where}, not from the installed wheel")


# No test is skipped (python/README.md, "Tests"): a skip fails the run, so a missing
# service or package can never pass as a green run.
_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped:
        print(f"\n{len(_skipped)} test(s) skipped, which fails the run: {_skipped[:5]}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
