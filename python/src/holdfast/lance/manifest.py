"""What ``holdfast.lance.checkout`` reads of a Lance manifest before it takes a lease, and
what it refuses there: the same refusals as ``@holdfast/format-lance`` on read (docs/lance.md,
"The manifest file", "Feature flags", "What it refuses").

The file: the last 16 bytes are an i64 little-endian position P, u16 major, u16 minor and the
magic ``LANC``; at P a u32 little-endian length L and L bytes of protobuf
``lance.table.Manifest``, ending exactly where the footer starts. ``index_section`` (field 6)
is the position of a length-prefixed ``IndexSection``. Only the fields a refusal depends on
are read (:mod:`holdfast.lance._wire`); field numbers are the wire contract docs/lance.md
lists:

========================  =====================================================
message                   fields read
========================  =====================================================
Manifest                  fragments 2, version 3, index_section 6,
                          reader_feature_flags 9, writer_feature_flags 10,
                          base_paths 18
DataFragment              id 1, files 2, deletion_file 3, external_row_ids 6,
                          external_last_updated_at_versions 8,
                          external_created_at_versions 10, overlays 11
DataFile                  path 1, base_id 7
DeletionFile              base_id 7
ExternalFile              path 1
DataOverlayFile           data_file 1
BasePath                  id 1
IndexSection              indices 1
IndexMetadata             uuid 1 (UUID.uuid 1: 16 bytes), name 3, base_id 9
========================  =====================================================

A scalar or embedded message that appears twice takes its last value and a repeated field
gains an entry, as protobuf decoders read them; a field of this table sent with another wire
type is malformed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Literal

from ..errors import HoldfastError
from ._wire import WireError, as_bytes, as_text, as_varint, fields

LANCE_UNSUPPORTED = "LANCE_UNSUPPORTED"
LANCE_MALFORMED_MANIFEST = "LANCE_MALFORMED_MANIFEST"
LANCE_MALFORMED_REFERENCE = "LANCE_MALFORMED_REFERENCE"
LANCE_MAGIC = b"LANC"
_FOOTER_BYTES = 16
_LENGTH_PREFIX_BYTES = 4
_U32 = 0xFFFF_FFFF

LanceFeature = Literal[
    "reader-feature-flags",
    "writer-feature-flags",
    "base-paths",
    "external-file",
    "detached-version",
    "mixed-naming",
    "zombie-branch",
    "foreign-reference",
    "branch-layout",
]
"""What a Lance table uses that holdfast refuses (docs/lance.md, "What it refuses")."""


class UnsupportedLanceDatasetError(HoldfastError):
    """The table uses a Lance feature holdfast does not protect: kind ``unsupported``, code
    ``LANCE_UNSUPPORTED``, ``feature`` and, for a feature flag, ``flag`` (its name). Raised
    before any lease is taken; nothing is written."""

    feature: LanceFeature
    flag: str | None

    def __init__(
        self,
        feature: LanceFeature,
        key: str,
        message: str,
        *,
        hint: str | None = None,
        flag: str | None = None,
    ) -> None:
        super().__init__(
            "unsupported",
            "lance",
            message,
            key=key,
            code=LANCE_UNSUPPORTED,
            hint=hint
            or "holdfast refuses to hold what it does not fully understand; use Lance's own tools",
        )
        self.feature = feature
        self.flag = flag

    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        out["feature"] = self.feature
        if self.flag is not None:
            out["flag"] = self.flag
        return out


@dataclass(frozen=True)
class FeatureFlag:
    bit: int
    name: str
    implemented: bool

    @property
    def value(self) -> int:
        return 1 << self.bit


LANCE_FEATURE_FLAGS: tuple[FeatureFlag, ...] = (
    FeatureFlag(0, "deletion-files", True),
    FeatureFlag(1, "stable-row-ids", True),
    FeatureFlag(2, "use-v2-format-deprecated", True),
    FeatureFlag(3, "table-config", True),
    FeatureFlag(4, "base-paths", True),
    FeatureFlag(5, "disable-transaction-file", True),
    FeatureFlag(6, "unstable-data-overlay-files", False),
    FeatureFlag(7, "covered-index-metadata", True),
    FeatureFlag(8, "mixed-data-file-versions", True),
    FeatureFlag(9, "frag-reuse-with-stable-row-ids", False),
    FeatureFlag(10, "fragment-reuse-index", False),
    FeatureFlag(11, "semantic-types", True),
)
"""Every bit of today's ``reader_feature_flags`` and ``writer_feature_flags`` (the same bits
in both words) by the name holdfast gives it: docs/lance.md's "Feature flags" table."""

