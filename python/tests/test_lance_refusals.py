"""What ``holdfast.lance.checkout`` refuses, before any lease is taken (docs/lance.md, "What
it refuses", "Feature flags", "The manifest file"): the refusals of ``@holdfast/format-lance``
on read, one test per case on a pylance-written table (version 3 of a 5-version table gets
one thing pylance never writes, as ``packages/format-lance/test/refusals.test.ts`` builds
its cases). Every refusal is a typed error naming the feature (``UnsupportedLanceDatasetError``
with ``feature`` and ``flag``) or the damage (LANCE_MALFORMED_MANIFEST), and the checkout
wrote nothing: no lease, no object under ``_holdfast/``."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import lance
import pytest

import holdfast
import holdfast.lance as hl
from helpers import FaultStore
from holdfast.errors import HoldfastError
from holdfast.store import Precondition
from lance_tables import (
    LanceSite,
    append_to_manifest,
    branch_table,
    data_file,
    fragment,
    index,
    keys,
    lance_site,
    manifest_parts,
    message,
    overwrite_table,
    rebuild,
    scalar,
    text,
    total,
    varint,
    with_index_section,
)
from peer import ts
from stores import peer_spec

UUID = bytes(range(16))


@dataclass(frozen=True)
class Case:
    name: str
    damage: Callable[[bytes], bytes]
    code: str
    feature: str | None = None
    flag: str | None = None


def extra(fields: bytes) -> Callable[[bytes], bytes]:
    return lambda data: append_to_manifest(data, fields)


def external(number: int, path: str) -> Callable[[bytes], bytes]:
    """A fragment whose row-id (6), last-updated (8) or created (10) sequence is a file."""
    return extra(fragment(900, message(number, text(1, path) + scalar(3, 8))))


def truncated_after_footer(data: bytes) -> bytes:
    before, body, footer = manifest_parts(data)
    return before + len(body).to_bytes(4, "little") + body + b"\0" + footer  # one stray byte


def position_outside(data: bytes) -> bytes:
    return data[:-16] + (len(data) + 8).to_bytes(8, "little") + data[-8:]


def raw_body(body_extra: bytes) -> Callable[[bytes], bytes]:
    """Appends raw bytes (not necessarily a well-formed field) to the Manifest message."""

    def damage(data: bytes) -> bytes:
        before, body, footer = manifest_parts(data)
        return rebuild(before, body + body_extra, footer)

    return damage


def section_past_footer(data: bytes) -> bytes:
    """An index section whose length prefix claims two bytes more than lie before the footer.
    It is the tail of the Manifest message (the content of an unknown field 99), and the
    manifest's position is chosen so that the footer's first two bytes read as one more
    well-formed field (0x78: field 15, a varint): the over-long section decodes, and only
    the bounds check refuses it."""
    before, body, footer = manifest_parts(data)
    section = index("idx", UUID)
    position = len(before)
    while position & 0xFF != 0x78 or (position >> 8) & 0xFF >= 0x80:
        position += 1
    before += b"\0" * (position - len(before))
    content = (len(section) + 2).to_bytes(4, "little") + section
    prefix = varint((99 << 3) | 2) + varint(len(content))
    for width in range(1, 11):
        at = position + 4 + len(body) + len(varint(6 << 3)) + width + len(prefix)
        if len(varint(at)) == width:
            return rebuild(before, body + scalar(6, at) + prefix + content, footer)
    raise AssertionError("no position fits")


MALFORMED = "LANCE_MALFORMED_MANIFEST"
UNSUPPORTED = "LANCE_UNSUPPORTED"
READER = "reader-feature-flags"
WRITER = "writer-feature-flags"

CASES = [
    # Feature flags (docs/lance.md table): every unimplemented bit by name, in either word.
    Case(
        "reader flag 64",
        extra(scalar(9, 64) + scalar(10, 64)),
        UNSUPPORTED,
        READER,
        "unstable-data-overlay-files",
    ),
    Case(
        "reader flag 512",
        extra(scalar(9, 512) + scalar(10, 512)),
        UNSUPPORTED,
        READER,
        "frag-reuse-with-stable-row-ids",
    ),
    Case("reader flag 1024", extra(scalar(9, 1024)), UNSUPPORTED, READER, "fragment-reuse-index"),
    Case("reader bit 4096", extra(scalar(9, 4096)), UNSUPPORTED, READER, "unknown-bit-12"),
    Case("writer bit 4096", extra(scalar(10, 4096)), UNSUPPORTED, WRITER, "unknown-bit-12"),
    Case("writer flag 1024", extra(scalar(10, 1024)), UNSUPPORTED, WRITER, "fragment-reuse-index"),
    Case("writer bit 2^40", extra(scalar(10, 1 << 40)), UNSUPPORTED, WRITER, "unknown-bit-40"),
    Case("reader bit 256 without its writer bit", extra(scalar(9, 256)), MALFORMED),
    Case("writer bit 2048 without its reader bit", extra(scalar(10, 2048)), MALFORMED),
    # base_id without its base path, on each kind of file that names one.
    Case(
        "a data file's base_id names no base path",
        extra(fragment(901, data_file("x.lance", 7))),
        UNSUPPORTED,
        "base-paths",
    ),
    Case(
        "an overlay data file's base_id names no base path",
        extra(fragment(902, message(11, message(1, text(1, "o.lance") + scalar(7, 7))))),
        UNSUPPORTED,
        "base-paths",
    ),
    Case(
        "a deletion file's base_id names no base path",
        extra(fragment(903, message(3, scalar(1, 0) + scalar(2, 3) + scalar(3, 1) + scalar(7, 7)))),
        UNSUPPORTED,
        "base-paths",
    ),
    Case(
        "an index's base_id names no base path",
        lambda data: with_index_section(data, index("idx", UUID, 7)),
        UNSUPPORTED,
        "base-paths",
    ),
    # Row-id and version-sequence files outside the table's own folders.
    Case("row ids in ../", external(6, "../elsewhere/rows.bin"), UNSUPPORTED, "external-file"),
    Case(
        "last-updated versions at an absolute path",
        external(8, "/data/rows.bin"),
        UNSUPPORTED,
        "external-file",
    ),
    Case(
        "created versions under _versions/",
        external(10, "_versions/rows.bin"),
        UNSUPPORTED,
        "external-file",
    ),
    Case("row ids under _refs/", external(6, "_refs/rows.bin"), UNSUPPORTED, "external-file"),
    Case("row ids under tree/", external(6, "tree/dev/rows.bin"), UNSUPPORTED, "external-file"),
    Case(
        "row ids under _holdfast/", external(6, "_holdfast/rows.bin"), UNSUPPORTED, "external-file"
    ),
    Case(
        "row ids under _mem_wal/", external(6, "_mem_wal/0/rows.bin"), UNSUPPORTED, "external-file"
    ),
    Case(
        "row ids with an empty segment", external(6, "data//rows.bin"), UNSUPPORTED, "external-file"
    ),
    Case("row ids through ./", external(6, "./rows.bin"), UNSUPPORTED, "external-file"),
    Case("row ids with a backslash", external(6, "data\\rows.bin"), UNSUPPORTED, "external-file"),
    Case("row ids with an empty path", external(6, ""), UNSUPPORTED, "external-file"),
    # Corrupt or mismatched manifests.
    Case("a manifest that names another version", extra(scalar(3, 99)), MALFORMED),
    Case("the magic is not LANC", lambda d: d[:-4] + b"LANX", MALFORMED),
    Case("shorter than its footer", lambda d: d[-12:], MALFORMED),
    Case("the position points past the file", position_outside, MALFORMED),
    Case("the message does not end at the footer", truncated_after_footer, MALFORMED),
    Case("a varint runs past the message", raw_body(varint(9 << 3) + b"\x80"), MALFORMED),
    Case("a length runs past the message", raw_body(varint((18 << 3) | 2) + varint(50)), MALFORMED),
    Case("field number 0", raw_body(b"\x00\x01"), MALFORMED),
    Case("a group", raw_body(varint((30 << 3) | 3)), MALFORMED),
    Case("reader flags sent as bytes", extra(message(9, b"\x40")), MALFORMED),
    Case(
        "a data file path that is not UTF-8",
        extra(fragment(904, message(2, message(1, b"\xff\xfe")))),
        MALFORMED,
    ),
    Case("the index section lies outside the file", extra(scalar(6, 1 << 40)), MALFORMED),
    Case("the index section runs past the footer", section_past_footer, MALFORMED),
    Case("an index without a uuid", lambda d: with_index_section(d, index("idx", None)), MALFORMED),
    Case(
        "an index with a 15-byte uuid",
        lambda d: with_index_section(d, index("i", UUID[:15])),
        MALFORMED,
    ),
    Case(
        "an IndexSection that does not decode",
        lambda d: with_index_section(d, b"\x0a\x05\x01"),
        MALFORMED,
    ),
]


def recording(site: LanceSite) -> FaultStore:
    """The table's store, recording every request (and losing none)."""
    return FaultStore(site.store)


