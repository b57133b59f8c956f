import { readFileSync } from "node:fs";
import { decodeJson } from "@holdfast/conditional-store";
import {
  encodeLeaseBody,
  LeaseBodySchema,
  leaseKey,
  leaseProof,
  leaseTag,
  parseLeaseKey,
} from "@holdfast/leases";
import { describe, expect, it } from "vitest";

// The shared conformance vectors (repo root): the Python package runs the same file, so
// both write byte-identical lease keys and bodies (docs/protocol.md §4.2).
interface Vectors {
  secrets: { secretHex: string; secret: string; tag: string }[];
  keys: { secretHex: string; branch: string; version: number; leaseId: string; key: string }[];
  bodies: {
    secretHex: string;
    fields: {
      leaseId: string;
      branch: string;
      version: number;
      ttlMs: number;
      renewal: number;
      writerId: string;
      holder?: string;
    };
    proofMessage: string;
    proof: string;
    body: string;
    bodyHex: string;
  }[];
  invalidSecrets: { secret: string; why: string }[];
  parseKeys: {
    key: string;
    parsed: { branch: string; version: number; leaseId: string; tag: string | null } | null;
  }[];
}

const vectors = JSON.parse(
  readFileSync(new URL("../../../conformance/leases/vectors.json", import.meta.url), "utf8"),
) as Vectors;

const text = (hex: string) => Buffer.from(hex, "hex").toString("base64url");

describe("conformance vectors (conformance/leases/vectors.json)", () => {
  it("has cases of every kind", () => {
    expect(vectors.secrets.length).toBeGreaterThan(0);
    expect(vectors.keys.length).toBeGreaterThan(0);
    expect(vectors.bodies.length).toBeGreaterThan(0);
    expect(vectors.invalidSecrets.length).toBeGreaterThan(0);
    expect(vectors.parseKeys.length).toBeGreaterThan(0);
  });

  it.each(vectors.secrets)("secret $secretHex → text and tag", (v) => {
    expect(text(v.secretHex)).toBe(v.secret);
    expect(v.secret).toHaveLength(43);
    expect(leaseTag(v.secret)).toBe(v.tag);
  });

  it.each(vectors.keys)("key of $branch@$version $leaseId", (v) => {
    expect(leaseKey(v.branch, v.version, v.leaseId, text(v.secretHex))).toBe(v.key);
  });

  it("has a body with a holder label and bodies without one", () => {
    expect(vectors.bodies.some((v) => v.fields.holder !== undefined)).toBe(true);
    expect(vectors.bodies.some((v) => v.fields.holder === undefined)).toBe(true);
  });

  it.each(vectors.bodies)("body bytes and proof of renewal $fields.renewal", (v) => {
    const secret = text(v.secretHex);
    expect(`${v.fields.leaseId}:${v.fields.renewal}:${v.fields.writerId}`).toBe(v.proofMessage);
    expect(leaseProof(secret, v.fields)).toBe(v.proof);
    const bytes = encodeLeaseBody(secret, v.fields);
    expect(Buffer.from(bytes).toString("hex")).toBe(v.bodyHex);
    expect(new TextDecoder().decode(bytes)).toBe(v.body);
    expect(LeaseBodySchema.parse(decodeJson(bytes))).toMatchObject({ ...v.fields, proof: v.proof });
  });

  it.each(vectors.invalidSecrets)("invariant 6 refuses the secret text $secret ($why)", (v) => {
    expect(() => leaseTag(v.secret)).toThrow(
      expect.objectContaining({ kind: "invalid-input", code: "INVALID_LEASE_SECRET" }),
    );
  });

  it.each(vectors.parseKeys)("parses $key", (v) => {
    expect(parseLeaseKey(v.key)).toEqual(v.parsed);
  });
});
