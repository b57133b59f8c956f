"""Conditional requests whose answer can be lost (docs/guarantees.md, conditional requests; C1-C10).

The same classification, re-issue and read-back as ``resolveConditionalPut`` and
``deleteIfMatch`` of ``@holdfast/conditional-store``: an ambiguous answer is re-issued
unchanged per the policy; the key is read back after a conflict an earlier copy may
explain and after the last lost or refused re-issue; the read-back decides applied (our
bytes), conflict (the precondition visibly failed) or unresolved (raised, never returned
as success or failure: invariant 4).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

from .context import DEFAULT_REISSUE_POLICY, ReissuePolicy, Sleep, real_sleep
from .errors import HoldfastError
from .store import (
    GetResult,
    IfAbsent,
    IfMatch,
    ObjectStore,
    Precondition,
    RequestMode,
    validate_key,
)

AnswerClass = Literal["conflict", "in-flight", "refused", "ambiguous"]


def classify_failure(error: BaseException, mode: RequestMode) -> AnswerClass:
    """What one failed answer says. Auth errors are a refusal only on a single-attempt
    client (a repeating SDK may have applied an earlier copy, then been refused); on a store
    whose put completes before it answers, every error is a refusal."""
    if not isinstance(error, HoldfastError):
        return "refused" if mode == "completes-before-answer" else "ambiguous"
    kind = error.kind
    if kind == "conflict":
        return "conflict"
    if kind == "in-flight":
        return "in-flight"
    if kind in ("refused", "not-found", "invalid-input", "unsupported"):
        return "refused"
    if kind == "auth":
        return "ambiguous" if mode == "repeating" else "refused"
    return "refused" if mode == "completes-before-answer" else "ambiguous"


@dataclass(frozen=True)
class Applied:
    etag: str
    status: Literal["applied"] = "applied"


@dataclass(frozen=True)
class Conflict:
    current: GetResult | None = None
    status: Literal["conflict"] = "conflict"


PutOutcome = Applied | Conflict


@dataclass(frozen=True)
class ResolveOptions:
    policy: ReissuePolicy = DEFAULT_REISSUE_POLICY
    sleep: Sleep = real_sleep
    abort: threading.Event | None = None
    """A fence (e.g. a lease keeper's): stops further re-issues; the outcome is then unresolved."""


def resolve_conditional_put(
    store: ObjectStore,
    key: str,
    body: bytes,
    precondition: Precondition,
    options: ResolveOptions | None = None,
) -> PutOutcome:
    """Sends one conditional put and resolves lost answers. The only call site of a
    conditional ``store.put`` in this package (C9)."""
    options = options or ResolveOptions()
    validate_key(key, "put")
    _validate_precondition(key, precondition)
    pauses = options.policy.pauses_ms
    mode = store.capabilities.request_mode
    # Once any copy's answer was lost, the key may still change under an earlier copy in
    # flight: a read-back that finds the precondition holding is then unknown. A repeating
    # client may have lost answers before its first.
    answer_lost = mode == "repeating"
    last_error: BaseException | None = None
    abort = options.abort

    for attempt in range(len(pauses) + 1):
        if attempt > 0:
            # A fence must stop re-issue at once, before the pause and after it (C10).
            if abort is not None and abort.is_set():
                raise _unresolved(key, precondition, "aborted before re-issue", last_error)
            try:
                options.sleep(pauses[attempt - 1], abort)
            except HoldfastError as pause_error:
                raise _unresolved(
                    key, precondition, "aborted before re-issue", pause_error
                ) from pause_error
        if abort is not None and abort.is_set():
            if attempt == 0:
                raise HoldfastError(
                    "aborted",
                    "put",
                    f"aborted before sending put of {key}",
                    key=key,
                    precondition=precondition,
                )
            raise _unresolved(key, precondition, "aborted before re-issue", last_error)
        try:
            etag = store.put(key, body, precondition=precondition, abort=abort)
            return Applied(etag)
        except HoldfastError as error:
            last_error = error
            answer = classify_failure(error, mode)
            if answer == "conflict":
                # Every conflict is read back before it is believed, whatever the client's
                # mode: an earlier copy of this very request may have applied (a lost answer,
                # a repeating SDK, or an intermediary that repeated it on the way). Claims
                # name their writer, so equal bytes are this writer's (docs/guarantees.md,
                # "Conditional requests").
                return _read_back(store, key, body, precondition, error, answer_lost)
            if answer == "in-flight":
                # S3 409: the write in flight may be our own earlier copy. A create reads
                # back (absent stays unresolved); an if-match is re-issued.
                answer_lost = True
                if isinstance(precondition, IfAbsent):
                    return _read_back(store, key, body, precondition, error, True)
            elif answer == "refused":
                # A first copy's refusal is final: nothing was sent that could have applied.
                if attempt == 0:
                    raise
            else:
                answer_lost = True
    return _read_back(store, key, body, precondition, last_error, True)


def put_if_absent(
    store: ObjectStore, key: str, body: bytes, options: ResolveOptions | None = None
) -> PutOutcome:
    """Create-only put, resolved."""
    return resolve_conditional_put(store, key, body, IfAbsent(), options)


def put_if_match(
    store: ObjectStore, key: str, body: bytes, etag: str, options: ResolveOptions | None = None
) -> PutOutcome:
    """Compare-and-swap put, resolved."""
    return resolve_conditional_put(store, key, body, IfMatch(etag), options)


def _read_back(
    store: ObjectStore,
    key: str,
    body: bytes,
    precondition: Precondition,
    cause: BaseException | None,
    answer_lost: bool,
) -> PutOutcome:
    try:
        current = store.get(key)
    except HoldfastError as read_error:
        raise _unresolved(key, precondition, "read-back failed", read_error) from read_error
    if current is not None and current.body == body:
        return Applied(current.etag)
    if isinstance(precondition, IfAbsent):
        if current is not None:
            return Conflict(current)
    elif current is None or current.etag != precondition.etag:
        return Conflict(current)
    # Every answer was a definite one and none of our copies is in the store: the store's
    # conflict stands.
    if not answer_lost:
        return Conflict(current)
    raise _unresolved(key, precondition, "the key still satisfies the precondition", cause)


def _unresolved(
    key: str, precondition: Precondition, why: str, cause: BaseException | None
) -> HoldfastError:
    return HoldfastError(
        "unresolved",
        "put",
        f"outcome of conditional put on {key} is unknown ({why})",
        key=key,
        precondition=precondition,
        cause=cause,
        hint="the write may or may not have landed; re-run the operation or its recovery "
        "before acting on this key",
    )


def delete_if_match(
    store: ObjectStore, key: str, etag: str, options: ResolveOptions | None = None
) -> Literal["applied", "conflict"]:
    """Deletes ``key`` only at ``etag``, resolving lost answers by re-issue and a read-back:
    absent → applied, another ETag → conflict, still at ``etag`` → unresolved (or the store's
    conflict when no answer was lost). Refused on stores without atomic conditional delete
    (RGW ignores If-Match on DELETE)."""
    status, _ = delete_if_match_read(store, key, etag, options)
    return status


def delete_if_match_read(
    store: ObjectStore, key: str, etag: str, options: ResolveOptions | None = None
) -> tuple[Literal["applied", "conflict"], GetResult | None]:
    """``delete_if_match``, also handing over the object its read-back found after a conflict
    (``None`` when it applied), so a caller does not read the key twice."""
    options = options or ResolveOptions()
    validate_key(key, "delete")
    _validate_precondition(key, IfMatch(etag), "delete")
    if not store.capabilities.atomic_conditional_delete:
        raise HoldfastError(
            "unsupported",
            "delete",
            f"{store.backend} does not honour conditional delete",
            key=key,
            precondition=IfMatch(etag),
            hint="move the object to a terminal state with an if-match rewrite, then delete "
            "it unconditionally",
        )
    pauses = options.policy.pauses_ms
    mode = store.capabilities.request_mode
    answer_lost = mode == "repeating"
    conflicted = False
    last_error: BaseException | None = None
    abort = options.abort
    for attempt in range(len(pauses) + 1):
        if attempt > 0:
            if abort is not None and abort.is_set():
                raise _unresolved_delete(key, etag, last_error)
            try:
                options.sleep(pauses[attempt - 1], abort)
            except HoldfastError as pause_error:
                raise _unresolved_delete(key, etag, pause_error) from pause_error
        if abort is not None and abort.is_set():
            if attempt == 0:
                raise HoldfastError(
                    "aborted",
                    "delete",
                    f"aborted before sending delete of {key}",
                    key=key,
                    precondition=IfMatch(etag),
                )
            raise _unresolved_delete(key, etag, last_error)
        try:
            store.delete(key, if_match=etag, abort=abort)
            return "applied", None
        except HoldfastError as error:
            last_error = error
            # A delete's 404 says the object is absent: its precondition failed, like a 412.
            answer = "conflict" if error.kind == "not-found" else classify_failure(error, mode)
            # A conflict is read back before it is believed, as for puts: an earlier copy of
            # this delete (ours, a repeating SDK's, or one repeated on the way) may have
            # removed the object.
            if answer == "conflict":
                conflicted = True
                break
            # A first copy's refusal is final; a refused re-issue is re-issued.
            if answer == "refused" and attempt == 0:
                raise
            if answer != "refused":
                answer_lost = True
    # A get, not a head: a caller that meets a conflict reads the object next.
    try:
        current = store.get(key)
    except HoldfastError as read_error:
        raise _unresolved_delete(key, etag, read_error) from read_error
    if current is None:
        return "applied", None
    if current.etag != etag:
        return "conflict", current
    # A definite conflict, no answer lost, and the object still there: the store's answer stands.
    if conflicted and not answer_lost:
        return "conflict", current
    raise _unresolved_delete(key, etag, last_error)


def _unresolved_delete(key: str, etag: str, cause: BaseException | None) -> HoldfastError:
    return HoldfastError(
        "unresolved",
        "delete",
        f"outcome of conditional delete on {key} is unknown",
        key=key,
        precondition=IfMatch(etag),
        cause=cause,
    )


def _validate_precondition(key: str, precondition: object, operation: str = "put") -> None:
    ok = isinstance(precondition, IfAbsent) or (
        isinstance(precondition, IfMatch)
        and isinstance(precondition.etag, str)
        and precondition.etag != ""
    )
    if not ok:
        raise HoldfastError(
            "invalid-input",
            operation,
            f"invalid precondition for {key}",
            key=key,
            hint="use IfAbsent() or IfMatch(etag) with a non-empty ETag",
        )