def assert_wrote_nothing(store: FaultStore, site: LanceSite) -> None:
    writes = [(op, key) for op, key in store.calls if op in ("put", "delete")]
    assert writes == [], writes
    assert keys(site.store, "_holdfast/") == []


def refused(
    site: LanceSite, *, version: int = 3, branch: str = "main"
) -> tuple[HoldfastError, FaultStore]:
    store = recording(site)
    with (
        pytest.raises(HoldfastError) as caught,
        hl.checkout(site.uri, version=version, branch=branch, ttl=30, store=store),
    ):
        pass
    assert_wrote_nothing(store, site)
    return caught.value, store


@pytest.fixture
def site(tmp_path: Path) -> LanceSite:
    s = lance_site("local", tmp_path)
    overwrite_table(s, 5)
    return s


def manifest_path(site: LanceSite, version: int, branch: str = "main") -> Path:
    return Path(site.uri) / hl.lance_manifest_key("v2", version, branch)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_manifest_holdfast_cannot_protect_is_refused_before_any_lease(
    site: LanceSite, case: Case
) -> None:
    path = manifest_path(site, 3)
    path.write_bytes(case.damage(path.read_bytes()))
    error, _ = refused(site)
    assert error.code == case.code, repr(error)
    assert error.key == hl.lance_manifest_key("v2", 3)
    if case.code == UNSUPPORTED:
        assert isinstance(error, hl.UnsupportedLanceDatasetError)
        assert error.kind == "unsupported"
        assert error.feature == case.feature
        assert error.flag == case.flag
        assert error.to_dict()["feature"] == case.feature
    else:
        assert error.kind == "invalid-input"
    # Only the damaged version is refused: its neighbours are still checked out and read.
    with hl.checkout(site.uri, version=4, ttl=30) as co:
        assert total(co.dataset) == sum(range(400, 410))


