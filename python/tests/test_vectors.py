"""The lease secret, key and body vectors (conformance/leases/vectors.json), which the
TypeScript suite runs too: both write byte-identical keys and bodies (docs/protocol.md §4)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

import holdfast
from holdfast.errors import HoldfastError
from holdfast.secret import decode_lease_secret

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "conformance" / "leases" / "vectors.json").read_text()
)


def text(hex_bytes: str) -> str:
    return base64.urlsafe_b64encode(bytes.fromhex(hex_bytes)).rstrip(b"=").decode()


def test_the_file_has_cases_of_every_kind() -> None:
    for kind in ("secrets", "keys", "bodies", "invalidSecrets", "parseKeys"):
        assert VECTORS[kind], kind


@pytest.mark.parametrize("v", VECTORS["secrets"], ids=lambda v: v["secretHex"][:8])
def test_secret_text_and_tag(v: dict[str, Any]) -> None:
    assert text(v["secretHex"]) == v["secret"]
    assert len(v["secret"]) == 43
    assert decode_lease_secret(v["secret"]) == bytes.fromhex(v["secretHex"])
    assert holdfast.lease_tag(v["secret"]) == v["tag"]


@pytest.mark.parametrize("v", VECTORS["keys"], ids=lambda v: v["key"][-45:])
def test_key(v: dict[str, Any]) -> None:
    tag = holdfast.lease_tag(text(v["secretHex"]))
    assert holdfast.lease_key(v["branch"], v["version"], v["leaseId"], tag) == v["key"]


@pytest.mark.parametrize("v", VECTORS["bodies"], ids=lambda v: f"renewal-{v['fields']['renewal']}")
def test_body_bytes_and_proof(v: dict[str, Any]) -> None:
    secret = text(v["secretHex"])
    f = v["fields"]
    assert f"{f['leaseId']}:{f['renewal']}:{f['writerId']}" == v["proofMessage"]
    assert holdfast.lease_proof(secret, f["leaseId"], f["renewal"], f["writerId"]) == v["proof"]
    body = holdfast.encode_lease_body(
        secret,
        lease_id=f["leaseId"],
        branch=f["branch"],
        version=f["version"],
        ttl_ms=f["ttlMs"],
        renewal=f["renewal"],
        writer_id=f["writerId"],
        holder=f.get("holder"),
    )
    assert body.hex() == v["bodyHex"]
    assert body.decode() == v["body"]
    parsed = holdfast.parse_lease_body(body)
    assert parsed is not None
    assert (parsed.lease_id, parsed.renewal, parsed.proof, parsed.holder) == (
        f["leaseId"],
        f["renewal"],
        v["proof"],
        f.get("holder"),
    )


@pytest.mark.parametrize("v", VECTORS["invalidSecrets"], ids=lambda v: v["why"][:30])
def test_invariant_6_refuses_the_secret_text(v: dict[str, Any]) -> None:
    assert decode_lease_secret(v["secret"]) is None
    with pytest.raises(
        HoldfastError,
        check=lambda e: e.kind == "invalid-input" and e.code == "INVALID_LEASE_SECRET",
    ):
        holdfast.lease_tag(v["secret"])


@pytest.mark.parametrize("v", VECTORS["parseKeys"], ids=lambda v: v.get("note", "canonical")[:30])
def test_parse_key(v: dict[str, Any]) -> None:
    parsed = holdfast.parse_lease_key(v["key"])
    if v["parsed"] is None:
        assert parsed is None
    else:
        assert parsed is not None
        expected = v["parsed"]
        assert (parsed.branch, parsed.version, parsed.lease_id, parsed.tag) == (
            expected["branch"],
            expected["version"],
            expected["leaseId"],
            expected["tag"],
        )
