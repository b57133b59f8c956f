"""An S3 store on boto3 (AWS S3 and S3-compatible stores such as Ceph RGW).

What the lease protocol needs of S3, and why boto3 (docs/protocol.md §2, §4): create-only
``PutObject`` with ``If-None-Match: *`` (acquire), compare-and-swap ``PutObject`` with
``If-Match`` (renew), ``DeleteObject`` with ``If-Match`` where the store honours it
(release: AWS does, RGW ignores it, so :func:`open_s3_store` probes it and the lease code
then deletes the checked key unconditionally), ``HeadObject``/``GetObject`` with ETag and
Last-Modified, and ``ListObjectsV2``. boto3 sends all of them; obstore (object_store) has
no conditional delete and its put result has no Last-Modified.

ETags are handled bare (unquoted). RGW compares ``If-Match`` byte for byte with its bare
ETag while AWS documents quoted ETags, so :func:`open_s3_store` probes which form the
store accepts. Last-Modified is whole seconds in HEAD/GET (milliseconds in RGW listings):
the store declares 1000 ms precision and every expiry is truncated to whole seconds.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Literal

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

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

S3_BACKEND = "s3"
S3_PROBE_FOLDER = "_holdfast/probe"


class S3Store:
    """A holdfast store in ``bucket`` under ``prefix``."""

    backend = S3_BACKEND

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint: str | None = None,
        region: str | None = None,
        path_style: bool = False,
        client: Literal["repeating", "single-attempt"] = "repeating",
        quote_if_match: bool = True,
        conditional_delete: bool = False,
        conditional_update: bool = True,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        request_timeout_s: float = 30.0,
    ) -> None:
        """``client``: ``repeating`` keeps botocore's retries (an answer may follow an earlier
        copy that applied: the resolver then reads back after every conflict);
        ``single-attempt`` sends each request once. ``quote_if_match``: send ``If-Match``
        quoted (AWS) or bare (RGW). ``conditional_delete``: the store honours ``If-Match``
        on DeleteObject (AWS yes, RGW no). Credentials default to the AWS default chain.
        Creating a store sends nothing; :func:`open_s3_store` probes the store first."""
        prefix = prefix.strip("/")
        if prefix:
            validate_key(prefix, "open")
        if not bucket or "/" in bucket:
            raise HoldfastError("invalid-input", "open", f"invalid S3 bucket name {bucket!r}")
        self.bucket = bucket
        self._root = f"{prefix}/" if prefix else ""
        self.location = f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"
        self._quote = quote_if_match
        self.capabilities = Capabilities(
            atomic_conditional_update=conditional_update,
            atomic_conditional_delete=conditional_delete,
            # HEAD/GET Last-Modified is an HTTP date (whole seconds); listings carry ms.
            timestamp_precision_ms=1000,
            request_mode=client,
            # A single-part PUT's ETag is the content MD5: identical bytes keep it.
            etag_is_content_hash=True,
        )
        self._settings: dict[str, Any] = {
            "endpoint": endpoint,
            "region": region,
            "path_style": path_style,
            "key_id": aws_access_key_id,
            "secret": aws_secret_access_key,
            "timeout": request_timeout_s,
        }
        self._client: S3Client | None = None
        self._client_guard = threading.Lock()

    @property
    def client(self) -> S3Client:
        """The boto3 client, built on first use."""
        with self._client_guard:
            if self._client is None:
                import boto3
                from botocore.config import Config

                s = self._settings
                config = Config(
                    retries={
                        "mode": "standard",
                        "max_attempts": 1
                        if self.capabilities.request_mode == "single-attempt"
                        else 3,
                    },
                    s3={"addressing_style": "path" if s["path_style"] else "auto"},
                    connect_timeout=5,
                    read_timeout=s["timeout"],
                    # Checksums only where S3 requires them (RGW refuses streaming checksums).
                    request_checksum_calculation="when_required",
                    response_checksum_validation="when_required",
                )
                self._client = boto3.client(
                    "s3",
                    endpoint_url=s["endpoint"],
                    region_name=s["region"] or "us-east-1",
                    aws_access_key_id=s["key_id"],
                    aws_secret_access_key=s["secret"],
                    config=config,
                )
            return self._client

    # https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html
    def get(self, key: str, *, abort: threading.Event | None = None) -> GetResult | None:
        full = self._key(key, "get")
        check_abort(abort, "get", key)
        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=full)
            body = answer["Body"].read()
        except Exception as error:
            mapped = to_holdfast_error(error, "get", key, None)
            if mapped.kind == "not-found":
                return None
            raise mapped from error
        etag = _bare(answer.get("ETag"), "get", key)
        return GetResult(key, etag, _ms(answer.get("LastModified"), "get", key), len(body), body)

    # https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html
    def head(self, key: str, *, abort: threading.Event | None = None) -> ObjectMeta | None:
        full = self._key(key, "head")
        check_abort(abort, "head", key)
        try:
            answer = self.client.head_object(Bucket=self.bucket, Key=full)
        except Exception as error:
            mapped = to_holdfast_error(error, "head", key, None)
            if mapped.kind == "not-found":
                return None
            raise mapped from error
        return ObjectMeta(
            key,
            _bare(answer.get("ETag"), "head", key),
            _ms(answer.get("LastModified"), "head", key),
            int(answer.get("ContentLength", 0)),
        )

    # https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html
    def put(
        self,
        key: str,
        body: bytes,
        *,
        precondition: Precondition | None = None,
        abort: threading.Event | None = None,
    ) -> str:
        full = self._key(key, "put")
        check_abort(abort, "put", key)
        if isinstance(precondition, IfMatch) and not self.capabilities.atomic_conditional_update:
            raise HoldfastError(
                "unsupported",
                "put",
                f"{self.location} does not honour If-Match on PutObject",
                key=key,
                precondition=precondition,
            )
        extra: dict[str, str] = {}
        if isinstance(precondition, IfAbsent):
            extra["IfNoneMatch"] = "*"
        elif isinstance(precondition, IfMatch):
            extra["IfMatch"] = self._etag_header(precondition.etag)
        try:
            answer = self.client.put_object(Bucket=self.bucket, Key=full, Body=bytes(body), **extra)  # type: ignore[arg-type]
        except Exception as error:
            raise to_holdfast_error(error, "put", key, precondition) from error
        return _bare(answer.get("ETag"), "put", key)

    # https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html
    def delete(
        self, key: str, *, if_match: str | None = None, abort: threading.Event | None = None
    ) -> None:
        full = self._key(key, "delete")
        precondition = None if if_match is None else IfMatch(if_match)
        check_abort(abort, "delete", key)
        if precondition is not None and not self.capabilities.atomic_conditional_delete:
            raise HoldfastError(
                "unsupported",
                "delete",
                f"{self.location} does not honour If-Match on DeleteObject",
                key=key,
                precondition=precondition,
                hint="delete the checked key unconditionally (Ceph RGW ignores If-Match on DELETE)",
            )
        try:
            if precondition is None:
                self.client.delete_object(Bucket=self.bucket, Key=full)
            else:
                self.client.delete_object(
                    Bucket=self.bucket, Key=full, IfMatch=self._etag_header(precondition.etag)
                )
        except Exception as error:
            mapped = to_holdfast_error(error, "delete", key, precondition)
            if mapped.kind == "not-found" and precondition is None:
                return
            raise mapped from error

    # https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html
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
        params: dict[str, Any] = {"Bucket": self.bucket, "Prefix": self._root + prefix}
        if start_after:
            params["StartAfter"] = self._root + start_after
        if page_token is not None:
            params["ContinuationToken"] = page_token
        if page_size is not None:
            params["MaxKeys"] = max(1, min(page_size, 1000))
        try:
            answer = self.client.list_objects_v2(**params)
        except Exception as error:
            raise to_holdfast_error(error, "list", None, None) from error
        objects = [
            ObjectMeta(
                item["Key"][len(self._root) :],
                _bare(item.get("ETag"), "list", item["Key"]),
                _ms(item.get("LastModified"), "list", item["Key"]),
                int(item.get("Size", 0)),
            )
            for item in answer.get("Contents", [])
        ]
        token = answer.get("NextContinuationToken") if answer.get("IsTruncated") else None
        return ListPage(objects, token)

    # --- utils ---

    def _key(self, key: str, operation: str) -> str:
        validate_key(key, operation)
        full = self._root + key
        if len(full.encode("utf-8")) > 1024:
            raise HoldfastError(
                "invalid-input",
                operation,
                f"key {key!r} under the prefix exceeds 1024 bytes",
                key=key,
            )
        return full

    def _etag_header(self, etag: str) -> str:
        bare = _strip(etag)
        return f'"{bare}"' if self._quote else bare


def open_s3_store(bucket: str, prefix: str = "", **options: Any) -> S3Store:
    """Probes the store, then answers an :class:`S3Store` whose capabilities are what the
    store really does: a store that ignores ``If-None-Match: *`` is refused as
    ``unsupported`` before any protocol runs; ``If-Match`` quoting and conditional delete are
    detected (one short-lived object under ``_holdfast/probe/``, each request sent once)."""
    import secrets

    probe = {
        **options,
        "client": "single-attempt",
        "conditional_delete": True,
        "conditional_update": True,
    }
    quoted = S3Store(bucket, prefix, **{**probe, "quote_if_match": True})
    bare = S3Store(bucket, prefix, **{**probe, "quote_if_match": False})
    key = f"{S3_PROBE_FOLDER}/{secrets.token_hex(13)}"
    once = ResolveOptions(policy=ReissuePolicy(()))

    def body(step: str) -> bytes:
        return f"probe {key} {step} {secrets.token_hex(8)}".encode()

    def unsupported(what: str) -> HoldfastError:
        return HoldfastError("unsupported", "probe", f"{quoted.location} {what}", key=key)

    try:
        if not isinstance(put_if_absent(quoted, key, body("create"), once), Applied):
            raise HoldfastError(
                "unresolved", "probe", f"probe key {key} unexpectedly exists", key=key
            )
        if isinstance(put_if_absent(quoted, key, body("create-again"), once), Applied):
            raise unsupported(
                "ignores If-None-Match: * (a create-only put overwrote an existing object)"
            )

        def cas(store: S3Store, step: str) -> bool:
            head = store.head(key)
            if head is None:
                raise HoldfastError("unresolved", "probe", f"probe key {key} vanished", key=key)
            return isinstance(put_if_match(store, key, body(step), head.etag, once), Applied)

        quote = True
        cas_works = cas(quoted, "cas-quoted")
        if not cas_works and cas(bare, "cas-bare"):
            quote, cas_works = False, True
        chosen = quoted if quote else bare
        stale = put_if_match(
            chosen, key, body("cas-stale"), "00000000000000000000000000000000", once
        )
        conditional_update = cas_works and not isinstance(stale, Applied)
        before = chosen.head(key)
        conditional_delete = False
        if before is not None:
            try:
                chosen.delete(key, if_match="00000000000000000000000000000000")
            except HoldfastError as error:
                if error.kind != "conflict":
                    raise
            after = chosen.head(key)
            if after is not None and after.etag == before.etag:
                chosen.delete(key, if_match=before.etag)
                conditional_delete = chosen.head(key) is None
    finally:
        try:
            quoted.delete(key)
        except HoldfastError:
            pass  # one tiny probe object left behind is harmless
    final = {k: v for k, v in options.items() if k not in ("quote_if_match", "conditional_delete")}
    final["conditional_update"] = (
        options.get("conditional_update", True) is not False and conditional_update
    )
    return S3Store(
        bucket, prefix, **final, quote_if_match=quote, conditional_delete=conditional_delete
    )


def to_holdfast_error(
    error: BaseException, operation: str, key: str | None, precondition: Precondition | None
) -> HoldfastError:
    """The one translation of boto3/botocore failures, by error code and HTTP status, never
    by message text (RGW's error bodies can lack ``<Message>``)."""
    if isinstance(error, HoldfastError):
        return error
    from botocore import exceptions as bx

    where = operation if key is None else f"{operation} {key}"

    def make(
        kind: ErrorKind, why: str, code: str | None = None, status: int | None = None
    ) -> HoldfastError:
        detail = f"{code or type(error).__name__}" + (f" (HTTP {status})" if status else "")
        return HoldfastError(
            kind,
            operation,
            f"{where}: {why}: {detail}",
            key=key,
            code=code,
            status=status,
            precondition=precondition,
            cause=error,
        )

    if isinstance(error, bx.ClientError):
        info: Any = error.response
        code = str(info.get("Error", {}).get("Code", "")) or None
        status = info.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if status == 412 or code == "PreconditionFailed":
            return make("conflict", "precondition failed", code, status)
        if code == "ConditionalRequestConflict" or (status == 409 and operation == "put"):
            return make("in-flight", "a conditional write to the key is in flight", code, status)
        if code == "NoSuchBucket":
            return make("refused", "the bucket does not exist", code, status)
        if status == 404 or code in ("NoSuchKey", "NotFound", "404"):
            # AWS answers 404 to If-Match on an absent key: the precondition failed.
            if precondition is not None:
                return make("conflict", "the object does not exist", code, status)
            return make("not-found", "no such object", code, status)
        if status in (401, 403) or code in (
            "AccessDenied",
            "InvalidAccessKeyId",
            "SignatureDoesNotMatch",
            "ExpiredToken",
        ):
            return make("auth", "not authorized", code, status)
        if status == 501 or code == "NotImplemented":
            return make("unsupported", "the store does not implement this request", code, status)
        if code == "RequestTimeout":
            return make("ambiguous", "the request timed out", code, status)
        if status is not None and 400 <= status < 500 and status not in (408, 429):
            return make("refused", "the store refused the request", code, status)
        return make("ambiguous", "no definite answer", code, status)
    if isinstance(error, bx.NoCredentialsError | bx.PartialCredentialsError):
        return make("auth", "no credentials")
    if isinstance(error, bx.ParamValidationError):
        return make("invalid-input", "invalid request")
    # Resets, timeouts, DNS and socket errors: unknown outcome.
    return make("ambiguous", "no definite answer")


def _strip(etag: str) -> str:
    if etag.startswith("W/"):
        etag = etag[2:]
    if len(etag) >= 2 and etag.startswith('"') and etag.endswith('"'):
        etag = etag[1:-1]
    return etag


def _bare(etag: object, operation: str, key: str) -> str:
    if not isinstance(etag, str) or etag == "":
        raise HoldfastError(
            "ambiguous", operation, f"{operation} {key}: the answer carried no ETag", key=key
        )
    return _strip(etag)


def _ms(value: object, operation: str, key: str) -> int:
    from datetime import datetime

    if not isinstance(value, datetime):
        raise HoldfastError(
            "ambiguous",
            operation,
            f"{operation} {key}: the answer carried no Last-Modified",
            key=key,
        )
    return round(value.timestamp() * 1000)
