"""A lease kept renewed in the background, and the ``with holdfast.lease(...)`` form.

The keeper renews every ``ttl / 3`` and runs its own fence on the local clock with deadline
``written_at_local_ms + ttl - margin`` (margin ``min(1 s, ttl / 4)``), exactly as
``keepLease`` does (docs/protocol.md §4, C10). When no renewal has succeeded by then, or a
renewal is refused or finds the lease gone, the lease is **lost**: ``lost`` is set and
the next :meth:`HeldLease.check` raises. The fence event is handed to the resolver, so
re-issues of a renewal whose answers are lost stop at the fence instead of postponing it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Generic, Protocol, TypeVar

from .context import Context, as_context
from .errors import HoldfastError
from .layout import DEFAULT_BRANCH
from .lease import Lease, acquire, release, renew, validate_lease_handle
from .store import ObjectStore


class KeptHandle(Protocol):
    """What the keeper needs of a handle (a :class:`Lease`, or an HTTP client's handle)."""

    @property
    def lease_id(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def ttl_ms(self) -> int: ...
    @property
    def written_at_local_ms(self) -> float: ...


H = TypeVar("H", bound=KeptHandle)


class HeldLease(Generic[H]):
    """A lease renewed by a background thread. Read :attr:`lease` for the current handle;
    call :meth:`check` before (and while) reading the version: it raises once protection
    may have ended."""

    def __init__(
        self,
        ctx: Context,
        lease: H,
        *,
        renew_every_ms: float | None = None,
        safety_margin_ms: float | None = None,
        on_renew: Callable[[H], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        renewer: Callable[[H, threading.Event], H] | None = None,
    ) -> None:
        """``renewer(handle, abort)`` renews one handle (default: :func:`holdfast.renew` on
        ``ctx``'s store); it must raise ``refused`` or ``not-found`` when no renewal can
        succeed any more."""
        if renewer is None:
            validate_lease_handle(lease, "keep")

            def renewer(handle: H, abort: threading.Event) -> H:
                renewed: H = renew(ctx, handle, abort=abort)  # type: ignore[arg-type,assignment]
                return renewed

        self._renewer = renewer
        every = renew_every_ms if renew_every_ms is not None else max(1, lease.ttl_ms // 3)
        margin = safety_margin_ms if safety_margin_ms is not None else min(1000, lease.ttl_ms // 4)
        if not (
            every > 0 and margin >= 0 and margin < lease.ttl_ms and every < lease.ttl_ms - margin
        ):
            raise HoldfastError(
                "invalid-input",
                "keep",
                f"renew_every_ms ({every}) must be positive and shorter than ttl_ms - "
                f"safety_margin_ms ({lease.ttl_ms - margin})",
                code="INVALID_KEEPER_TIMING",
            )
        self._ctx = ctx
        self._every = every
        self._margin = margin
        self._on_renew = on_renew
        self._on_error = on_error
        self._current = lease
        self._deadline = lease.written_at_local_ms + lease.ttl_ms - margin
        self._guard = threading.Lock()
        self._halt = threading.Event()  # set by stop() or by the fence: stops both threads
        self.lost = threading.Event()
        """Set once protection may have ended (fence passed, renewal refused, lease gone)."""
        self.error: HoldfastError | None = None
        """Why the lease was lost (code LEASE_FENCED, or the renewal's refusal)."""
        self._threads = [
            threading.Thread(
                target=self._renew_loop, name=f"holdfast-renew-{lease.lease_id}", daemon=True
            ),
            threading.Thread(
                target=self._fence_loop, name=f"holdfast-fence-{lease.lease_id}", daemon=True
            ),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def lease(self) -> H:
        """The lease as last renewed (a :class:`Lease` for leases on a store)."""
        with self._guard:
            return self._current

    @property
    def deadline_ms(self) -> float:
        """Local-clock time at which the fence fires unless a renewal succeeds first."""
        with self._guard:
            return self._deadline

    def check(self) -> H:
        """The current handle; raises the loss (a :class:`HoldfastError`) once the lease is lost."""
        if self.lost.is_set():
            assert self.error is not None
            raise self.error
        with self._guard:
            # The fence thread may not have woken yet: judge the deadline here too.
            if self._ctx.clock() >= self._deadline:
                self._fence(self._fenced_error())
            else:
                return self._current
        assert self.error is not None
        raise self.error

    def stop(self) -> H:
        """Stops renewing and the fence; answers the last renewed handle."""
        self._halt.set()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join()
        return self.lease

    # --- utils ---

    def _fence(self, error: HoldfastError) -> None:
        if not self.lost.is_set():
            self.error = error
            self.lost.set()
        self._halt.set()

    def _fenced_error(self) -> HoldfastError:
        return HoldfastError(
            "aborted",
            "keep",
            f"lease {self._current.lease_id} was not renewed in time",
            key=self._current.key,
            code="LEASE_FENCED",
            hint="protection may have ended: stop reading this version",
        )

    def _fence_loop(self) -> None:
        while not self._halt.is_set():
            with self._guard:
                wait = self._deadline - self._ctx.clock()
                if wait <= 0:
                    self._fence(self._fenced_error())
                    return
            try:
                self._ctx.sleep(wait, self._halt)
            except HoldfastError:
                return

    def _renew_loop(self) -> None:
        while not self._halt.is_set():
            try:
                self._ctx.sleep(self._every, self._halt)
            except HoldfastError:
                return
            if self._halt.is_set():
                return
            try:
                # The halt event stops the resolver's re-issues: a renewal cannot outlive the fence.
                renewed = self._renewer(self.lease, self._halt)
            except HoldfastError as error:
                if self._on_error is not None:
                    self._on_error(error)
                # Refused (sealed/committed, expired) or lost: no renewal can succeed any more.
                if error.kind in ("refused", "not-found"):
                    with self._guard:
                        self._fence(error)
                    return
                continue  # lost answers, unresolved: try again until the fence
            with self._guard:
                if self._halt.is_set():
                    return
                self._current = renewed
                self._deadline = renewed.written_at_local_ms + renewed.ttl_ms - self._margin
            if self._on_renew is not None:
                self._on_renew(renewed)


def keep(store: ObjectStore | Context, lease: Lease, **options: object) -> HeldLease[Lease]:
    """Starts renewing ``lease`` in the background (see :class:`HeldLease`)."""
    return HeldLease(as_context(store), lease, **options)  # type: ignore[arg-type]


@contextmanager
def lease(
    store: ObjectStore | Context,
    *,
    version: int,
    ttl: float | timedelta | None = None,
    ttl_ms: int | None = None,
    branch: str = DEFAULT_BRANCH,
    manifest: str | None = None,
    manifest_etag: str | None = None,
    renew_every_ms: float | None = None,
    safety_margin_ms: float | None = None,
) -> Iterator[HeldLease[Lease]]:
    """``with holdfast.lease(store, version=3, ttl=30) as held:`` acquires, renews in the
    background while the block runs, then stops renewing and releases the lease whatever the
    block did. ``held.check()`` raises once protection may have ended. Invariant 1."""
    ctx = as_context(store)
    acquired = acquire(
        ctx,
        version=version,
        ttl=ttl,
        ttl_ms=ttl_ms,
        branch=branch,
        manifest=manifest,
        manifest_etag=manifest_etag,
    )
    held = HeldLease(
        ctx, acquired, renew_every_ms=renew_every_ms, safety_margin_ms=safety_margin_ms
    )
    try:
        yield held
    finally:
        last = held.stop()
        try:
            release(ctx, last)
        except HoldfastError:
            pass  # a lease left behind only protects the version until its TTL; sweeps remove it
