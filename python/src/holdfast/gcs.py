"""A Google Cloud Storage store on google-cloud-storage, interoperable with
``@holdfast/backends-gcs``: the holdfast ETag of an object is its **generation** (a decimal
string; every write gets a new one, identical bytes or not).

What the lease protocol needs of GCS (docs/protocol.md §2, §4): create-only upload with
``ifGenerationMatch=0`` (acquire), compare-and-swap with ``ifGenerationMatch=<generation>``
(renew), objects.delete with ``ifGenerationMatch`` where honoured (release; Google Cloud
Storage does, fake-gcs-server up to v1.56.1 deletes anyway, so :func:`open_gcs_store` probes
it and the lease code then deletes the checked key unconditionally), object metadata with
generation and ``updated`` (Last-Modified), and listing. Uploads are single requests with
the client's checksum validation off: on a mismatch the client would delete the object it
just wrote without a precondition, which could delete another writer's object.
"""

from __future__ import annotations

import os
import secrets
import threading
from typing import Any, Literal

from .context import ReissuePolicy
from .errors import ErrorKind, HoldfastError
from .resolve import Applied, ResolveOptions, put_if_absent, put_if_match
from .store import (
    Capabilities,
    GetResult,
    IfAbsent,
    IfMatch,
    ListPage,
    ObjectMeta,
    Precondition,
    check_abort,
    validate_key,
    validate_prefix,
)

GCS_BACKEND = "gcs"


