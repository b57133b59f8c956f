"""The one error taxonomy, the same closed set of kinds as the TypeScript packages.

Store adapters translate every client failure into a :class:`HoldfastError`; nothing above
an adapter sees a boto3, Azure or ``OSError`` exception. Tests assert ``kind`` and ``code``,
never message text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from .store import Precondition

ErrorKind = Literal[
    # The precondition failed: 412, a create's "already exists", an if-match on an absent key.
    "conflict",
    # S3's 409 ConditionalRequestConflict: a conditional write to the key (maybe our own
    # earlier copy) is in flight.
    "in-flight",
    # Authentication or authorization failed (401/403). A refusal only on a single-attempt client.
    "auth",
    # Refused before applying: missing bucket/container, bad key. Nothing was written.
    "refused",
    # The outcome of the request is not known: timeout, reset, 5xx, throttling.
    "ambiguous",
    # A conditional request whose outcome stayed unknown after re-issue and read-back.
    "unresolved",
    # The object (or version, lease) does not exist.
    "not-found",
    # Malformed input rejected before anything was written.
    "invalid-input",
    # The store or adapter cannot do what was asked.
    "unsupported",
    # The caller's abort event fired (or a lease keeper's fence) before an answer arrived.
    "aborted",
]

ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)


class HoldfastError(Exception):
    """Every error holdfast raises on purpose, with structured fields (docs/protocol.md)."""

    kind: ErrorKind
    operation: str
    key: str | None
    code: str | None
    status: int | None
    hint: str | None
    precondition: Precondition | None

    def __init__(
        self,
        kind: ErrorKind,
        operation: str,
        message: str,
        *,
        key: str | None = None,
        code: str | None = None,
        status: int | None = None,
        hint: str | None = None,
        precondition: Precondition | None = None,
        cause: BaseException | None = None,
    ) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown error kind {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.operation = operation
        self.key = key
        self.code = code
        self.status = status
        self.hint = hint
        self.precondition = precondition
        self.message = message
        if cause is not None:
            self.__cause__ = cause

    def to_dict(self) -> dict[str, object]:
        """The same plain shape the TypeScript error's ``toJSON`` gives (no cause, no stack)."""
        return {
            "name": "HoldfastError",
            "kind": self.kind,
            "operation": self.operation,
            "key": self.key,
            "status": self.status,
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
        }

    def __repr__(self) -> str:
        kind, operation, code, key = self.kind, self.operation, self.code, self.key
        return f"HoldfastError({kind!r}, {operation!r}, code={code!r}, key={key!r})"


def is_holdfast_error(value: object, *kinds: ErrorKind) -> bool:
    """True for a :class:`HoldfastError`, optionally of one of ``kinds``."""
    return isinstance(value, HoldfastError) and (not kinds or value.kind in kinds)
