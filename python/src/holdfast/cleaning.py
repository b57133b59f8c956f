"""holdfast's cleanup from Python: ``holdfast.cleanup(uri, ...)`` runs the bundled holdfast
CLI (:mod:`holdfast.cli`) as ``holdfast cleanup <url> --json`` and returns its answer as
typed stats. There is one cleanup, the TypeScript one (``@holdfast/cleanup``); this module
only translates: arguments and Lance ``storage_options`` into the CLI's flags and
environment, the CLI's ``--json`` answer into :class:`CleanupStats` (the
``CleanupStatsShape`` of ``@holdfast/api-shapes``, parsed strictly), its JSON error into a
:class:`~holdfast.errors.HoldfastError` of the same kind, and its progress events on stderr
into :class:`CleanupProgress` calls (apps/cli/README.md, "Progress events").
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal, cast, get_args
from urllib.parse import urlparse

from . import cli
from .errors import ERROR_KINDS, ErrorKind, HoldfastError

__all__ = [
    "CleanupProgress",
    "CleanupStats",
    "KeptVersion",
    "ObjectsDeleted",
    "ProgressPhase",
    "Recovered",
    "Requests",
    "RetiredVersion",
    "cleanup",
    "exit_code_kind",
    "parse_cleanup_answer",
    "parse_progress_event",
    "storage_options_to_cli",
]

ProgressPhase = Literal["recover", "plan", "retire", "delete", "orphans"]

EXIT_CODE_KINDS: Mapping[int, ErrorKind] = {
    1: "refused",
    2: "invalid-input",
    3: "conflict",
    4: "unresolved",
    5: "unsupported",
    130: "aborted",
}
"""The CLI's exit codes (apps/cli/README.md, "Exit codes") as error kinds, for an answer
without a JSON error document."""


# --- the answer ---


@dataclass(frozen=True)
class RetiredVersion:
    """A version this run retired (its manifest and the files only it named are gone)."""

    branch: str
    version: int


@dataclass(frozen=True)
class KeptVersion:
    """A version this run kept, with why: ``lease``, ``tag``, ``branch-lineage``,
    ``intent``, ``policy``, ``latest`` or ``recent``."""

    branch: str
    version: int
    reason: str
    reasons: tuple[str, ...] = ()
    """Every reason the version was kept, the deciding ``reason`` first."""


@dataclass(frozen=True)
class Recovered:
    """Earlier runs' retirements this run finished (``committed``), undid (``cancelled``)
    or found still held (``retained``)."""

    committed: int
    cancelled: int
    retained: int


@dataclass(frozen=True)
class ObjectsDeleted:
    """Objects deleted, by kind: retired ``manifests``, ``data_files`` only retired
    versions named, ``orphans`` (files no manifest names, past the grace), ``total``;
    ``other`` holds every further count the CLI reports (``probes``, ``expiredLeases``,
    ...)."""

    manifests: int
    data_files: int
    orphans: int
    total: int
    other: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Requests:
    """Requests the run sent to the store, by type."""

    get: int
    head: int
    put: int
    delete: int
    delete_many: int
    list: int
    total: int


@dataclass(frozen=True)
class CleanupStats:
    """What a cleanup did (``holdfast cleanup --json``'s ``stats``). ``raw`` is the whole
    answer document, for fields added after this version of the package."""

    dry_run: bool
    retired: tuple[RetiredVersion, ...]
    kept: tuple[KeptVersion, ...]
    recovered: Recovered
    objects_deleted: ObjectsDeleted
    bytes_deleted: int
    requests: Requests
    elapsed_ms: int
    warnings: tuple[str, ...]
    raw: Mapping[str, Any] = field(repr=False, compare=False)

    @property
    def retired_versions(self) -> list[int]:
        """The retired version numbers of ``main`` (a pylance user's view), ascending."""
        return sorted(r.version for r in self.retired if r.branch == "main")

    def kept_reasons(self, version: int, branch: str = "main") -> list[str]:
        """Every reason ``version`` of ``branch`` was kept (empty when it was not)."""
        return [
            reason
            for k in self.kept
            if k.branch == branch and k.version == version
            for reason in (k.reasons or (k.reason,))
        ]


@dataclass(frozen=True)
class CleanupProgress:
    """One progress event of a run (``CleanupProgressEventShape``): ``done`` of ``total``
    (``None`` while unknown) items of ``phase``, with the estimate."""

    command: Literal["cleanup", "recover"]
    phase: ProgressPhase
    done: int
    total: int | None
    left: int | None
    rate_per_sec: float | None
    eta_ms: int | None
    elapsed_ms: int | None


def parse_cleanup_answer(document: object) -> CleanupStats:
    """The :class:`CleanupStats` of a ``holdfast cleanup --json`` success document; a
    document of any other shape is ``ambiguous`` (CLI_MALFORMED_ANSWER): the run may have
    deleted things this package cannot report."""
    doc = _obj(document, "answer")
    if doc.get("ok") is not True or doc.get("command") != "cleanup":
        raise _malformed("answer", "is not a successful cleanup answer")
    stats = _obj(doc.get("stats"), "stats")
    objects = _obj(stats.get("objectsDeleted"), "stats.objectsDeleted")
    requests = _obj(stats.get("requests"), "stats.requests")
    recovered = _obj(stats.get("recovered"), "stats.recovered")
    known = {"manifests", "dataFiles", "orphans", "total"}
    return CleanupStats(
        dry_run=_bool(stats.get("dryRun"), "stats.dryRun"),
        retired=tuple(
            RetiredVersion(_str(r.get("branch"), "retired.branch"), _int(r.get("version"), "v"))
            for r in (_obj(x, "stats.retired[]") for x in _list(stats.get("retired"), "retired"))
        ),
        kept=tuple(
            KeptVersion(
                _str(r.get("branch"), "retained.branch"),
                _int(r.get("version"), "retained.version"),
                _str(r.get("reason"), "retained.reason"),
                tuple(
                    _str(x, "retained.reasons[]")
                    for x in _list(r.get("reasons"), "retained.reasons")
                ),
            )
            for r in (_obj(x, "stats.retained[]") for x in _list(stats.get("retained"), "retained"))
        ),
        recovered=Recovered(
            _int(recovered.get("committed"), "recovered.committed"),
            _int(recovered.get("cancelled"), "recovered.cancelled"),
            _int(recovered.get("retained"), "recovered.retained"),
        ),
        objects_deleted=ObjectsDeleted(
            manifests=_int(objects.get("manifests"), "objectsDeleted.manifests"),
            data_files=_int(objects.get("dataFiles"), "objectsDeleted.dataFiles"),
            orphans=_int(objects.get("orphans"), "objectsDeleted.orphans"),
            total=_int(objects.get("total"), "objectsDeleted.total"),
            other={k: _int(v, f"objectsDeleted.{k}") for k, v in objects.items() if k not in known},
        ),
        bytes_deleted=_int(stats.get("bytesDeleted"), "stats.bytesDeleted"),
        requests=Requests(
            get=_int(requests.get("get"), "requests.get"),
            head=_int(requests.get("head"), "requests.head"),
            put=_int(requests.get("put"), "requests.put"),
            delete=_int(requests.get("delete"), "requests.delete"),
            delete_many=_int(requests.get("deleteMany"), "requests.deleteMany"),
            list=_int(requests.get("list"), "requests.list"),
            total=_int(requests.get("total"), "requests.total"),
        ),
        elapsed_ms=_int(stats.get("elapsedMs"), "stats.elapsedMs"),
        warnings=tuple(_str(w, "warnings[]") for w in _list(stats.get("warnings"), "warnings")),
        raw=doc,
    )


def parse_progress_event(line: str) -> CleanupProgress | None:
    """The progress event on one stderr line of ``--json``, or ``None`` for any other line
    (a note, a warning)."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("event") != "progress":
        return None
    command, phase = value.get("command"), value.get("phase")
    if command not in ("cleanup", "recover") or phase not in get_args(ProgressPhase):
        return None

    def opt_int(name: str) -> int | None:
        v = value.get(name)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    rate = value.get("ratePerSec")
    done = opt_int("done")
    if done is None:
        return None
    return CleanupProgress(
        command=cast(Literal["cleanup", "recover"], command),
        phase=cast(ProgressPhase, phase),
        done=done,
        total=opt_int("total"),
        left=opt_int("left"),
        rate_per_sec=float(rate) if isinstance(rate, (int, float)) else None,
        eta_ms=opt_int("etaMs"),
        elapsed_ms=opt_int("elapsedMs"),
    )


def exit_code_kind(code: int) -> ErrorKind:
    """The error kind of a CLI exit code without an error document; anything unlisted is
    ``ambiguous`` (the run's outcome is not known)."""
    return EXIT_CODE_KINDS.get(code, "ambiguous")


# --- storage options ---

_Target = Literal["env", "flag", "ignore", "gcs-service-account", "gcs-service-account-key"]
_S3 = ("s3", "s3a")
_AZ = ("az", "abfs", "abfss", "azure")
_GS = ("gs", "gcs")

STORAGE_OPTION_TABLE: Mapping[str, tuple[tuple[str, ...], _Target, str]] = {
    # Lance's key (lowercase): (URL schemes it applies to, where it goes, env var or flag)
    "aws_access_key_id": (_S3, "env", "AWS_ACCESS_KEY_ID"),
    "access_key_id": (_S3, "env", "AWS_ACCESS_KEY_ID"),
    "aws_secret_access_key": (_S3, "env", "AWS_SECRET_ACCESS_KEY"),
    "secret_access_key": (_S3, "env", "AWS_SECRET_ACCESS_KEY"),
    "aws_session_token": (_S3, "env", "AWS_SESSION_TOKEN"),
    "session_token": (_S3, "env", "AWS_SESSION_TOKEN"),
    "aws_token": (_S3, "env", "AWS_SESSION_TOKEN"),
    "token": (_S3, "env", "AWS_SESSION_TOKEN"),
    "aws_profile": (_S3, "env", "AWS_PROFILE"),
    "aws_endpoint": (_S3, "flag", "--endpoint"),
    "aws_endpoint_url": (_S3, "flag", "--endpoint"),
    "aws_endpoint_url_s3": (_S3, "flag", "--endpoint"),
    "endpoint": (_S3, "flag", "--endpoint"),
    "endpoint_url": (_S3, "flag", "--endpoint"),
    "aws_region": (_S3, "flag", "--region"),
    "region": (_S3, "flag", "--region"),
    "aws_default_region": (_S3, "flag", "--region"),
    "aws_virtual_hosted_style_request": (_S3, "flag", "--path-style"),
    "virtual_hosted_style_request": (_S3, "flag", "--path-style"),
    "azure_storage_connection_string": (_AZ, "env", "AZURE_STORAGE_CONNECTION_STRING"),
    "azure_storage_account_name": (_AZ, "env", "AZURE_STORAGE_ACCOUNT"),
    "azure_account_name": (_AZ, "env", "AZURE_STORAGE_ACCOUNT"),
    "account_name": (_AZ, "env", "AZURE_STORAGE_ACCOUNT"),
    "azure_storage_account_key": (_AZ, "env", "AZURE_STORAGE_KEY"),
    "azure_storage_access_key": (_AZ, "env", "AZURE_STORAGE_KEY"),
    "azure_storage_master_key": (_AZ, "env", "AZURE_STORAGE_KEY"),
    "account_key": (_AZ, "env", "AZURE_STORAGE_KEY"),
    "access_key": (_AZ, "env", "AZURE_STORAGE_KEY"),
    "master_key": (_AZ, "env", "AZURE_STORAGE_KEY"),
    "azure_endpoint": (_AZ, "env", "AZURE_STORAGE_BLOB_ENDPOINT"),
    "azure_storage_endpoint": (_AZ, "env", "AZURE_STORAGE_BLOB_ENDPOINT"),
    "google_service_account": (_GS, "gcs-service-account", "GOOGLE_APPLICATION_CREDENTIALS"),
    "google_service_account_path": (_GS, "gcs-service-account", "GOOGLE_APPLICATION_CREDENTIALS"),
    "service_account": (_GS, "gcs-service-account", "GOOGLE_APPLICATION_CREDENTIALS"),
    "service_account_path": (_GS, "gcs-service-account", "GOOGLE_APPLICATION_CREDENTIALS"),
    "google_application_credentials": (
        _GS,
        "gcs-service-account",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ),
    "google_service_account_key": (
        _GS,
        "gcs-service-account-key",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ),
    "service_account_key": (_GS, "gcs-service-account-key", "GOOGLE_APPLICATION_CREDENTIALS"),
    # Client tuning of Lance's object_store with no bearing on what is deleted: accepted and
    # not passed on (the CLI's clients keep their own defaults; an http:// endpoint is
    # allowed by its scheme).
    "allow_http": (_S3 + _AZ + _GS, "ignore", ""),
    "timeout": (_S3 + _AZ + _GS, "ignore", ""),
    "connect_timeout": (_S3 + _AZ + _GS, "ignore", ""),
    "pool_idle_timeout": (_S3 + _AZ + _GS, "ignore", ""),
    "user_agent": (_S3 + _AZ + _GS, "ignore", ""),
}
"""Every Lance storage option holdfast's cleanup understands, and where it goes for the CLI
child process: an environment variable the CLI (or the SDK it runs) reads, or a flag.
A key outside this table, or one for another URL scheme, is ``invalid-input`` before
anything runs."""


_CREDENTIAL_FAMILIES = (
    frozenset(("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")),
    frozenset(
        (
            "AZURE_STORAGE_CONNECTION_STRING",
            "AZURE_STORAGE_ACCOUNT",
            "AZURE_STORAGE_KEY",
            "AZURE_STORAGE_ACCESS_KEY",
            "AZURE_STORAGE_BLOB_ENDPOINT",
        )
    ),
    frozenset(("GOOGLE_APPLICATION_CREDENTIALS",)),
)
"""Credentials the storage options give replace the caller's environment of the same
family whole: an inherited session token or connection string never mixes with them."""


@dataclass(frozen=True)
class CliStorage:
    """Lance storage options translated for the CLI: flags after the URL, environment
    variables for the child, and a service-account key file written for this run (removed
    after it)."""

    flags: tuple[str, ...]
    env: Mapping[str, str]
    key_file_json: str | None = None
    unset: tuple[str, ...] = ()


def storage_options_to_cli(uri: str, storage_options: Mapping[str, str] | None) -> CliStorage:
    """Translates Lance's ``storage_options`` for the CLI (:data:`STORAGE_OPTION_TABLE`).
    A GCS service account JSON that names an emulator (``gcs_base_url``, as object_store
    reads it, with ``disable_oauth``) becomes ``--endpoint``; any other is the Application
    Default Credentials file. ``invalid-input`` for an unknown key, a key of another store,
    or a value that is not a string."""
    scheme = urlparse(uri).scheme.lower() if "://" in uri else "file"
    flags: dict[str, str | None] = {}
    env: dict[str, str] = {}
    key_file_json: str | None = None
    for raw_key, value in (storage_options or {}).items():
        key = str(raw_key).lower()
        entry = STORAGE_OPTION_TABLE.get(key)
        if not isinstance(value, str):
            raise _bad_option(raw_key, f"its value is {type(value).__name__}, not a string")
        if entry is None:
            raise _bad_option(raw_key, "holdfast's cleanup does not know this storage option")
        schemes, target, name = entry
        if scheme not in schemes:
            raise _bad_option(raw_key, f"it does not apply to a {scheme}:// table")
        if target == "env":
            env[name] = value
        elif target == "flag" and name == "--path-style":
            if value.lower() not in ("true", "false"):
                raise _bad_option(raw_key, f"{value!r} is not true or false")
            if value.lower() == "false":
                flags[name] = None
        elif target == "flag":
            flags[name] = value
        elif target in ("gcs-service-account", "gcs-service-account-key"):
            text = Path(value).read_text("utf-8") if target == "gcs-service-account" else value
            account = _service_account(raw_key, text)
            if account.get("disable_oauth") is True and isinstance(
                account.get("gcs_base_url"), str
            ):
                flags["--endpoint"] = str(account["gcs_base_url"])
            elif target == "gcs-service-account":
                env[name] = value
            else:
                key_file_json = text
    if (
        scheme in _S3
        and "--endpoint" in flags
        and not {"aws_virtual_hosted_style_request", "virtual_hosted_style_request"}
        & {str(k).lower() for k in storage_options or {}}
    ):
        # As object_store (and holdfast.lance.open_store): path-style with an endpoint.
        flags["--path-style"] = None
    given = set(env) | ({"GOOGLE_APPLICATION_CREDENTIALS"} if key_file_json else set())
    unset = tuple(
        sorted(v for family in _CREDENTIAL_FAMILIES if given & family for v in family - given)
    )
    argv: list[str] = []
    for flag, flag_value in flags.items():
        argv.extend([flag] if flag_value is None else [flag, flag_value])
    return CliStorage(tuple(argv), env, key_file_json, unset)


# --- the run ---


def cleanup(
    uri: str,
    *,
    older_than: timedelta | None = None,
    retain_versions: int | None = None,
    before_version: int | None = None,
    branches: Sequence[str] | None = None,
    min_age: timedelta | None = None,
    orphan_grace: timedelta | None = None,
    no_writer_active: bool = False,
    error_if_tagged: bool = False,
    dry_run: bool = False,
    wait: bool = False,
    max_deletes_per_second: int | None = None,
    delete_concurrency: int | None = None,
    storage_options: Mapping[str, str] | None = None,
    progress: Callable[[CleanupProgress], None] | None = None,
    node: str | None = None,
) -> CleanupStats:
    """Runs holdfast's cleanup on the dataset or Lance table at ``uri`` (a local path,
    ``file://``, ``s3://``, ``gs://`` or ``az://``), as ``holdfast cleanup`` does
    (apps/cli/README.md): retires versions meeting every given criterion (at least one of
    ``older_than``, ``retain_versions``, ``before_version``) and always keeps the latest
    version of each branch, leased, tagged and forked-from versions, and versions younger
    than ``min_age`` (5 minutes unless given). Returns the run's :class:`CleanupStats`;
    raises :class:`~holdfast.errors.HoldfastError` of the CLI's error kind; every input
    error is raised before anything runs. ``progress`` is called with each progress event,
    on a thread of this call, before it returns."""
    args = ["cleanup", _url(uri), "--json"]
    if older_than is not None:
        args += ["--older-than", _duration(older_than, "older_than")]
    if retain_versions is not None:
        args += ["--retain", str(_count(retain_versions, "retain_versions", 1))]
    if before_version is not None:
        args += ["--before-version", str(_count(before_version, "before_version", 0))]
    if older_than is None and retain_versions is None and before_version is None:
        raise HoldfastError(
            "invalid-input",
            "cleanup",
            "cleanup needs a policy",
            code="INVALID_POLICY",
            hint="pass at least one of older_than, retain_versions, before_version",
        )
    if branches:
        args += ["--branch", *branches]
    if min_age is not None:
        args += ["--min-age", _duration(min_age, "min_age")]
    if orphan_grace is not None:
        args += ["--orphan-grace", _duration(orphan_grace, "orphan_grace")]
    if max_deletes_per_second is not None:
        args += [
            "--max-deletes-per-second",
            str(_count(max_deletes_per_second, "max_deletes_per_second", 1)),
        ]
    if delete_concurrency is not None:
        args += ["--delete-concurrency", str(_count(delete_concurrency, "delete_concurrency", 1))]
    for flag, on in (
        ("--no-writer-active", no_writer_active),
        ("--error-if-tagged", error_if_tagged),
        ("--dry-run", dry_run),
        ("--wait", wait),
    ):
        if on:
            args.append(flag)
    storage = storage_options_to_cli(uri, storage_options)
    args += storage.flags
    document = run_json(args, storage, progress=progress, node=node)
    return parse_cleanup_answer(document)


def run_json(
    args: Sequence[str],
    storage: CliStorage,
    *,
    progress: Callable[[CleanupProgress], None] | None = None,
    node: str | None = None,
) -> dict[str, Any]:
    """Runs the bundled CLI with ``args`` (which include ``--json``) and returns its answer
    document; a failure is raised as the CLI's typed error."""
    argv = cli.command(args, node)
    with _child_env(storage) as env:
        child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
        )
        notes: list[str] = []
        callback_error: list[BaseException] = []

        def read_stderr() -> None:
            assert child.stderr is not None
            for line in child.stderr:
                event = parse_progress_event(line)
                if event is None:
                    notes.append(line.rstrip("\n"))
                elif progress is not None and not callback_error:
                    try:
                        progress(event)
                    except BaseException as error:
                        callback_error.append(error)

        reader = threading.Thread(target=read_stderr, name="holdfast-cli-stderr", daemon=True)
        reader.start()
        try:
            assert child.stdout is not None
            out = child.stdout.read()
            code = child.wait()
        except BaseException:
            # KeyboardInterrupt: the CLI stops at its next safe point on SIGINT.
            child.send_signal(2)
            child.wait()
            raise
        finally:
            reader.join()
    document = _answer(out)
    if code == 0 and document is not None and document.get("ok") is True:
        if callback_error:
            raise callback_error[0]
        return document
    raise _cli_error(args[0], code, document, notes)


# --- utils ---


@contextmanager
def _child_env(storage: CliStorage) -> Iterator[dict[str, str]]:
    inherited = {k: v for k, v in os.environ.items() if k not in storage.unset}
    env = {**inherited, **storage.env, "NO_COLOR": "1"}
    if storage.key_file_json is None:
        yield env
        return
    with tempfile.TemporaryDirectory(prefix="holdfast-gcs-") as tmp:
        path = Path(tmp) / "service-account.json"
        path.touch(mode=0o600)
        path.write_text(storage.key_file_json, "utf-8")
        yield {**env, "GOOGLE_APPLICATION_CREDENTIALS": str(path)}


def _answer(out: str) -> dict[str, Any] | None:
    try:
        value = json.loads(out)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _cli_error(
    command: str, code: int, document: dict[str, Any] | None, notes: list[str]
) -> HoldfastError:
    error = document.get("error") if document is not None else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        kind = error.get("kind")
        mapped: ErrorKind = cast(ErrorKind, kind) if kind in ERROR_KINDS else exit_code_kind(code)
        if kind == "internal":
            mapped = "ambiguous"

        def text(name: str) -> str | None:
            v = error.get(name)
            return v if isinstance(v, str) else None

        status = error.get("status")
        return HoldfastError(
            mapped,
            text("operation") or command,
            error["message"],
            key=text("key"),
            code=text("code") or (f"CLI_{str(kind).upper()}" if kind not in ERROR_KINDS else None),
            status=status if isinstance(status, int) else None,
            hint=text("hint"),
        )
    detail = "; ".join(n for n in notes if n.strip())[-2000:]
    if code == 0:
        return _malformed("answer", f"is not JSON (stderr: {detail or 'empty'})")
    return HoldfastError(
        exit_code_kind(code),
        command,
        f"holdfast {command} exited {code} without an answer: {detail or 'no output'}",
        code="CLI_NO_ANSWER",
        hint="an interrupted cleanup is finished or undone by the next one (or holdfast recover)",
    )


def _url(uri: str) -> str:
    if not isinstance(uri, str) or not uri:
        raise HoldfastError("invalid-input", "cleanup", f"invalid URI {uri!r}", code="INVALID_URL")
    if uri.startswith("file://"):
        return urlparse(uri).path
    if "://" not in uri:
        return os.path.abspath(uri)
    return uri


def _duration(value: timedelta, name: str) -> str:
    if not isinstance(value, timedelta) or value < timedelta(0):
        raise HoldfastError(
            "invalid-input",
            "cleanup",
            f"{name} must be a timedelta of 0 or more, got {value!r}",
            code="INVALID_DURATION",
        )
    ms = value // timedelta(milliseconds=1)
    return "0" if ms == 0 else f"{ms}ms"


def _count(value: object, name: str, least: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise HoldfastError(
            "invalid-input",
            "cleanup",
            f"{name} must be an integer of at least {least}, got {value!r}",
            code="INVALID_ARGUMENT",
        )
    return value


def _bad_option(key: object, why: str) -> HoldfastError:
    return HoldfastError(
        "invalid-input",
        "cleanup",
        f"storage option {key!r}: {why}",
        code="INVALID_STORAGE_OPTION",
        hint="Lance's keys for S3 (aws_*), Azure (azure_storage_*) and GCS "
        "(google_service_account*) are understood: see holdfast.cleaning.STORAGE_OPTION_TABLE",
    )


def _service_account(key: object, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as error:
        raise _bad_option(key, "not a service account JSON") from error
    if not isinstance(value, dict):
        raise _bad_option(key, "not a service account JSON object")
    return value


def _malformed(where: str, why: str) -> HoldfastError:
    return HoldfastError(
        "ambiguous",
        "cleanup",
        f"holdfast cleanup's {where} {why}: what the run did is not known",
        code="CLI_MALFORMED_ANSWER",
        hint="run the cleanup again (or holdfast status) to see the dataset's state",
    )


def _obj(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _malformed(where, "is not an object")
    return value


def _list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _malformed(where, "is not a list")
    return value


def _int(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise _malformed(where, "is not an integer")
    return int(value)


def _str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise _malformed(where, "is not a string")
    return value


def _bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise _malformed(where, "is not a boolean")
    return value