IMPLEMENTED_FEATURE_FLAGS = sum(f.value for f in LANCE_FEATURE_FLAGS if f.implemented)
_PAIRED_BITS = (8, 11)
"""Capabilities whose reader and writer bits Lance always sets together."""


def feature_flag_name(bit: int) -> str:
    """The name of bit ``bit`` (0-based), ``unknown-bit-N`` from bit 12 on."""
    return LANCE_FEATURE_FLAGS[bit].name if bit < len(LANCE_FEATURE_FLAGS) else f"unknown-bit-{bit}"


@dataclass(frozen=True)
class DataFile:
    path: str
    base_id: int | None


@dataclass(frozen=True)
class ExternalFile:
    what: str
    path: str


@dataclass(frozen=True)
class Fragment:
    id: int
    files: tuple[DataFile, ...]
    """Data files, then the data files of overlays (reader flag 64)."""
    deletion_base_id: int | None
    has_deletion_file: bool
    externals: tuple[ExternalFile, ...]


@dataclass(frozen=True)
class IndexEntry:
    name: str
    uuid: bytes | None
    base_id: int | None


@dataclass(frozen=True)
class ManifestFile:
    """What holdfast reads of one manifest file."""

    format_major: int
    format_minor: int
    version: int
    reader_feature_flags: int
    writer_feature_flags: int
    fragments: tuple[Fragment, ...]
    base_path_ids: frozenset[int]
    indices: tuple[IndexEntry, ...] = field(default=())


def malformed(key: str, why: str, cause: BaseException | None = None) -> HoldfastError:
    return HoldfastError(
        "invalid-input",
        "readManifest",
        f"Lance manifest {key} is malformed: {why}",
        key=key,
        code=LANCE_MALFORMED_MANIFEST,
        cause=cause,
    )


def read_manifest_file(data: bytes, key: str) -> ManifestFile:
    """Decodes a manifest file; anything that is not one is ``invalid-input``
    (LANCE_MALFORMED_MANIFEST) naming ``key``: a manifest holdfast cannot read is never read
    as naming nothing."""
    size = len(data)
    if size < _FOOTER_BYTES + _LENGTH_PREFIX_BYTES:
        raise malformed(key, "shorter than its footer")
    footer_at = size - _FOOTER_BYTES
    magic = data[size - 4 :]
    if magic != LANCE_MAGIC:
        raise malformed(key, f"magic is {magic!r}, not b'LANC'")
    position, major, minor = struct.unpack_from("<qHH", data, footer_at)
    if position < 0 or position + _LENGTH_PREFIX_BYTES > footer_at:
        raise malformed(key, f"manifest position {position} is outside the file")
    (length,) = struct.unpack_from("<I", data, position)
    end = position + _LENGTH_PREFIX_BYTES + length
    if end != footer_at:
        raise malformed(
            key, f"the manifest message ends at {end}, not where the footer starts ({footer_at})"
        )
    view = memoryview(data)
    try:
        parsed = _manifest(view[position + _LENGTH_PREFIX_BYTES : end])
    except WireError as error:
        raise malformed(key, f"the Manifest message does not decode: {error}", error) from error
    version, reader, writer, fragments, bases, index_at = parsed
    indices: tuple[IndexEntry, ...] = ()
    if index_at is not None:
        if index_at + _LENGTH_PREFIX_BYTES > footer_at:
            raise malformed(key, f"index section position {index_at} is outside the file")
        (section_length,) = struct.unpack_from("<I", data, index_at)
        section_end = index_at + _LENGTH_PREFIX_BYTES + section_length
        if section_end > footer_at:
            raise malformed(key, "the index section runs past the footer")
        try:
            indices = _index_section(view[index_at + _LENGTH_PREFIX_BYTES : section_end])
        except WireError as error:
            raise malformed(
                key, f"the IndexSection message does not decode: {error}", error
            ) from error
    return ManifestFile(major, minor, version, reader, writer, fragments, bases, indices)


