"""Lance tables written by pylance for the Lance tests, where they live (local disk, Ceph
RGW, Azurite), and byte surgery on their manifests (docs/lance.md, "The manifest file").

The surgery appends protobuf fields to a manifest's ``Manifest`` message, as protobuf
allows (a later scalar wins, a repeated field gains an entry), so a pylance-written version
gets exactly one thing pylance never writes; ``packages/format-lance/test/refusals.test.ts``
builds its cases the same way.
"""

from __future__ import annotations

import json
import secrets
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa

import holdfast
from holdfast.azure import AzureStore
from stores import need, s3_options

Sums = dict[tuple[str, int], int]


@dataclass(frozen=True)
class LanceSite:
    """Where a test table lives: its URI and Lance storage options, the same folder as a
    holdfast store, and the CLI's URL for it."""

    uri: str
    options: dict[str, str] | None
    store: holdfast.ObjectStore
    url: list[str]


def lance_site(kind: str, tmp: Path, name: str = "t") -> LanceSite:
    prefix = f"py-lance-{secrets.token_hex(5)}"
    if kind == "local":
        uri = str(tmp / prefix / f"{name}.lance")
        return LanceSite(uri, None, holdfast.LocalStore(uri, fsync=False), [uri])
    if kind == "s3":
        from holdfast.s3 import open_s3_store

        s3 = s3_options()
        bucket = need("HOLDFAST_S3_BUCKET")
        options = {
            "aws_endpoint": s3["endpoint"],
            "aws_access_key_id": need("AWS_ACCESS_KEY_ID"),
            "aws_secret_access_key": need("AWS_SECRET_ACCESS_KEY"),
            "aws_region": s3["region"],
            "allow_http": "true",
            "aws_virtual_hosted_style_request": "false",
        }
        uri = f"s3://{bucket}/{prefix}/{name}.lance"
        store = open_s3_store(bucket, f"{prefix}/{name}.lance", **s3)
        flags = ["--endpoint", s3["endpoint"], "--region", s3["region"], "--path-style"]
        return LanceSite(uri, options, store, [uri, *flags])
    if kind == "azure":
        connection = need("AZURE_STORAGE_CONNECTION_STRING")
        container = need("HOLDFAST_AZURE_CONTAINER")
        parts = dict(p.split("=", 1) for p in connection.split(";") if "=" in p)
        # Not azure_storage_use_emulator: object_store then ignores azure_endpoint.
        options = {
            "account_name": parts["AccountName"],
            "account_key": parts["AccountKey"],
            "azure_endpoint": parts["BlobEndpoint"],
            "allow_http": "true",
        }
        uri = f"az://{container}/{prefix}/{name}.lance"
        azure = AzureStore(container, f"{prefix}/{name}.lance", connection_string=connection)
        return LanceSite(uri, options, azure, [uri])
    raise ValueError(kind)


def rows(start: int, count: int) -> pa.Table:
    return pa.table({"x": list(range(start, start + count))})


def total(dataset: Any) -> int:
    """Sum of column x over a full read of the dataset (or LanceDB table)."""
    table = dataset.to_arrow() if hasattr(dataset, "to_arrow") else dataset.to_table()
    return int(sum(table.column("x").to_pylist()))


def branch_table(site: LanceSite, *, v2: bool = True) -> Sums:
    """main 1-4 (appends), ``dev`` forked from main@2 with appends (dev 2-6) and ``dev/sub``
    forked from dev@3 with appends (dev/sub 3-5). Answers the sum of x per (branch, version)."""
    opts = site.options
    sums: Sums = {}
    running = 0
    ds = None
    for v in range(1, 5):
        block = rows(v * 100, 5)
        ds = lance.write_dataset(
            block,
            site.uri,
            mode="append" if v > 1 else "create",
            storage_options=opts,
            enable_v2_manifest_paths=v2,
        )
        running += sum(block.column("x").to_pylist())
        sums[("main", v)] = running
    assert ds is not None
    dev = ds.create_branch("dev", 2)
    running = sums[("main", 2)]
    sums[("dev", 2)] = running
    for v in range(3, 7):
        block = rows(1000 + v * 10, 3)
        dev = lance.write_dataset(block, dev, mode="append")
        running += sum(block.column("x").to_pylist())
        sums[("dev", v)] = running
    sub = lance.dataset(site.uri, storage_options=opts).checkout_version(("dev", 3))
    sub = sub.create_branch("dev/sub", ("dev", 3))
    running = sums[("dev", 3)]
    sums[("dev/sub", 3)] = running
    for v in range(4, 6):
        block = rows(5000 + v * 10, 2)
        sub = lance.write_dataset(block, sub, mode="append")
        running += sum(block.column("x").to_pylist())
        sums[("dev/sub", v)] = running
    return sums