def test_the_unmodified_table_checks_out_at_every_version(site: LanceSite) -> None:
    """The control for every case above: pylance's own manifests pass every check."""
    for version in range(1, 6):
        with hl.checkout(site.uri, version=version, ttl=30) as co:
            assert total(co.dataset) == sum(range(version * 100, version * 100 + 10))
    assert keys(site.store, "_holdfast/") == []


def test_a_version_that_does_not_exist_is_refused_before_any_lease(site: LanceSite) -> None:
    error, _ = refused(site, version=9)
    assert (error.kind, error.code) == ("not-found", "VERSION_NOT_FOUND")


def test_a_detached_version_is_refused_by_name(site: LanceSite) -> None:
    shutil.copy(manifest_path(site, 2), Path(site.uri) / "_versions" / "d7.manifest")
    error, _ = refused(site)
    assert isinstance(error, hl.UnsupportedLanceDatasetError)
    assert (error.feature, error.key) == ("detached-version", "_versions/d7.manifest")
    assert same_refusal(ts_read(site, 3), error)


def test_mixed_manifest_naming_is_refused_by_name(site: LanceSite) -> None:
    shutil.copy(manifest_path(site, 2), Path(site.uri) / "_versions" / "2.manifest")
    error, _ = refused(site)
    assert isinstance(error, hl.UnsupportedLanceDatasetError)
    assert error.feature == "mixed-naming"
    assert same_refusal(ts_read(site, 3), error)