def check_manifest(file: ManifestFile, key: str, version: int) -> None:
    """Refuses what ``@holdfast/format-lance`` refuses when it reads this manifest, in the
    same order: a feature-flag bit holdfast does not implement, in either word (by name), a
    paired bit set in one word only, a ``base_id`` that names no base path (data, overlay,
    deletion and index files), a row-id or version-sequence file outside the table's own
    folders, an index without a 16-byte uuid, and a manifest that names another version."""
    check_feature_flags(file.reader_feature_flags, file.writer_feature_flags, key)

    def ours(what: str, base_id: int | None) -> None:
        if base_id is not None and base_id not in file.base_path_ids:
            raise UnsupportedLanceDatasetError(
                "base-paths",
                key,
                f"Lance manifest {key}: {what} names base_id {base_id}, which base_paths "
                "does not define",
            )

    for fragment in file.fragments:
        for data in fragment.files:
            ours(f"data file {data.path}", data.base_id)
        if fragment.has_deletion_file:
            ours(f"deletion file of fragment {fragment.id}", fragment.deletion_base_id)
        for external in fragment.externals:
            if not is_own_relative_path(external.path):
                raise UnsupportedLanceDatasetError(
                    "external-file",
                    key,
                    f"Lance manifest {key}: fragment {fragment.id} keeps its {external.what} "
                    f"in {external.path!r}, outside the table's own folders",
                )
    for index in file.indices:
        if index.uuid is None or len(index.uuid) != 16:
            raise malformed(key, f"index {index.name!r} has no 16-byte uuid")
        ours(f"index {index.name}", index.base_id)
    if file.version != version:
        raise HoldfastError(
            "invalid-input",
            "readManifest",
            f"Lance manifest {key} names version {file.version}",
            key=key,
            code=LANCE_MALFORMED_MANIFEST,
        )


def check_feature_flags(reader: int, writer: int, key: str) -> None:
    """Refuses a bit holdfast does not implement (the lowest first, reader word first) and a
    paired bit (256, 2048) set in one word only (malformed, as Lance reads it)."""
    for word, value in (("reader", reader), ("writer", writer)):
        unknown = value & ~IMPLEMENTED_FEATURE_FLAGS
        if unknown == 0:
            continue
        bit = (unknown & -unknown).bit_length() - 1
        name = feature_flag_name(bit)
        raise UnsupportedLanceDatasetError(
            "reader-feature-flags" if word == "reader" else "writer-feature-flags",
            key,
            f"Lance manifest {key} sets {word} feature flag {1 << bit} ({name}), which this "
            "holdfast does not implement",
            hint="upgrade holdfast, or read this table without a holdfast lease",
            flag=name,
        )
    for bit in _PAIRED_BITS:
        mask = 1 << bit
        if (reader & mask) != (writer & mask):
            raise HoldfastError(
                "invalid-input",
                "readManifest",
                f"Lance manifest {key} sets only one of the reader and writer "
                f"{feature_flag_name(bit)} bits",
                key=key,
                code=LANCE_MALFORMED_MANIFEST,
            )


_NOT_FRAGMENT_FILES = ("_versions/", "_refs/", "tree/", "_holdfast/", "_mem_wal/")


def is_own_relative_path(path: str) -> bool:
    """A path relative to the table root, inside it, in none of the folders that hold no file
    a fragment may name as its own."""
    if "\\" in path:
        return False
    # An empty path, an absolute one (its first segment is empty), ``//``, ``.`` and ``..``.
    if any(part in ("", ".", "..") for part in path.split("/")):
        return False
    return not path.startswith(_NOT_FRAGMENT_FILES)


