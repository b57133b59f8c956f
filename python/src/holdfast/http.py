"""Leases through ``holdfast serve`` (apps/server): the same calls as on a store, over its
JSON API, for processes that should not hold store credentials. Standard library only.

``HttpLeases(url, dataset, token)`` has ``acquire``, ``renew``, ``release``, ``list`` and
``lease(...)`` (the background keeper and fence of :func:`holdfast.lease`). A handle is the
server's opaque ``handle`` document: pass it back unchanged. Lost answers: a renewal is
safe to send again (the server adopts its own later write), a release is idempotent, and an
acquire whose answer was lost raises ``unresolved`` (a lease may exist; it only protects
its version until its TTL passes).
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, cast
from urllib.parse import quote, urlencode

from .context import Clock, Context, system_clock
from .errors import ERROR_KINDS, ErrorKind, HoldfastError
from .keeper import HeldLease
from .lease import ttl_to_ms
from .store import Capabilities, ObjectStore


@dataclass(frozen=True)
class HttpLease:
    """A lease held through the server: its ``handle`` document and what the keeper needs."""

    handle: dict[str, Any] = field(repr=False)
    lease: dict[str, Any]
    """The server's view of the lease (storage-time expiry and the like)."""
    written_at_local_ms: float
    """This process's clock just before the request that wrote the lease was sent."""

    @property
    def lease_id(self) -> str:
        return str(self.handle["leaseId"])

    @property
    def key(self) -> str:
        return str(self.handle["key"])

    @property
    def ttl_ms(self) -> int:
        return int(self.handle["ttlMs"])

    @property
    def renewal(self) -> int:
        return int(self.handle["renewal"])

    @property
    def version(self) -> int:
        return int(self.handle["version"])

    @property
    def branch(self) -> str:
        return str(self.handle["branch"])


class HttpLeases:
    """Leases on one dataset of a ``holdfast serve`` (``url`` like ``http://127.0.0.1:8080``)."""

    def __init__(
        self,
        url: str,
        dataset: str,
        token: str,
        *,
        timeout_s: float = 30.0,
        clock: Clock = system_clock,
    ) -> None:
        self._base = f"{url.rstrip('/')}/v1/datasets/{quote(dataset, safe='')}"
        self._token = token
        self._timeout = timeout_s
        self._clock = clock

    def acquire(
        self,
        *,
        version: int,
        ttl: float | timedelta | None = None,
        ttl_ms: int | None = None,
        branch: str | None = None,
    ) -> HttpLease:
        """``POST .../leases``: the server acquires (write, then admission, then manifest)."""
        body: dict[str, Any] = {"version": version, "ttlMs": ttl_to_ms(ttl, ttl_ms)}
        if branch is not None:
            body["branch"] = branch
        written_at = self._clock()
        try:
            answer = self._call("POST", "/leases", body, "acquire")
        except HoldfastError as error:
            if error.kind == "ambiguous":
                raise HoldfastError(
                    "unresolved",
                    "acquire",
                    f"the answer to the acquire was lost: {error.message}",
                    hint="a lease may exist; it protects its version only until its TTL passes",
                    cause=error,
                ) from error
            raise
        return HttpLease(answer["handle"], answer["lease"], written_at)

    def renew(self, lease: HttpLease, *, abort: threading.Event | None = None) -> HttpLease:
        """``POST .../leases/{id}/renew``; safe to send again after a lost answer."""
        if self._clock() >= lease.written_at_local_ms + lease.ttl_ms:
            raise HoldfastError(
                "refused",
                "renew",
                f"lease {lease.lease_id} expired before it was renewed",
                code="LEASE_EXPIRED",
            )
        written_at = self._clock()
        answer = self._call(
            "POST", f"/leases/{quote(lease.lease_id)}/renew", {"handle": lease.handle}, "renew"
        )
        return HttpLease(answer["handle"], answer["lease"], written_at)

    def release(self, lease: HttpLease) -> None:
        """``POST .../leases/{id}/release``; idempotent."""
        self._call(
            "POST", f"/leases/{quote(lease.lease_id)}/release", {"handle": lease.handle}, "release"
        )

    def list(
        self, *, branch: str | None = None, version: int | None = None
    ) -> list[dict[str, Any]]:
        """``GET .../leases``: the leases with their expiry in storage time."""
        query = {k: str(v) for k, v in (("branch", branch), ("version", version)) if v is not None}
        path = "/leases" + (f"?{urlencode(query)}" if query else "")
        leases: list[dict[str, Any]] = self._call("GET", path, None, "list")["leases"]
        return leases

    @contextmanager
    def lease(
        self,
        *,
        version: int,
        ttl: float | timedelta | None = None,
        ttl_ms: int | None = None,
        branch: str | None = None,
    ) -> Iterator[HeldLease[HttpLease]]:
        """Acquire, renew in the background, fence on the local clock, release on exit."""
        acquired = self.acquire(version=version, ttl=ttl, ttl_ms=ttl_ms, branch=branch)
        held: HeldLease[HttpLease] = HeldLease(
            Context(store=cast(ObjectStore, _NoStore()), clock=self._clock),
            acquired,
            renewer=lambda handle, abort: self.renew(handle, abort=abort),
        )
        try:
            yield held
        finally:
            last = held.stop()
            try:
                self.release(last)
            except HoldfastError:
                pass  # a lease left behind only protects the version until its TTL

    # --- utils ---

    def _call(self, method: str, path: str, body: dict[str, Any] | None, operation: str) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self._base + path,
            data=data,
            method=method,
            headers={
                "authorization": f"Bearer {self._token}",
                "accept": "application/json",
                **({"content-type": "application/json"} if data is not None else {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as error:
            raise _problem(error, operation) from error
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as error:
            raise HoldfastError(
                "ambiguous", operation, f"{method} {path}: no answer ({error})", cause=error
            ) from error


def _problem(error: urllib.error.HTTPError, operation: str) -> HoldfastError:
    """An RFC 9457 problem document as a :class:`HoldfastError` of the kind it names."""
    try:
        doc = json.loads(error.read())
    except ValueError:
        doc = {}
    raw = doc.get("kind")
    kind: ErrorKind
    if raw in ERROR_KINDS:
        kind = raw
    elif error.code in (401, 403):
        kind = "auth"
    elif error.code >= 500:
        kind = "ambiguous"
    else:
        kind = "refused"
    return HoldfastError(
        kind,
        operation,
        str(doc.get("detail") or f"HTTP {error.code}"),
        status=error.code,
        code=doc.get("code"),
        hint=doc.get("hint"),
    )


class _NoStore:
    """The keeper of an HTTP lease renews through the server, never through a store."""

    backend = "http"
    location = "http"
    capabilities = Capabilities(False, False, 1000, "single-attempt", False)

    def __getattr__(self, name: str) -> Any:
        raise HoldfastError("unsupported", name, "an HTTP lease has no store")
