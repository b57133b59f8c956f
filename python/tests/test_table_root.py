"""The rule "where is the table root, and is this URI inside one"
(conformance/table-root/cases.json), which packages/format-lance/test/table-root.test.ts
runs too: the same outcome and the same number of store requests in both languages, on real
folders of the local file system (docs/guarantees.md, "Where a table is")."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import holdfast
from holdfast.errors import HoldfastError
from holdfast.store import GetResult, ListPage, ObjectMeta
from holdfast.table_root import INSIDE_TABLE, locate_table, refuse_table_location

CASES = Path(__file__).resolve().parents[2] / "conformance" / "table-root" / "cases.json"
DOC = json.loads(CASES.read_text())


class Counted:
    """A store whose list, head and get calls are counted (the rule sends nothing else)."""

    def __init__(self, inner: holdfast.LocalStore, count: list[int]) -> None:
        self.inner = inner
        self.count = count
        self.location = inner.location
        self.capabilities = inner.capabilities
        self.backend = inner.backend

    def list(
        self,
        prefix: str,
        *,
        start_after: str | None = None,
        page_token: str | None = None,
        page_size: int | None = None,
        abort: threading.Event | None = None,
    ) -> ListPage:
        self.count[0] += 1
        return self.inner.list(
            prefix, start_after=start_after, page_token=page_token, page_size=page_size
        )

    def head(self, key: str, *, abort: threading.Event | None = None) -> ObjectMeta | None:
        self.count[0] += 1
        return self.inner.head(key)

    def get(self, key: str, *, abort: threading.Event | None = None) -> GetResult | None:
        self.count[0] += 1
        return self.inner.get(key)


@pytest.fixture(scope="module")
def namespace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("table-root")
    for key in DOC["keys"]:
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    return root


def locate(namespace: Path, uri: str, count: list[int]) -> Any:
    def store_at(segments: Sequence[str]) -> Any:
        path = namespace.joinpath(*segments)
        if not path.is_dir():
            return None
        return Counted(holdfast.LocalStore(path, fsync=False, create_root=False), count)

    return locate_table([s for s in uri.split("/") if s], store_at)


def test_the_file_has_a_case_of_every_outcome() -> None:
    assert {c["expect"]["kind"] for c in DOC["cases"]} == {"table", "inside", "holds", "none"}


@pytest.mark.parametrize("case", DOC["cases"], ids=[c["name"] for c in DOC["cases"]])
def test_case(case: dict[str, Any], namespace: Path) -> None:
    count = [0]
    before = sorted(str(p.relative_to(namespace)) for p in namespace.rglob("*"))
    found = locate(namespace, case["uri"], count)
    seen: dict[str, Any] = {"kind": found.kind}
    if found.kind != "none":
        seen["format"] = found.format
    if found.kind in ("inside", "holds"):
        seen["root"] = "/".join(found.root)
    if found.kind == "inside":
        seen["folder"] = found.folder
        seen["branch"] = found.branch
    assert seen == case["expect"]
    assert count[0] == case["requests"]
    # Locating writes nothing (no store root, lock or temp folder is created).
    assert sorted(str(p.relative_to(namespace)) for p in namespace.rglob("*")) == before


def test_a_branch_folder_is_refused_naming_the_table_root_and_the_branch(
    namespace: Path,
) -> None:
    found = locate(namespace, "db/t.lance/tree/dev", [0])
    with pytest.raises(HoldfastError) as raised:
        refuse_table_location(found, lambda s: "/x/" + "/".join(s))
    assert raised.value.kind == "invalid-input"
    assert raised.value.code == INSIDE_TABLE
    assert raised.value.key == "/x/db/t.lance"
    assert raised.value.hint is not None
    assert 'branch="dev"' in raised.value.hint
    assert os.path.isdir(namespace / "db")
