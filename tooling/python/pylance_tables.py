"""Lance tables written by pylance, and their readback, for holdfast's format-lance tests.

The tests (``test/pylance.ts``) run this file with ``$HOLDFAST_PYTHON`` (the repo's one
Python environment, pylance 14 and lancedb 0.40). Commands, each printing JSON on stdout:

``write SCENARIO ROOT [--storage-options JSON]``
    writes the scenario's table(s) under ``ROOT`` (a directory or ``s3://`` / ``az://``
    prefix) the way an application does with pylance, and prints what it made: the tables
    (``ROOT/{name}.lance``), their versions, tags and branches.

``verify URI [--storage-options JSON] [--tolerant]``
    opens every version of the table at ``URI`` (main and every branch) with pylance, reads
    each in full (blob columns through ``read_blobs``) and prints its row count and a
    content checksum, plus the tags, branches and the files Lance's manifests track. With
    ``--tolerant`` a version that fails to read is ``{"error": ...}`` instead of a failure;
    with ``--queries`` each version of main also runs a query through each of its BTREE,
    vector and full-text indices (``queries``: the ids found and whether the plan used the
    index).

``lance-cleanup URI [--retain N]``
    Lance's own ``cleanup_old_versions`` (for side-by-side tests).

``stale-writer URI --signal FILE``
    a writer that opened the latest version and appends three rows: its data files are
    written, then its commit waits inside Lance's commit lock (after Lance's conflict check,
    before the manifest is written) until FILE exists, prints ``{"locked": V}`` while it
    waits and ``{"committed": V, "readVersion": R}`` once its manifest is written.

``index-step URI STEP``
    the next step of the ``index-window`` scenario: step 1 optimizes the indices, rebuilds
    the BTREE index and appends; step 2 rebuilds the vector index, appends and optimizes.

``commit-others URI``
    two commits of other writers: an append, then an overwrite.

``create-branch URI NAME --from-version N``
    Lance's ``create_branch`` of ``NAME`` from main's version ``N``.

``read-slowly URI --version N --signal FILE``
    a reader mid-scan: opens version N, reads one fragment, prints ``{"opened": true}``,
    waits for FILE to exist, reads the rest and prints whether it could.

Nothing here decides what holdfast may delete: it only writes real tables and reads them back.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import lance
import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]

Json = dict[str, Any]
Options = dict[str, str]

VECTOR_DIM = 8


def rows(start: int, count: int) -> pa.Table:
    """Rows of the main test schema: ids, a vector, text, a category and labels."""
    ids = list(range(start, start + count))
    rng = np.random.default_rng(start)
    vectors = pa.FixedSizeListArray.from_arrays(
        pa.array(rng.random(count * VECTOR_DIM, dtype=np.float32)), VECTOR_DIM
    )
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "vec": vectors,
            "text": pa.array([f"word{i % 7} text number {i}" for i in ids]),
            "cat": pa.array([f"c{i % 3}" for i in ids]),
            "labels": pa.array([[f"l{i % 4}", f"l{(i + 1) % 4}"] for i in ids]),
        }
    )


def small_rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "x": pa.array([f"v{i}" for i in ids])}
    )


def blob_rows(start: int, sizes: list[int]) -> pa.Table:
    schema = pa.schema([pa.field("id", pa.int64()), lance.blob_field("blob")])
    payloads = [bytes([(start + i) % 251]) * size for i, size in enumerate(sizes)]
    return pa.table(
        {
            "id": pa.array(range(start, start + len(sizes)), pa.int64()),
            "blob": lance.blob_array(payloads),
        },
        schema=schema,
    )


def table_uri(root: str, name: str) -> str:
    return f"{root.rstrip('/')}/{name}.lance"


def describe(ds: lance.LanceDataset) -> Json:
    """Versions of main, tags and branches, as pylance lists them."""
    return {
        "versions": [int(v["version"]) for v in ds.versions()],
        "tags": {
            name: {"branch": tag.get("branch"), "version": tag["version"]}
            for name, tag in ds.tags.list().items()
        },
        "branches": {
            name: {
                "parentBranch": b["parent_branch"],
                "parentVersion": b["parent_version"],
                "versions": [
                    int(v["version"])
                    for v in ds.checkout_version((name, None)).versions()
                ],
            }
            for name, b in ds.branches.list().items()
        },
    }


# --- scenarios ---


def write_history(root: str, opts: Options) -> Json:
    """Appends, deletes, updates, merge_insert, schema evolution, every index type, compaction,
    an overwrite, tags and a restore of an old version: what an ordinary pylance table goes
    through (V2 manifest names)."""
    uri = table_uri(root, "history")
    ds = lance.write_dataset(rows(0, 300), uri, storage_options=opts)
    ds = lance.write_dataset(rows(300, 300), uri, mode="append", storage_options=opts)
    ds.delete("id < 10")
    ds.update({"cat": "'updated'"}, where="id = 20")
    builder = (
        ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    )
    builder.execute(rows(590, 20))
    ds = lance.dataset(uri, storage_options=opts)
    ds.tags.create("early", 3)
    ds.create_scalar_index("id", "BTREE")
    ds.create_scalar_index("cat", "BITMAP")
    ds.create_scalar_index("labels", "LABEL_LIST")
    ds.create_scalar_index("text", "INVERTED")
    ds.create_scalar_index("text", "NGRAM", name="text_ngram")
    ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2)
    ds.create_index("vec", "IVF_HNSW_SQ", name="vec_hnsw", num_partitions=2)
    ds = lance.write_dataset(rows(700, 50), uri, mode="append", storage_options=opts)
    ds.optimize.optimize_indices()
    ds.add_columns({"double_id": "id * 2"})
    # pylance annotates each alteration as an iterable; it takes the dict itself.
    ds.alter_columns(cast(Any, {"path": "double_id", "name": "twice"}))
    ds.drop_columns(["twice"])
    ds.delete("id % 11 = 0")
    ds = lance.dataset(uri, storage_options=opts)
    ds.tags.create("indexed", ds.version)
    ds.optimize.compact_files(target_rows_per_fragment=2000)
    ds = lance.write_dataset(rows(1000, 40), uri, mode="append", storage_options=opts)
    ds.create_scalar_index("id", "BTREE", replace=True)
    ds = lance.write_dataset(
        rows(2000, 100), uri, mode="overwrite", storage_options=opts
    )
    ds = lance.write_dataset(rows(2100, 10), uri, mode="append", storage_options=opts)
    # A restore of version 2: the new latest names version 2's files again.
    lance.dataset(uri, version=2, storage_options=opts).restore()  # type: ignore[no-untyped-call]
    ds = lance.write_dataset(rows(2200, 10), uri, mode="append", storage_options=opts)
    return {"tables": {"history": describe(lance.dataset(uri, storage_options=opts))}}


def write_v1_naming(root: str, opts: Options) -> Json:
    """V1 manifest names (``enable_v2_manifest_paths=False``), appends, a delete, an index."""
    uri = table_uri(root, "v1names")
    ds = lance.write_dataset(
        small_rows(0, 50), uri, enable_v2_manifest_paths=False, storage_options=opts
    )
    for i in range(1, 4):
        ds = lance.write_dataset(
            small_rows(50 * i, 50), uri, mode="append", storage_options=opts
        )
    ds.delete("id < 7")
    ds.create_scalar_index("id", "BTREE")
    ds = lance.write_dataset(
        small_rows(500, 5), uri, mode="append", storage_options=opts
    )
    return {"tables": {"v1names": describe(lance.dataset(uri, storage_options=opts))}}


def write_stable_row_ids(root: str, opts: Options) -> Json:
    """Stable row ids (reader flag 2: row-id and version sequences in the fragments), with
    updates, deletes, an index and compaction."""
    uri = table_uri(root, "rowids")
    ds = lance.write_dataset(
        small_rows(0, 100), uri, enable_stable_row_ids=True, storage_options=opts
    )
    for i in range(1, 4):
        ds = lance.write_dataset(
            small_rows(100 * i, 100), uri, mode="append", storage_options=opts
        )
    ds.create_scalar_index("id", "BTREE")
    ds.delete("id < 5")
    ds.update({"x": "'updated'"}, where="id = 50")
    builder = (
        ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    )
    builder.execute(small_rows(390, 20))
    ds = lance.dataset(uri, storage_options=opts)
    ds.optimize.compact_files(target_rows_per_fragment=1000)
    ds = lance.write_dataset(
        small_rows(1000, 10), uri, mode="append", storage_options=opts
    )
    return {"tables": {"rowids": describe(lance.dataset(uri, storage_options=opts))}}


def write_fragment_reuse(root: str, opts: Options) -> Json:
    """Compaction with ``defer_index_remap``: Lance records the moves in its fragment reuse
    index (``__lance_frag_reuse`` in the index section)."""
    uri = table_uri(root, "reuse")
    ds = lance.write_dataset(small_rows(0, 100), uri, storage_options=opts)
    for i in range(1, 4):
        ds = lance.write_dataset(
            small_rows(100 * i, 100), uri, mode="append", storage_options=opts
        )
    ds.create_scalar_index("id", "BTREE")
    ds.delete("id < 5")
    ds = lance.dataset(uri, storage_options=opts)
    ds.optimize.compact_files(target_rows_per_fragment=1000, defer_index_remap=True)
    ds = lance.write_dataset(
        small_rows(1000, 10), uri, mode="append", storage_options=opts
    )
    return {"tables": {"reuse": describe(lance.dataset(uri, storage_options=opts))}}


def write_blobs(root: str, opts: Options) -> Json:
    """A blob v2 column: small payloads inline, large ones in sidecars ``data/{stem}/*.blob``;
    appends, a delete, compaction and an overwrite."""
    uri = table_uri(root, "blobs")
    ds = lance.write_dataset(
        blob_rows(0, [10, 100_000, 3_000_000]),
        uri,
        data_storage_version="2.2",
        storage_options=opts,
    )
    ds = lance.write_dataset(
        blob_rows(10, [2_000_000, 20]), uri, mode="append", storage_options=opts
    )
    ds.delete("id = 1")
    ds = lance.dataset(uri, storage_options=opts)
    ds.optimize.compact_files(target_rows_per_fragment=1000)
    ds = lance.write_dataset(
        blob_rows(20, [1_500_000]), uri, mode="append", storage_options=opts
    )
    ds = lance.write_dataset(
        blob_rows(30, [50, 1_200_000]), uri, mode="overwrite", storage_options=opts
    )
    ds = lance.write_dataset(
        blob_rows(40, [5]), uri, mode="append", storage_options=opts
    )
    return {"tables": {"blobs": describe(lance.dataset(uri, storage_options=opts))}}


def write_branches(root: str, opts: Options) -> Json:
    """Lance branches: ``dev`` forked from main@2 (versions 2-8: appends, a delete, then a
    compaction that rewrites its files), a tag on dev@3, ``dev/sub`` forked from dev@4
    with commits of its own (it reads dev@4's files, which dev's later versions no longer
    name), and main moving on."""
    uri = table_uri(root, "branches")
    ds = lance.write_dataset(small_rows(0, 20), uri, storage_options=opts)
    for i in range(1, 4):
        ds = lance.write_dataset(
            small_rows(20 * i, 20), uri, mode="append", storage_options=opts
        )
    ds.tags.create("main-2", 2)
    dev = ds.create_branch("dev", 2)
    for i in range(3):
        dev = lance.write_dataset(small_rows(1000 + 10 * i, 10), dev, mode="append")
    ds.tags.create("dev-tag", ("dev", 3))
    sub = dev.create_branch("dev/sub", ("dev", 4))
    for i in range(2):
        sub = lance.write_dataset(small_rows(2000 + 10 * i, 10), sub, mode="append")
    dev.delete("id = 1001")
    dev = lance.dataset(uri, storage_options=opts).checkout_version(("dev", None))
    dev.optimize.compact_files(target_rows_per_fragment=1000)
    dev = lance.dataset(uri, storage_options=opts).checkout_version(("dev", None))
    lance.write_dataset(small_rows(1100, 10), dev, mode="append")
    for i in range(3):
        ds = lance.write_dataset(
            small_rows(3000 + 10 * i, 10), uri, mode="append", storage_options=opts
        )
    ds.delete("id < 3")
    return {"tables": {"branches": describe(lance.dataset(uri, storage_options=opts))}}


def write_shallow_clone(root: str, opts: Options) -> Json:
    """A shallow clone: ``clone.lance`` names the source's files through ``base_paths``
    (reader flag 16) and writes its own next to them."""
    source_uri = table_uri(root, "source")
    ds = lance.write_dataset(small_rows(0, 30), source_uri, storage_options=opts)
    ds = lance.write_dataset(
        small_rows(30, 30), source_uri, mode="append", storage_options=opts
    )
    ds.tags.create("for-clone", 2)
    clone = ds.shallow_clone(
        table_uri(root, "clone"), "for-clone", storage_options=opts
    )
    for i in range(3):
        clone = lance.write_dataset(small_rows(100 + 10 * i, 10), clone, mode="append")
    clone.delete("id = 1")
    ds = lance.write_dataset(
        small_rows(60, 10), source_uri, mode="append", storage_options=opts
    )
    clone_uri = table_uri(root, "clone")
    return {
        "tables": {
            "source": describe(lance.dataset(source_uri, storage_options=opts)),
            "clone": describe(lance.dataset(clone_uri, storage_options=opts)),
        }
    }


def write_stale_hint(root: str, opts: Options) -> Json:
    """A stale version hint (local disk): versions 1-8, a tag on 4, and the hint Lance wrote
    at version 4 put back, as when a commit's best-effort hint write is lost."""
    uri = table_uri(root, "stale")
    hint = Path(uri) / "_versions" / "latest_version_hint.json"
    ds = lance.write_dataset(small_rows(0, 10), uri, storage_options=opts)
    for i in range(1, 4):
        ds = lance.write_dataset(
            small_rows(10 * i, 10), uri, mode="append", storage_options=opts
        )
    stale = hint.read_bytes()
    ds.tags.create("pinned", ds.version)
    for i in range(4, 8):
        ds = lance.write_dataset(
            small_rows(10 * i, 10), uri, mode="append", storage_options=opts
        )
    hint.write_bytes(stale)
    return {"tables": {"stale": describe(lance.dataset(uri, storage_options=opts))}}


def write_index_window(root: str, opts: Options) -> Json:
    """A table with a BTREE, an IVF_PQ and an INVERTED index, then an append: the start of
    index builds, rebuilds and optimizations between cleanups (``index-step``)."""
    uri = table_uri(root, "index-window")
    ds = lance.write_dataset(rows(0, 300), uri, storage_options=opts)
    ds.create_scalar_index("id", "BTREE")
    ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2)
    ds.create_scalar_index("text", "INVERTED")
    ds = lance.write_dataset(rows(300, 50), uri, mode="append", storage_options=opts)
    return {
        "tables": {"index-window": describe(lance.dataset(uri, storage_options=opts))}
    }


def index_step(uri: str, opts: Options, step: int) -> Json:
    """Step 1: optimize_indices, the BTREE index rebuilt, an append. Step 2: the vector
    index rebuilt, an append, optimize_indices."""
    ds = lance.dataset(uri, storage_options=opts)
    if step == 1:
        ds.optimize.optimize_indices()
        ds = lance.dataset(uri, storage_options=opts)
        ds.create_scalar_index("id", "BTREE", replace=True)
        ds = lance.write_dataset(
            rows(400, 50), uri, mode="append", storage_options=opts
        )
    else:
        ds.create_index(
            "vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2, replace=True
        )
        ds = lance.write_dataset(
            rows(500, 50), uri, mode="append", storage_options=opts
        )
        ds.optimize.optimize_indices()
    return describe(lance.dataset(uri, storage_options=opts))


def index_queries(ds: lance.LanceDataset) -> Json:
    """One query through each BTREE, vector and full-text index of the version: the ids it
    finds and whether the plan went through the index."""
    kinds = {str(i["type"]) for i in ds.list_indices()}
    query = np.random.default_rng(7).random(VECTOR_DIM, dtype=np.float32).tolist()
    scanners: dict[str, tuple[Any, str]] = {}
    if "BTree" in kinds:
        scanners["btree"] = (
            ds.scanner(filter="id = 20 OR id = 420", columns=["id"]),
            "ScalarIndexQuery",
        )
    if any(k.startswith("IVF") for k in kinds):
        scanners["vector"] = (
            ds.scanner(
                nearest={"column": "vec", "q": query, "k": 5},
                columns=["id"],
                disable_scoring_autoprojection=True,
            ),
            "ANNSubIndex",
        )
    if "Inverted" in kinds:
        scanners["fts"] = (
            ds.scanner(
                full_text_query="word3",
                columns=["id"],
                disable_scoring_autoprojection=True,
            ),
            "MatchQuery",
        )
    out: Json = {}
    for name, (scanner, marker) in scanners.items():
        ids = sorted(scanner.to_table().column("id").to_pylist())
        out[name] = {"indexed": marker in scanner.explain_plan(), "ids": ids}
    return out


def write_stale_writer(root: str, opts: Options) -> Json:
    """Version 1 of the table a stale writer and two other writers then commit to."""
    uri = table_uri(root, "stale-writer")
    lance.write_dataset(small_rows(0, 10), uri, storage_options=opts)
    return {
        "tables": {"stale-writer": describe(lance.dataset(uri, storage_options=opts))}
    }


def stale_writer(uri: str, opts: Options, signal: str) -> Json:
    """A writer whose commit is held inside Lance's commit lock (see the module docstring):
    Lance has checked the versions committed since it read the table and picked the number
    to write; the manifest is written only once ``signal`` exists."""
    read_version = lance.dataset(uri, storage_options=opts).version

    @contextmanager
    def held(version: int) -> Iterator[None]:
        sys.stdout.write(json.dumps({"locked": version}) + "\n")
        sys.stdout.flush()
        deadline = time.monotonic() + 240
        while not Path(signal).exists():
            if time.monotonic() > deadline:
                raise TimeoutError("no signal")
            time.sleep(0.05)
        yield

    ds = lance.write_dataset(
        small_rows(500, 3), uri, mode="append", commit_lock=held, storage_options=opts
    )
    return {"committed": ds.version, "readVersion": read_version}


def commit_others(uri: str, opts: Options) -> Json:
    """Two commits of other writers: an append, then an overwrite (which names none of the
    earlier versions' files)."""
    lance.write_dataset(small_rows(100, 5), uri, mode="append", storage_options=opts)
    ds = lance.write_dataset(
        small_rows(200, 5), uri, mode="overwrite", storage_options=opts
    )
    return {"versions": [int(v["version"]) for v in ds.versions()]}


def write_tagged_compaction(root: str, opts: Options) -> Json:
    """Lance's own tag-strands-files case: small appends, a tag on an early version, then
    deletes and compactions that rewrite every later version's files."""
    uri = table_uri(root, "tagged")
    ds = lance.write_dataset(small_rows(0, 10), uri, storage_options=opts)
    ds = lance.write_dataset(
        small_rows(10, 10), uri, mode="append", storage_options=opts
    )
    ds.tags.create("old", 2)
    for i in range(2, 6):
        ds = lance.write_dataset(
            small_rows(10 * i, 10), uri, mode="append", storage_options=opts
        )
    ds.delete("id % 3 = 0")
    ds = lance.dataset(uri, storage_options=opts)
    ds.optimize.compact_files(target_rows_per_fragment=1000)
    ds = lance.write_dataset(
        small_rows(100, 10), uri, mode="append", storage_options=opts
    )
    ds.create_scalar_index("id", "BTREE")
    ds = lance.write_dataset(
        small_rows(110, 10), uri, mode="append", storage_options=opts
    )
    ds.create_scalar_index("id", "BTREE", replace=True)
    ds = lance.dataset(uri, storage_options=opts)
    ds.optimize.compact_files(target_rows_per_fragment=1000)
    return {"tables": {"tagged": describe(lance.dataset(uri, storage_options=opts))}}


def write_abandoned_fragments(root: str, opts: Options) -> Json:
    """Versions 1-4, then ``write_fragments`` output never committed (a writer that gave
    up): data files no manifest names, newer than every manifest."""
    uri = table_uri(root, "abandoned")
    lance.write_dataset(small_rows(0, 10), uri, storage_options=opts)
    for i in range(1, 4):
        lance.write_dataset(
            small_rows(10 * i, 10), uri, mode="overwrite", storage_options=opts
        )
    time.sleep(
        1.1
    )  # whole-second stamps: the abandoned files are newer than every manifest
    lance.fragment.write_fragments(
        small_rows(500, 30), uri, max_rows_per_file=10, storage_options=opts
    )
    return {"tables": {"abandoned": describe(lance.dataset(uri, storage_options=opts))}}


def write_auto_cleanup(root: str, opts: Options) -> Json:
    """Two small tables: ``autoclean`` with Lance's automatic cleanup configured by its first
    write (``lance.auto_cleanup.interval`` and ``.older_than`` in the manifest config), and
    ``noclean`` without it."""
    on = table_uri(root, "autoclean")
    lance.write_dataset(
        small_rows(0, 5),
        on,
        auto_cleanup_options={"interval": 20, "older_than_seconds": 3600},
        storage_options=opts,
    )
    lance.write_dataset(small_rows(5, 5), on, mode="append", storage_options=opts)
    off = table_uri(root, "noclean")
    lance.write_dataset(small_rows(0, 5), off, storage_options=opts)
    lance.write_dataset(small_rows(5, 5), off, mode="append", storage_options=opts)
    return {
        "tables": {
            "autoclean": describe(lance.dataset(on, storage_options=opts)),
            "noclean": describe(lance.dataset(off, storage_options=opts)),
        },
        "config": {
            "autoclean": dict(lance.dataset(on, storage_options=opts).config()),
            "noclean": dict(lance.dataset(off, storage_options=opts).config()),
        },
    }


SCENARIOS: dict[str, Callable[[str, Options], Json]] = {
    "history": write_history,
    "v1-naming": write_v1_naming,
    "stable-row-ids": write_stable_row_ids,
    "fragment-reuse": write_fragment_reuse,
    "blobs": write_blobs,
    "branches": write_branches,
    "shallow-clone": write_shallow_clone,
    "stale-hint": write_stale_hint,
    "tagged-compaction": write_tagged_compaction,
    "abandoned-fragments": write_abandoned_fragments,
    "stale-writer": write_stale_writer,
    "index-window": write_index_window,
    "auto-cleanup": write_auto_cleanup,
}


# --- verify ---


def canonical(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"bytes": hashlib.sha256(value).hexdigest(), "len": len(value)}
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def blob_columns(ds: lance.LanceDataset) -> list[str]:
    return [f.name for f in ds.schema if "blob" in str(f.type)]


def read_version_or_error(ds: lance.LanceDataset) -> Json:
    """``read_version``, or the error pylance raised (for ``verify --tolerant``)."""
    try:
        return read_version(ds)
    except (OSError, ValueError, pa.ArrowException) as error:  # the outcome under test
        return {"error": f"{type(error).__name__}: {error}"}


def read_version(ds: lance.LanceDataset) -> Json:
    """Reads one version in full: every column, blob payloads included; rows sorted by id."""
    blobs = blob_columns(ds)
    plain = [f.name for f in ds.schema if f.name not in blobs]
    table = ds.to_table(columns=plain, with_row_id=bool(blobs))
    records = table.to_pylist()
    if blobs:
        row_ids = [r.pop("_rowid") for r in records]
        for column in blobs:
            payloads = dict(ds.read_blobs(column, ids=row_ids)) if row_ids else {}
            for row_id, record in zip(row_ids, records, strict=True):
                record[column] = payloads.get(row_id)
    records.sort(key=lambda r: json.dumps(canonical(r), sort_keys=True))
    digest = hashlib.sha256()
    for record in records:
        digest.update(json.dumps(canonical(record), sort_keys=True).encode())
        digest.update(b"\n")
    return {"rows": len(records), "checksum": digest.hexdigest()}


def verify(
    uri: str, opts: Options, tolerant: bool = False, queries: bool = False
) -> Json:
    ds = lance.dataset(uri, storage_options=opts)
    read_main = read_version_or_error if tolerant else read_version

    def read(version: lance.LanceDataset) -> Json:
        out = read_main(version)
        return {**out, "queries": index_queries(version)} if queries else out

    main = {
        str(v["version"]): read(ds.checkout_version(int(v["version"])))
        for v in ds.versions()
    }
    branches: Json = {}
    for name in ds.branches.list():
        head = ds.checkout_version((name, None))
        branches[name] = {
            str(v["version"]): read_version(
                ds.checkout_version((name, int(v["version"])))
            )
            for v in head.versions()
        }
    return {
        "latest": ds.version,
        "main": main,
        "branches": branches,
        "tags": {
            name: {"branch": t.get("branch"), "version": t["version"]}
            for name, t in ds.tags.list().items()
        },
        "tracked": tracked_keys(
            uri, [ds] + [ds.checkout_version((b, None)) for b in branches]
        ),
    }


def tracked_keys(uri: str, heads: list[lance.LanceDataset]) -> Json:
    """Files the manifests of main and every branch track: keys relative to the table root
    (``tree/{branch}/...`` for a branch's own files) and the count of files elsewhere."""
    root = uri.rstrip("/")
    keys: set[str] = set()
    elsewhere: set[str] = set()
    for head in heads:
        # One read: tracked_files() lists in no fixed order, so its columns go together.
        files = head.tracked_files().read_all()
        columns = [files.column(c).to_pylist() for c in ("base_uri", "path")]
        for base, path in zip(*columns, strict=True):
            rel = relative_to(str(base).rstrip("/"), root)
            if rel is None:
                elsewhere.add(f"{base}/{path}")
            else:
                keys.add(f"{rel}/{path}" if rel else str(path))
    return {"keys": sorted(keys), "elsewhere": len(elsewhere)}


def relative_to(base: str, root: str) -> str | None:
    """``base`` relative to the table root, or None when it lies elsewhere."""
    for prefix in ("file://", ""):
        candidate = base.removeprefix(prefix)
        if candidate == root:
            return ""
        if candidate.startswith(root + "/"):
            return candidate[len(root) + 1 :]
    return None


def read_slowly(uri: str, opts: Options, version: int, signal: str) -> Json:
    """A reader mid-scan: opens ``version``, reads its first fragment, prints ``opened``,
    waits until the file ``signal`` exists, then reads the rest. Prints the outcome."""
    ds = lance.dataset(uri, version=version, storage_options=opts)
    fragments = ds.get_fragments()
    first = fragments[0].to_table().num_rows
    sys.stdout.write('{"opened": true}\n')
    sys.stdout.flush()
    deadline = time.monotonic() + 120
    while not Path(signal).exists():
        if time.monotonic() > deadline:
            return {"ok": False, "error": "no signal"}
        time.sleep(0.05)
    try:
        rest = sum(f.to_table().num_rows for f in fragments[1:])
    except (OSError, ValueError, pa.ArrowException) as error:  # the outcome under test
        return {"ok": False, "error": f"{type(error).__name__}: {error}"}
    return {"ok": True, "rows": first + rest}


def lance_cleanup(
    uri: str,
    opts: Options,
    retain: int | None,
    older_than: float = 0,
    delete_unverified: bool = True,
) -> Json:
    """Lance's own cleanup of old versions (for side-by-side tests): keeps the newest
    ``retain`` and those newer than ``older_than`` seconds; ``delete_unverified`` as given
    (by default on: files named by no manifest go whatever their age)."""
    ds = lance.dataset(uri, storage_options=opts)
    stats = ds.cleanup_old_versions(
        older_than=timedelta(seconds=older_than),
        retain_versions=retain,
        delete_unverified=delete_unverified,
        error_if_tagged_old_versions=False,
    )
    return {"bytesRemoved": stats.bytes_removed, "oldVersions": stats.old_versions}


def create_branch(uri: str, opts: Options, name: str, version: int) -> Json:
    """A Lance branch ``name`` forked from main's ``version`` (any name Lance accepts)."""
    ds = lance.dataset(uri, storage_options=opts)
    ds.create_branch(name, version)
    return describe(lance.dataset(uri, storage_options=opts))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] if __doc__ else None
    )
    sub = parser.add_subparsers(dest="command", required=True)
    write_cmd = sub.add_parser("write")
    write_cmd.add_argument("scenario", choices=sorted(SCENARIOS))
    write_cmd.add_argument("root")
    verify_cmd = sub.add_parser("verify")
    verify_cmd.add_argument("uri")
    verify_cmd.add_argument("--tolerant", action="store_true")
    verify_cmd.add_argument("--queries", action="store_true")
    cleanup_cmd = sub.add_parser("lance-cleanup")
    cleanup_cmd.add_argument("uri")
    cleanup_cmd.add_argument("--retain", type=int, default=1)
    cleanup_cmd.add_argument("--no-retain", action="store_true")
    cleanup_cmd.add_argument("--older-than", type=float, default=0)
    cleanup_cmd.add_argument("--keep-unverified", action="store_true")
    stale_cmd = sub.add_parser("stale-writer")
    stale_cmd.add_argument("uri")
    stale_cmd.add_argument("--signal", required=True)
    step_cmd = sub.add_parser("index-step")
    step_cmd.add_argument("uri")
    step_cmd.add_argument("step", type=int, choices=[1, 2])
    others_cmd = sub.add_parser("commit-others")
    others_cmd.add_argument("uri")
    branch_cmd = sub.add_parser("create-branch")
    branch_cmd.add_argument("uri")
    branch_cmd.add_argument("name")
    branch_cmd.add_argument("--from-version", type=int, required=True)
    reader_cmd = sub.add_parser("read-slowly")
    reader_cmd.add_argument("uri")
    reader_cmd.add_argument("--version", type=int, required=True)
    reader_cmd.add_argument("--signal", required=True)
    for cmd in (
        write_cmd,
        verify_cmd,
        cleanup_cmd,
        stale_cmd,
        step_cmd,
        others_cmd,
        branch_cmd,
        reader_cmd,
    ):
        cmd.add_argument("--storage-options", default="{}")
    args = parser.parse_args(argv)
    opts: Options = json.loads(args.storage_options)
    if args.command == "write":
        out = SCENARIOS[args.scenario](args.root, opts)
    elif args.command == "verify":
        out = verify(args.uri, opts, args.tolerant, args.queries)
    elif args.command == "stale-writer":
        out = stale_writer(args.uri, opts, args.signal)
    elif args.command == "index-step":
        out = index_step(args.uri, opts, args.step)
    elif args.command == "commit-others":
        out = commit_others(args.uri, opts)
    elif args.command == "create-branch":
        out = create_branch(args.uri, opts, args.name, args.from_version)
    elif args.command == "read-slowly":
        out = read_slowly(args.uri, opts, args.version, args.signal)
    else:
        out = lance_cleanup(
            args.uri,
            opts,
            None if args.no_retain else args.retain,
            args.older_than,
            not args.keep_unverified,
        )
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
