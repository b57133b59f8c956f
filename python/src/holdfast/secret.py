"""Lease secrets (docs/protocol.md §4.2).

Acquire draws 32 random bytes; the handle carries them as base64url without padding (43
characters). The lease key carries ``tag`` = lowercase hex of the first 16 bytes of
SHA-256(secret), and every body a ``proof`` = lowercase hex HMAC-SHA256(key = the secret's
bytes, message = ASCII ``{leaseId}:{renewal}:{writerId}``). Only a holder of the secret can
name the lease's key from a handle, or write a body whose proof verifies.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

from .context import RandomBytes
from .errors import HoldfastError

LEASE_SECRET_BYTES = 32
_SECRET_TEXT = re.compile(r"[A-Za-z0-9_-]{43}\Z")


def draw_lease_secret(random: RandomBytes) -> str:
    """A fresh secret from the injected random source."""
    raw = random(LEASE_SECRET_BYTES)
    if not isinstance(raw, bytes | bytearray) or len(raw) != LEASE_SECRET_BYTES:
        raise TypeError(f"the random source returned no {LEASE_SECRET_BYTES} bytes")
    return _b64url(bytes(raw))


def decode_lease_secret(secret: object) -> bytes | None:
    """The raw bytes of a secret in its one canonical spelling, or ``None`` (wrong length,
    alphabet, padding, or stray low bits in the last character: a second spelling)."""
    if not isinstance(secret, str) or _SECRET_TEXT.match(secret) is None:
        return None
    raw = base64.urlsafe_b64decode(secret + "=")
    if len(raw) != LEASE_SECRET_BYTES or _b64url(raw) != secret:
        return None
    return raw


def lease_tag(secret: str) -> str:
    """The tag a lease key carries: hex of the first 16 bytes of SHA-256 of the secret."""
    raw = _require(secret)
    return hashlib.sha256(raw).digest()[:16].hex()


def lease_proof(secret: str, lease_id: str, renewal: int, writer_id: str) -> str:
    """A body's proof: hex HMAC-SHA256 under the secret of ``{leaseId}:{renewal}:{writerId}``."""
    message = f"{lease_id}:{renewal}:{writer_id}".encode("ascii")
    return hmac.new(_require(secret), message, hashlib.sha256).hexdigest()


def verify_lease_proof(
    secret: str, lease_id: str, renewal: int, writer_id: str, proof: object
) -> bool:
    """Whether ``proof`` is the proof of these fields under ``secret`` (constant time)."""
    if not isinstance(proof, str):
        return False
    try:
        expected = lease_proof(secret, lease_id, renewal, writer_id)
    except (HoldfastError, UnicodeEncodeError):
        return False
    return hmac.compare_digest(expected.encode("ascii"), proof.encode("utf-8"))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _require(secret: str) -> bytes:
    raw = decode_lease_secret(secret)
    if raw is None:
        raise HoldfastError(
            "invalid-input",
            "validate",
            "not a lease secret: 43 characters of canonical base64url (32 bytes)",
            code="INVALID_LEASE_SECRET",
        )
    return raw
