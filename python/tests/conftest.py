"""Under ``npm test`` the suite runs against the installed wheel, never the source tree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import holdfast


def pytest_report_header() -> str:
    return f"holdfast {holdfast.__version__} from {Path(holdfast.__file__).parent}"


if os.environ.get("HOLDFAST_WHEEL_UNDER_TEST"):
    where = Path(holdfast.__file__).resolve()
    if not where.is_relative_to(Path(sys.prefix).resolve()):
        raise RuntimeError(f"holdfast was imported from {where}, not from the installed wheel")