# --- utils ---


def _manifest(
    buf: memoryview,
) -> tuple[int, int, int, tuple[Fragment, ...], frozenset[int], int | None]:
    version = reader = writer = 0
    index_at: int | None = None
    fragments: list[Fragment] = []
    bases: set[int] = set()
    for number, wire, value in fields(buf):
        if number == 2:
            fragments.append(_fragment(as_bytes(number, wire, value)))
        elif number == 3:
            version = as_varint(number, wire, value)
        elif number == 6:
            index_at = as_varint(number, wire, value)
        elif number == 9:
            reader = as_varint(number, wire, value)
        elif number == 10:
            writer = as_varint(number, wire, value)
        elif number == 18:
            bases.add(_base_path_id(as_bytes(number, wire, value)))
    return version, reader, writer, tuple(fragments), frozenset(bases), index_at


def _fragment(buf: memoryview) -> Fragment:
    fragment_id = 0
    files: list[DataFile] = []
    overlays: list[DataFile] = []
    deletion: tuple[bool, int | None] = (False, None)
    externals: dict[int, ExternalFile] = {}
    for number, wire, value in fields(buf):
        if number == 1:
            fragment_id = as_varint(number, wire, value)
        elif number == 2:
            files.append(_data_file(as_bytes(number, wire, value)))
        elif number == 3:
            deletion = (True, _base_id_of(as_bytes(number, wire, value), 7))
        elif number in _EXTERNALS:
            externals[number] = ExternalFile(
                _EXTERNALS[number], _external_path(as_bytes(number, wire, value))
            )
        elif number == 11:
            overlay = _overlay(as_bytes(number, wire, value))
            if overlay is not None:
                overlays.append(overlay)
    return Fragment(
        fragment_id,
        tuple(files + overlays),
        deletion[1],
        deletion[0],
        tuple(externals[n] for n in sorted(externals)),
    )


_EXTERNALS = {6: "row ids", 8: "last-updated versions", 10: "created versions"}


def _data_file(buf: memoryview) -> DataFile:
    path = ""
    base_id: int | None = None
    for number, wire, value in fields(buf):
        if number == 1:
            path = as_text(number, wire, value)
        elif number == 7:
            base_id = as_varint(number, wire, value) & _U32
    return DataFile(path, base_id)


def _overlay(buf: memoryview) -> DataFile | None:
    found: DataFile | None = None
    for number, wire, value in fields(buf):
        if number == 1:
            found = _data_file(as_bytes(number, wire, value))
    return found


def _base_id_of(buf: memoryview, at: int) -> int | None:
    base_id: int | None = None
    for number, wire, value in fields(buf):
        if number == at:
            base_id = as_varint(number, wire, value) & _U32
    return base_id


def _external_path(buf: memoryview) -> str:
    path = ""
    for number, wire, value in fields(buf):
        if number == 1:
            path = as_text(number, wire, value)
    return path


def _base_path_id(buf: memoryview) -> int:
    base_id = 0
    for number, wire, value in fields(buf):
        if number == 1:
            base_id = as_varint(number, wire, value) & _U32
    return base_id


def _index_section(buf: memoryview) -> tuple[IndexEntry, ...]:
    out: list[IndexEntry] = []
    for number, wire, value in fields(buf):
        if number == 1:
            out.append(_index(as_bytes(number, wire, value)))
    return tuple(out)


def _index(buf: memoryview) -> IndexEntry:
    name = ""
    uuid: bytes | None = None
    base_id: int | None = None
    for number, wire, value in fields(buf):
        if number == 1:
            uuid = None
            for inner, inner_wire, inner_value in fields(as_bytes(number, wire, value)):
                if inner == 1:
                    uuid = bytes(as_bytes(inner, inner_wire, inner_value))
        elif number == 3:
            name = as_text(number, wire, value)
        elif number == 9:
            base_id = as_varint(number, wire, value) & _U32
    return IndexEntry(name, uuid, base_id)
