"""The store contract the lease protocol runs on (the Python side of ``ObjectStore``).

An adapter offers get, head, put with an optional precondition (create-only or
compare-and-swap), delete (optionally if-match) and paginated, key-ordered listing, and
declares what the store guarantees in :class:`Capabilities`. Every method raises only
:class:`~holdfast.errors.HoldfastError`; ``get`` and ``head`` return ``None`` for an absent
key and an unconditional ``delete`` of an absent key succeeds.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

from .errors import HoldfastError

RequestMode = Literal["single-attempt", "repeating", "completes-before-answer"]
"""How an adapter's client sends a request (docs/guarantees.md, conditional requests):
``single-attempt`` sends each request once; ``repeating`` lets the SDK retry by itself, so an
answer may follow an earlier copy that applied; ``completes-before-answer`` is a local store
whose put finishes before it answers, so an error is a refusal."""


@dataclass(frozen=True)
class IfAbsent:
    """Create-only (``If-None-Match: *``)."""


@dataclass(frozen=True)
class IfMatch:
    """Compare-and-swap against an ETag (bare, unquoted)."""

    etag: str


Precondition = IfAbsent | IfMatch


@dataclass(frozen=True)
class Capabilities:
    """What a store guarantees; protocol code reads these and never guesses."""

    atomic_conditional_update: bool
    """Compare-and-swap (if-match put) is atomic."""
    atomic_conditional_delete: bool
    """``delete(if_match=...)`` is honoured atomically (Ceph RGW ignores it: False there)."""
    timestamp_precision_ms: int
    """Coarsest precision of any Last-Modified the store reports (1000 for HTTP dates)."""
    request_mode: RequestMode
    etag_is_content_hash: bool
    """Rewriting identical bytes keeps the ETag (S3/RGW content MD5)."""


@dataclass(frozen=True)
class ObjectMeta:
    """What a listing or head reports; ETags are opaque and compared only for equality."""

    key: str
    etag: str
    last_modified_ms: int
    """The store's own stamp of the last write, in ms since the epoch (storage time)."""
    size: int


@dataclass(frozen=True)
class GetResult:
    """An object's bytes with its metadata."""

    key: str
    etag: str
    last_modified_ms: int
    size: int
    body: bytes

    @property
    def meta(self) -> ObjectMeta:
        return ObjectMeta(self.key, self.etag, self.last_modified_ms, self.size)


@dataclass(frozen=True)
class ListPage:
    objects: list[ObjectMeta]
    next_page_token: str | None = None


class ObjectStore(Protocol):
    """The backend contract. Keys are relative to the store's root or prefix."""

    @property
    def backend(self) -> str: ...

    @property
    def location(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def get(self, key: str, *, abort: threading.Event | None = None) -> GetResult | None: ...

    def head(self, key: str, *, abort: threading.Event | None = None) -> ObjectMeta | None: ...

    def put(
        self,
        key: str,
        body: bytes,
        *,
        precondition: Precondition | None = None,
        abort: threading.Event | None = None,
    ) -> str:
        """Writes ``body``; answers the new object's ETag. Conditional puts go through the
        resolver (:mod:`holdfast.resolve`), never straight to a store."""
        ...

    def delete(
        self, key: str, *, if_match: str | None = None, abort: threading.Event | None = None
    ) -> None: ...

    def list(
        self,
        prefix: str,
        *,
        start_after: str | None = None,
        page_token: str | None = None,
        page_size: int | None = None,
        abort: threading.Event | None = None,
    ) -> ListPage: ...


def list_all(
    store: ObjectStore, prefix: str, *, abort: threading.Event | None = None
) -> Iterator[ObjectMeta]:
    """Every object under ``prefix`` in key order, one page at a time."""
    token: str | None = None
    while True:
        page = store.list(prefix, page_token=token, abort=abort)
        yield from page.objects
        if page.next_page_token is None:
            return
        token = page.next_page_token


MAX_KEY_BYTES = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def validate_key(key: object, operation: str = "validate") -> str:
    """Rejects keys some store would mangle or refuse (the same rules as ``validateKey``):
    empty, over 1024 UTF-8 bytes, a leading or trailing ``/``, empty, ``.`` or ``..``
    segments, backslashes, control characters, lone surrogates."""

    def bad(why: str) -> HoldfastError:
        return HoldfastError(
            "invalid-input",
            operation,
            f"invalid object key {key!r}: {why}",
            key=key if isinstance(key, str) else None,
        )

    if not isinstance(key, str) or key == "":
        raise bad("empty")
    try:
        encoded = key.encode("utf-8")
    except UnicodeEncodeError:
        raise bad("contains a lone surrogate") from None
    if len(encoded) > MAX_KEY_BYTES:
        raise bad(f"longer than {MAX_KEY_BYTES} bytes")
    if key.startswith("/") or key.endswith("/"):
        raise bad("starts or ends with '/'")
    if "\\" in key:
        raise bad("contains a backslash")
    if _CONTROL.search(key):
        raise bad("contains a control character")
    for segment in key.split("/"):
        if segment == "":
            raise bad("contains an empty path segment")
        if segment in (".", ".."):
            raise bad("contains a '.' or '..' segment")
    return key


def validate_prefix(prefix: str, operation: str = "list") -> str:
    """An empty prefix, or a valid key prefix (which may end with ``/``)."""
    if prefix == "":
        return prefix
    validate_key(prefix[:-1] if prefix.endswith("/") else prefix, operation)
    return prefix


def check_abort(abort: threading.Event | None, operation: str, key: str | None = None) -> None:
    """Raises ``aborted`` (nothing sent) when the caller's event is set."""
    if abort is not None and abort.is_set():
        raise HoldfastError("aborted", operation, f"{operation} aborted", key=key)