class GcsStore:
    """A holdfast store in ``bucket`` under ``prefix``."""

    backend = GCS_BACKEND

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint: str | None = None,
        project: str | None = None,
        credentials: Any = None,
        client: Literal["repeating", "single-attempt"] = "repeating",
        conditional_delete: bool = True,
    ) -> None:
        """Credentials: Application Default Credentials, or ``credentials``. ``endpoint``
        (default ``STORAGE_EMULATOR_HOST``) reaches an emulator without credentials.
        ``client``: ``repeating`` keeps the library's retries of conditional requests;
        ``single-attempt`` sends each request once."""
        prefix = prefix.strip("/")
        if prefix:
            validate_key(prefix, "open")
        self.bucket = bucket
        self._root = f"{prefix}/" if prefix else ""
        self.location = f"gs://{bucket}/{prefix}" if prefix else f"gs://{bucket}"
        self._endpoint = endpoint or os.environ.get("STORAGE_EMULATOR_HOST")
        self._project = project
        self._credentials = credentials
        self.capabilities = Capabilities(
            atomic_conditional_update=True,
            atomic_conditional_delete=conditional_delete,
            timestamp_precision_ms=1000,
            request_mode=client,
            etag_is_content_hash=False,
        )
        self._bucket: Any = None
        self._guard = threading.Lock()

    @property
    def client_bucket(self) -> Any:
        """The library's bucket handle, built on first use."""
        with self._guard:
            if self._bucket is None:
                from google.cloud import storage

                if self._endpoint is not None:
                    from google.auth.credentials import AnonymousCredentials

                    client = storage.Client(
                        project=self._project or "holdfast",
                        credentials=self._credentials or AnonymousCredentials(),  # type: ignore[no-untyped-call]
                        client_options={"api_endpoint": self._endpoint},
                    )
                else:
                    client = storage.Client(project=self._project, credentials=self._credentials)
                self._bucket = client.bucket(self.bucket)
            return self._bucket

    def _retry(self) -> Any:
        if self.capabilities.request_mode == "single-attempt":
            return None
        from google.cloud.storage.retry import DEFAULT_RETRY

        return DEFAULT_RETRY

    # https://cloud.google.com/storage/docs/json_api/v1/objects/get
    def get(self, key: str, *, abort: threading.Event | None = None) -> GetResult | None:
        validate_key(key, "get")
        for _attempt in range(8):
            check_abort(abort, "get", key)
            meta = self.head(key, abort=abort)
            if meta is None:
                return None
            try:
                # The bytes of exactly the generation the metadata named (412 if it moved on).
                body = self.client_bucket.blob(self._root + key).download_as_bytes(
                    if_generation_match=int(meta.etag), checksum=None, retry=self._retry()
                )
            except Exception as error:
                mapped = to_holdfast_error(error, "get", key, None)
                if mapped.kind in ("conflict", "not-found"):
                    continue  # rewritten or deleted between the two reads: read again
                raise mapped from error
            return GetResult(key, meta.etag, meta.last_modified_ms, len(body), bytes(body))
        raise HoldfastError("ambiguous", "get", f"get {key}: the object kept changing", key=key)

    # https://cloud.google.com/storage/docs/json_api/v1/objects/get (metadata)
    def head(self, key: str, *, abort: threading.Event | None = None) -> ObjectMeta | None:
        validate_key(key, "head")
        check_abort(abort, "head", key)
        try:
            blob = self.client_bucket.get_blob(self._root + key, retry=self._retry())
        except Exception as error:
            mapped = to_holdfast_error(error, "head", key, None)
            if mapped.kind == "not-found":
                return None
            raise mapped from error
        return None if blob is None else _meta(key, blob, "head")

    # https://cloud.google.com/storage/docs/json_api/v1/objects/insert
    def put(
        self,
        key: str,
        body: bytes,
        *,
        precondition: Precondition | None = None,
        abort: threading.Event | None = None,
    ) -> str:
        validate_key(key, "put")
        check_abort(abort, "put", key)
        match: dict[str, int] = {}
        if isinstance(precondition, IfAbsent):
            match["if_generation_match"] = 0
        elif isinstance(precondition, IfMatch):
            if not precondition.etag.isdigit():
                raise HoldfastError(
                    "conflict", "put", f"ETag mismatch on {key}", key=key, precondition=precondition
                )
            match["if_generation_match"] = int(precondition.etag)
        blob = self.client_bucket.blob(self._root + key)
        try:
            blob.upload_from_string(
                bytes(body),
                content_type="application/octet-stream",
                checksum=None,
                retry=self._retry(),
                **match,
            )
        except Exception as error:
            raise to_holdfast_error(error, "put", key, precondition) from error
        if blob.generation is None:
            raise HoldfastError(
                "ambiguous", "put", f"put {key}: the answer carried no generation", key=key
            )
        return str(blob.generation)

    # https://cloud.google.com/storage/docs/json_api/v1/objects/delete
    def delete(
        self, key: str, *, if_match: str | None = None, abort: threading.Event | None = None
    ) -> None:
        validate_key(key, "delete")
        check_abort(abort, "delete", key)
        precondition = None if if_match is None else IfMatch(if_match)
        if precondition is not None and not self.capabilities.atomic_conditional_delete:
            raise HoldfastError(
                "unsupported",
                "delete",
                f"{self.location} does not honour ifGenerationMatch on delete",
                key=key,
                precondition=precondition,
            )
        match: dict[str, int] = {}
        if precondition is not None:
            if not precondition.etag.isdigit():
                raise HoldfastError(
                    "conflict",
                    "delete",
                    f"ETag mismatch on {key}",
                    key=key,
                    precondition=precondition,
                )
            match["if_generation_match"] = int(precondition.etag)
        try:
            self.client_bucket.blob(self._root + key).delete(retry=self._retry(), **match)
        except Exception as error:
            mapped = to_holdfast_error(error, "delete", key, precondition)
            if mapped.kind == "not-found" and precondition is None:
                return  # deleting an absent key unconditionally is success
            raise mapped from error

    # https://cloud.google.com/storage/docs/json_api/v1/objects/list
    def list(
        self,
        prefix: str,
        *,
        start_after: str | None = None,
        page_token: str | None = None,
        page_size: int | None = None,
        abort: threading.Event | None = None,
    ) -> ListPage:
        validate_prefix(prefix, "list")
        check_abort(abort, "list")
        options: dict[str, Any] = {"prefix": self._root + prefix, "max_results": page_size or 1000}
        if start_after:
            options["start_offset"] = self._root + start_after
        if page_token is not None:
            options["page_token"] = page_token
        try:
            pages = self.client_bucket.client.list_blobs(
                self.client_bucket, retry=self._retry(), **options
            ).pages
            page = next(pages, None)
            items = [] if page is None else list(page)
            token = (
                None
                if page is None
                else pages.next_page_token
                if hasattr(pages, "next_page_token")
                else None
            )
        except Exception as error:
            raise to_holdfast_error(error, "list", None, None) from error
        objects = [
            _meta(item.name[len(self._root) :], item, "list")
            for item in items
            if not start_after or item.name[len(self._root) :] != start_after
        ]
        return ListPage(objects, token or None)