def overwrite_table(site: LanceSite, versions: int = 4, *, v2: bool = True) -> Sums:
    """main 1..n, each an overwrite of 10 rows."""
    sums: Sums = {}
    for v in range(1, versions + 1):
        block = rows(v * 100, 10)
        lance.write_dataset(
            block,
            site.uri,
            mode="overwrite" if v > 1 else "create",
            storage_options=site.options,
            enable_v2_manifest_paths=v2,
        )
        sums[("main", v)] = sum(block.column("x").to_pylist())
    return sums


def keys(store: holdfast.ObjectStore, prefix: str = "") -> list[str]:
    return sorted(m.key for m in holdfast.store.list_all(store, prefix))


def cleanup_policy() -> list[str]:
    return ["--retain", "1", "--min-age", "0s", "--orphan-grace", "0s", "--no-writer-active"]


def decode_stats(stdout: str) -> dict[str, Any]:
    stats: dict[str, Any] = json.loads(stdout)["stats"]
    return stats


# --- protobuf fields for manifest surgery ---


def varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def scalar(number: int, value: int) -> bytes:
    """A varint field."""
    return varint(number << 3) + varint(value)


def message(number: int, body: bytes) -> bytes:
    """A length-delimited field (string, bytes or embedded message)."""
    return varint((number << 3) | 2) + varint(len(body)) + body


def text(number: int, value: str) -> bytes:
    return message(number, value.encode())


def fragment(fragment_id: int, *parts: bytes) -> bytes:
    """A ``DataFragment`` (Manifest field 2) with the given fields after its id."""
    return message(2, scalar(1, fragment_id) + b"".join(parts))


def data_file(path: str, base_id: int | None = None) -> bytes:
    """A ``DataFile`` (DataFragment field 2)."""
    body = text(1, path) + scalar(6, 1)
    if base_id is not None:
        body += scalar(7, base_id)
    return message(2, body)


def manifest_parts(data: bytes) -> tuple[bytes, bytes, bytes]:
    """``(before, message, footer)`` of a manifest file: the bytes before the length-prefixed
    Manifest message, the message, and the 16-byte footer."""
    footer_at = len(data) - 16
    (position,) = struct.unpack_from("<q", data, footer_at)
    (length,) = struct.unpack_from("<I", data, position)
    return data[:position], data[position + 4 : position + 4 + length], data[footer_at:]


def rebuild(before: bytes, body: bytes, footer: bytes) -> bytes:
    """A manifest file with ``body`` as its Manifest message, placed after ``before``."""
    position = len(before)
    return before + struct.pack("<I", len(body)) + body + struct.pack("<q", position) + footer[8:]


def append_to_manifest(data: bytes, extra: bytes) -> bytes:
    before, body, footer = manifest_parts(data)
    return rebuild(before, body + extra, footer)


def with_index_section(data: bytes, section: bytes) -> bytes:
    """The manifest file with a new length-prefixed IndexSection written before the Manifest
    message, which then names it (field 6)."""
    before, body, footer = manifest_parts(data)
    at = len(before)
    before = before + struct.pack("<I", len(section)) + section
    return rebuild(before, body + scalar(6, at), footer)


def index(name: str, uuid: bytes | None, base_id: int | None = None) -> bytes:
    """An ``IndexMetadata`` (IndexSection field 1)."""
    body = b"" if uuid is None else message(1, message(1, uuid))
    body += text(3, name) + scalar(4, 1)
    if base_id is not None:
        body += scalar(9, base_id)
    return message(1, body)
