"""A minimal reader of the protobuf wire format: just enough to walk a Lance manifest's
messages field by field (docs/lance.md, "The manifest file"). Written for holdfast from the
protobuf encoding rules; nothing here knows Lance's schema.

Every field comes out as ``(number, wire type, value)``: an ``int`` for a varint (masked to
64 bits, as a ``uint64`` reads it) and for fixed 32/64-bit values, a ``memoryview`` for a
length-delimited field. Anything that does not follow the encoding (a truncated field, a
varint longer than 10 bytes, a length past the end, field number 0, the deprecated group
wire types) raises :class:`WireError`.
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT = 0
FIXED64 = 1
LEN = 2
FIXED32 = 5

_U64 = (1 << 64) - 1

WireValue = int | memoryview


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def read_varint(buf: memoryview, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    value = 0
    shift = 0
    end = len(buf)
    for _ in range(10):
        if pos >= end:
            raise WireError("a varint runs past the end of the message")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & _U64, pos
        shift += 7
    raise WireError("a varint is longer than 10 bytes")


def fields(data: bytes | memoryview) -> Iterator[tuple[int, int, WireValue]]:
    """Every field of one message, in wire order (repeated fields once per occurrence)."""
    buf = data if isinstance(data, memoryview) else memoryview(data)
    pos = 0
    end = len(buf)
    while pos < end:
        tag, pos = read_varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise WireError("field number 0")
        value: WireValue
        if wire == VARINT:
            value, pos = read_varint(buf, pos)
        elif wire == FIXED64:
            if pos + 8 > end:
                raise WireError(f"field {number}: a 64-bit value runs past the end")
            value = int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        elif wire == LEN:
            length, pos = read_varint(buf, pos)
            if length > end - pos:
                raise WireError(f"field {number}: its length {length} runs past the end")
            value = buf[pos : pos + length]
            pos += length
        elif wire == FIXED32:
            if pos + 4 > end:
                raise WireError(f"field {number}: a 32-bit value runs past the end")
            value = int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        else:
            raise WireError(f"field {number}: wire type {wire} (groups) is not read")
        yield number, wire, value


def as_varint(number: int, wire: int, value: WireValue) -> int:
    """A varint field's value; a field of the schema sent with another wire type is malformed."""
    if wire != VARINT or not isinstance(value, int):
        raise WireError(f"field {number} should be a varint, is wire type {wire}")
    return value


def as_bytes(number: int, wire: int, value: WireValue) -> memoryview:
    """A length-delimited field's bytes (a string, bytes or an embedded message)."""
    if wire != LEN or not isinstance(value, memoryview):
        raise WireError(f"field {number} should be length-delimited, is wire type {wire}")
    return value


def as_text(number: int, wire: int, value: WireValue) -> str:
    """A ``string`` field (UTF-8; anything else is malformed)."""
    try:
        return bytes(as_bytes(number, wire, value)).decode("utf-8")
    except UnicodeDecodeError as error:
        raise WireError(f"field {number} is not UTF-8 text") from error