def open_gcs_store(bucket: str, prefix: str = "", **options: Any) -> GcsStore:
    """Probes the bucket, then answers a :class:`GcsStore` whose capabilities are what it
    really does: a second create-only upload and an upload at a stale generation must be
    refused (else ``unsupported``); a delete at a stale generation decides conditional delete."""
    probe = GcsStore(
        bucket, prefix, **{**options, "client": "single-attempt", "conditional_delete": True}
    )
    key = f"_holdfast/probe/{secrets.token_hex(13)}"
    once = ResolveOptions(policy=ReissuePolicy(()))

    def body(step: str) -> bytes:
        return f"probe {key} {step} {secrets.token_hex(8)}".encode()

    conditional_delete = False
    try:
        first = put_if_absent(probe, key, body("create"), once)
        if not isinstance(first, Applied):
            raise HoldfastError(
                "unresolved", "probe", f"probe key {key} unexpectedly exists", key=key
            )
        if isinstance(put_if_absent(probe, key, body("again"), once), Applied):
            raise HoldfastError(
                "unsupported", "probe", f"{probe.location} ignores ifGenerationMatch=0", key=key
            )
        if isinstance(put_if_match(probe, key, body("stale"), "1", once), Applied):
            raise HoldfastError(
                "unsupported", "probe", f"{probe.location} ignores ifGenerationMatch", key=key
            )
        try:
            probe.delete(key, if_match="1")
        except HoldfastError as error:
            if error.kind != "conflict":
                raise
        conditional_delete = probe.head(key) is not None
    finally:
        try:
            GcsStore(bucket, prefix, **{**options, "client": "single-attempt"}).delete(key)
        except HoldfastError:
            pass  # one tiny probe object left behind is harmless
    final = {k: v for k, v in options.items() if k != "conditional_delete"}
    return GcsStore(bucket, prefix, **final, conditional_delete=conditional_delete)


def to_holdfast_error(
    error: BaseException, operation: str, key: str | None, precondition: Precondition | None
) -> HoldfastError:
    """412 → conflict; 404 → not-found (an if-match on an absent object is a conflict; a 404
    to an upload or a listing is a missing bucket: refused); 401/403 → auth; 408, 409, 429,
    5xx, resets and timeouts → ambiguous; other 4xx → refused."""
    if isinstance(error, HoldfastError):
        return error
    from google.api_core import exceptions as gx

    where = operation if key is None else f"{operation} {key}"

    def make(kind: ErrorKind, status: int | None) -> HoldfastError:
        return HoldfastError(
            kind,
            operation,
            f"{where}: {status or 'no answer'} {type(error).__name__}",
            key=key,
            status=status,
            precondition=precondition,
            cause=error,
        )

    if isinstance(error, gx.GoogleAPICallError) and error.code is not None:
        status = int(error.code)
        if status == 412:
            return make("conflict", status)
        if status == 404:
            if isinstance(precondition, IfMatch):
                return make("conflict", status)
            if operation in ("put", "list"):
                return make("refused", status)
            return make("not-found", status)
        if status in (401, 403):
            return make("auth", status)
        if status in (408, 409, 429) or status >= 500:
            return make("ambiguous", status)
        return make("refused", status)
    try:
        from google.auth.exceptions import DefaultCredentialsError

        if isinstance(error, DefaultCredentialsError):
            return make("auth", None)
    except ImportError:  # pragma: no cover - google-auth comes with google-cloud-storage
        pass
    return make("ambiguous", None)


def _meta(key: str, blob: Any, operation: str) -> ObjectMeta:
    if blob.generation is None or blob.updated is None:
        raise HoldfastError(
            "ambiguous", operation, f"{operation} {key}: no generation or time", key=key
        )
    return ObjectMeta(
        key, str(blob.generation), round(blob.updated.timestamp() * 1000), int(blob.size or 0)
    )