def test_a_manifest_replaced_after_it_was_checked_is_refused_and_its_lease_removed(
    site: LanceSite,
) -> None:
    """Between the check and the lease the version is retired and written again (another
    object at the same key): the acquire's manifest read after its write sees another ETag,
    removes its lease and refuses (MANIFEST_CHANGED)."""
    path = manifest_path(site, 3)
    original = path.read_bytes()
    replaced: list[str] = []

    class Replacing(FaultStore):
        def put(
            self,
            key: str,
            body: bytes,
            *,
            precondition: Precondition | None = None,
            abort: threading.Event | None = None,
        ) -> str:
            if key.startswith("_holdfast/leases/") and not replaced:
                replaced.append(key)
                path.unlink()
                path.write_bytes(original)  # the same bytes, another object (a new ETag)
            return super().put(key, body, precondition=precondition, abort=abort)

    store = Replacing(site.store)
    with (
        pytest.raises(HoldfastError, check=lambda e: e.code == "MANIFEST_CHANGED"),
        hl.checkout(site.uri, version=3, ttl=30, store=store),
    ):
        pass
    assert keys(site.store, "_holdfast/leases/") == []


# --- branches ---


@pytest.fixture
def branched(tmp_path: Path) -> LanceSite:
    s = lance_site("local", tmp_path)
    branch_table(s)
    return s


def test_a_refusal_on_a_branch_manifest_is_met_under_tree(branched: LanceSite) -> None:
    path = manifest_path(branched, 4, "dev")
    path.write_bytes(append_to_manifest(path.read_bytes(), scalar(9, 1024)))
    error, _ = refused(branched, version=4, branch="dev")
    assert isinstance(error, hl.UnsupportedLanceDatasetError)
    assert (error.feature, error.flag) == ("reader-feature-flags", "fragment-reuse-index")
    assert error.key == hl.lance_manifest_key("v2", 4, "dev")
    assert same_refusal(ts_read(branched, 4, "dev"), error)


def test_mixed_naming_on_a_branch_is_refused_there(branched: LanceSite) -> None:
    folder = Path(branched.uri) / "tree" / "dev" / "_versions"
    shutil.copy(manifest_path(branched, 3, "dev"), folder / "3.manifest")
    error, _ = refused(branched, version=4, branch="dev")
    assert isinstance(error, hl.UnsupportedLanceDatasetError)
    assert (error.feature, error.key) == ("mixed-naming", "tree/dev/_versions/3.manifest")
    assert same_refusal(ts_read(branched, 4, "dev"), error)
    with hl.checkout(branched.uri, version=3, ttl=30) as co:  # main is not that branch
        assert co.naming == "v2"


def test_a_branch_folder_without_its_json_is_refused_as_a_zombie(branched: LanceSite) -> None:
    (Path(branched.uri) / "_refs" / "branches" / "dev.json").unlink()
    error, _ = refused(branched, version=4, branch="dev")
    assert isinstance(error, hl.UnsupportedLanceDatasetError)
    assert (error.feature, error.key) == ("zombie-branch", "_refs/branches/dev.json")


def test_a_branch_whose_parent_json_is_gone_is_refused_as_a_zombie(tmp_path: Path) -> None:
    site = lance_site("local", tmp_path)
    overwrite_table(site, 2)
    dev = lance.dataset(site.uri).create_branch("dev", 2)
    dev = lance.write_dataset(lance_rows(), dev, mode="append")
    dev.create_branch("feat", ("dev", 3))
    (Path(site.uri) / "_refs" / "branches" / "dev.json").unlink()
    error, _ = refused(site, version=3, branch="feat")
    assert isinstance(error, hl.UnsupportedLanceDatasetError)
    assert (error.feature, error.key) == ("zombie-branch", "_refs/branches/dev.json")


def lance_rows() -> object:
    import pyarrow as pa

    return pa.table({"x": [7]})


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"parentBranch": null}',
        b'{"parentVersion": "2"}',
        b'{"parentVersion": 2, "parentBranch": 5}',
    ],
)
def test_an_unreadable_branch_json_is_refused(branched: LanceSite, body: bytes) -> None:
    (Path(branched.uri) / "_refs" / "branches" / "dev.json").write_bytes(body)
    error, _ = refused(branched, version=4, branch="dev")
    assert (error.kind, error.code) == ("invalid-input", "LANCE_MALFORMED_REFERENCE")
    assert error.key == "_refs/branches/dev.json"


