/**
 * A reader of the protobuf wire format (https://protobuf.dev/programming-guides/encoding/),
 * for the messages holdfast decodes field by field (proto.ts). Every read checks its bounds:
 * a varint longer than 10 bytes, a length past the end or a wire type protobuf does not
 * define throws a {@link WireError}, never reads past the message.
 */
export class WireError extends Error {
  override readonly name = "WireError";
}

/** Wire types (the low 3 bits of a tag). */
export const VARINT = 0;
export const FIXED64 = 1;
export const LEN = 2;
const START_GROUP = 3;
const END_GROUP = 4;
export const FIXED32 = 5;

const TWO_32 = 0x1_0000_0000;

export class WireReader {
  readonly #bytes: Uint8Array;
  #pos: number;
  readonly #end: number;
  /** The two 32-bit halves of the last varint read. */
  #low = 0;
  #high = 0;

  constructor(bytes: Uint8Array, pos = 0, end = bytes.length) {
    this.#bytes = bytes;
    this.#pos = pos;
    this.#end = end;
  }

  get done(): boolean {
    return this.#pos >= this.#end;
  }

  /** The next tag: field number and wire type. */
  tag(): { field: number; wire: number } {
    this.#varint();
    const field = (this.#low >>> 3) + (this.#high & 0x1f_ffff) * 0x2000_0000;
    const wire = this.#low & 7;
    if (field === 0) throw new WireError("field number 0");
    return { field, wire };
  }

  /** An unsigned 64-bit varint as its exact decimal string. */
  uint64(): string {
    this.#varint();
    const high = this.#high >>> 0;
    const low = this.#low >>> 0;
    if (high < 0x20_0000) return String(high * TWO_32 + low);
    return ((BigInt(high) << 32n) | BigInt(low)).toString();
  }

  /** A signed 64-bit varint (two's complement, not zigzag) as its exact decimal string. */
  int64(): string {
    this.#varint();
    const high = this.#high >>> 0;
    const low = this.#low >>> 0;
    if (high < 0x20_0000) return String(high * TWO_32 + low);
    return BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low)).toString();
  }

  /** A `uint32` field: the varint's low 32 bits, unsigned. */
  uint32(): number {
    this.#varint();
    return this.#low >>> 0;
  }

  /** An `int32` field: the varint's low 32 bits, signed. */
  int32(): number {
    this.#varint();
    return this.#low | 0;
  }

  bool(): boolean {
    this.#varint();
    return this.#low !== 0 || this.#high !== 0;
  }

  /** A length-delimited field's bytes (a view, not a copy). */
  bytes(): Uint8Array {
    const [start, end] = this.#span();
    return this.#bytes.subarray(start, end);
  }

  string(): string {
    const [start, end] = this.#span();
    return UTF8.decode(this.#bytes.subarray(start, end));
  }

  /** A reader of the embedded message that follows. */
  message(): WireReader {
    const [start, end] = this.#span();
    return new WireReader(this.#bytes, start, end);
  }

  /** Skips a field of the given wire type (a group up to its end tag). */
  skip(wire: number, field = 0): void {
    switch (wire) {
      case VARINT:
        this.#varint();
        return;
      case FIXED64:
        this.#advance(8);
        return;
      case LEN:
        this.#span();
        return;
      case FIXED32:
        this.#advance(4);
        return;
      case START_GROUP:
        for (;;) {
          if (this.done) throw new WireError(`group ${field} has no end`);
          const next = this.tag();
          if (next.wire === END_GROUP) {
            if (next.field !== field) throw new WireError(`group ${field} ends as ${next.field}`);
            return;
          }
          this.skip(next.wire, next.field);
        }
      default:
        throw new WireError(`wire type ${wire}`);
    }
  }

  /** Throws unless a field read with `expected` came with that wire type. */
  expect(wire: number, expected: number, field: number): void {
    if (wire !== expected) {
      throw new WireError(`field ${field} has wire type ${wire}, expected ${expected}`);
    }
  }

  #span(): [number, number] {
    this.#varint();
    if (this.#high !== 0 || this.#low < 0) throw new WireError("length out of range");
    const start = this.#pos;
    this.#advance(this.#low);
    return [start, this.#pos];
  }

  #advance(n: number): void {
    if (this.#pos + n > this.#end) throw new WireError("field runs past the end of its message");
    this.#pos += n;
  }

  #varint(): void {
    const bytes = this.#bytes;
    let low = 0;
    let high = 0;
    for (let i = 0; i < 10; i += 1) {
      if (this.#pos >= this.#end) throw new WireError("varint runs past the end of its message");
      const b = bytes[this.#pos]!;
      this.#pos += 1;
      if (i < 4) low |= (b & 0x7f) << (7 * i);
      else if (i === 4) {
        low |= (b & 0x0f) << 28;
        high |= (b & 0x7f) >> 4;
      } else high |= (b & 0x7f) << (7 * i - 32);
      if (b < 0x80) {
        this.#low = low;
        this.#high = high;
        return;
      }
    }
    throw new WireError("varint longer than 10 bytes");
  }
}

const UTF8 = new TextDecoder("utf-8");