def test_a_branch_the_table_does_not_have_is_not_found(branched: LanceSite) -> None:
    error, _ = refused(branched, version=4, branch="nope")
    assert (error.kind, error.code) == ("not-found", "BRANCH_NOT_FOUND")


def test_a_branch_inside_another_roots_folders_is_refused(tmp_path: Path) -> None:
    """``dev/data`` lives in ``tree/dev/data/``, which is ``dev``'s data folder."""
    site = lance_site("local", tmp_path)
    overwrite_table(site, 2)
    dev = lance.dataset(site.uri).create_branch("dev", 2)
    dev.create_branch("dev/data", ("dev", 2))
    error, _ = refused(site, version=2, branch="dev/data")
    assert isinstance(error, hl.UnsupportedLanceDatasetError)
    assert (error.feature, error.key) == ("branch-layout", "_refs/branches/dev%2Fdata.json")


def test_a_lance_branch_without_a_holdfast_name_is_refused(tmp_path: Path) -> None:
    site = lance_site("local", tmp_path)
    overwrite_table(site, 2)
    lance.dataset(site.uri).create_branch(".hidden", 2)
    error, _ = refused(site, version=2, branch=".hidden")
    assert (error.kind, error.code) == ("unsupported", "LANCE_BRANCH_NOT_LEASABLE")


@pytest.mark.parametrize("name", ["", "a//b", "/a", "a/", "a..b", "x.lock", "a b", "a/./b", 7])
def test_an_invalid_branch_name_is_refused_before_any_request(
    site: LanceSite, name: object
) -> None:
    store = recording(site)
    with (
        pytest.raises(HoldfastError, check=lambda e: e.code == "INVALID_NAME"),
        hl.checkout(site.uri, version=3, branch=name, ttl=30, store=store),  # type: ignore[arg-type]
    ):
        pass
    assert store.calls == []


def test_the_error_shape_names_the_feature_and_flag() -> None:
    error = hl.UnsupportedLanceDatasetError(
        "reader-feature-flags", "_versions/3.manifest", "m", flag="fragment-reuse-index"
    )
    shape = error.to_dict()
    assert shape["kind"] == "unsupported"
    assert shape["code"] == "LANCE_UNSUPPORTED"
    assert (shape["feature"], shape["flag"]) == ("reader-feature-flags", "fragment-reuse-index")
    assert json.loads(json.dumps(shape)) == shape
    assert isinstance(error, holdfast.HoldfastError)


# --- the same refusals as the TypeScript format ---


def ts_read(site: LanceSite, version: int, branch: str = "main") -> dict[str, object]:
    """What the TypeScript Lance format answers reading that version (its error's shape)."""
    answer = ts(
        {
            "op": "lance-read",
            "store": peer_spec(site.store),
            "branch": branch,
            "version": version,
        },
        check=False,
    )
    assert isinstance(answer, dict)
    return answer


STRICTER = {
    "a data file path that is not UTF-8": "protobufjs decodes invalid UTF-8 with replacements",
    "field number 0": "protobufjs skips a field numbered 0",
}
"""Cases the Python reader refuses as malformed where the TypeScript decoder reads on; each
is bytes no Lance writes."""


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_python_refuses_what_the_typescript_format_refuses(site: LanceSite, case: Case) -> None:
    path = manifest_path(site, 3)
    path.write_bytes(case.damage(path.read_bytes()))
    python, _ = refused(site)
    answer = ts_read(site, 3)
    if case.name in STRICTER:
        assert python.code == MALFORMED
        return
    assert same_refusal(answer, python), answer


def same_refusal(answer: dict[str, object], python: HoldfastError) -> bool:
    """The TypeScript error's shape names the same kind, code, key, feature and flag."""
    want: dict[str, object] = {"kind": python.kind, "code": python.code, "key": python.key}
    if isinstance(python, hl.UnsupportedLanceDatasetError):
        want["feature"] = python.feature
        if python.flag is not None:
            want["flag"] = python.flag
    return {k: answer.get(k) for k in want} == want
