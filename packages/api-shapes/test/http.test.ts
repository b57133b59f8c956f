import { describe, expect, it } from "vitest";
import {
  CleanupPolicyShape,
  JsonShapes,
  LeaseAcquireRequest,
  LeaseHandleShape,
} from "../src/index.js";

describe("HTTP request shapes", () => {
  const handle = {
    leaseId: "01J9Z3K4V6W8X0Y2Z4A6B8C0D2",
    branch: "main",
    version: 1,
    ttlMs: 1000,
    secret: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
    key: "_holdfast/leases/main/00000000000000000001/01J9Z3K4V6W8X0Y2Z4A6B8C0D2.630dcd2966c4336691125448bbb25b4f.json",
    etag: "abc",
    renewal: 0,
    writerId: "01J9Z3K4V6W8X0Y2Z4A6B8C0D3",
  };

  it("a lease handle is strict: unknown fields, bad ids and out-of-range TTLs are refused", () => {
    expect(LeaseHandleShape.safeParse(handle).success).toBe(true);
    expect(LeaseHandleShape.safeParse({ ...handle, extra: 1 }).success).toBe(false);
    expect(LeaseHandleShape.safeParse({ ...handle, leaseId: "x" }).success).toBe(false);
    expect(LeaseHandleShape.safeParse({ ...handle, ttlMs: 99 }).success).toBe(false);
    expect(LeaseHandleShape.safeParse({ ...handle, branch: "../main" }).success).toBe(false);
  });

  it("invariant 6 a lease handle carries its 43-character base64url secret", () => {
    const { secret: _, ...withoutSecret } = handle;
    expect(LeaseHandleShape.safeParse(withoutSecret).success).toBe(false);
    for (const secret of ["", "A".repeat(42), "A".repeat(44), `${"A".repeat(42)}+`, 42]) {
      expect(LeaseHandleShape.safeParse({ ...handle, secret }).success).toBe(false);
    }
  });

  it("an acquire needs a version >= 1 and a TTL within 100 ms .. 24 h", () => {
    expect(LeaseAcquireRequest.safeParse({ version: 1, ttlMs: 100 }).success).toBe(true);
    expect(LeaseAcquireRequest.safeParse({ version: 0, ttlMs: 100 }).success).toBe(false);
    expect(LeaseAcquireRequest.safeParse({ version: 1, ttlMs: 86_400_001 }).success).toBe(false);
  });

  it("a cleanup policy needs at least one selector", () => {
    expect(CleanupPolicyShape.safeParse({ minVersionAgeMs: 0 }).success).toBe(false);
    expect(CleanupPolicyShape.safeParse({ retainVersions: 3 }).success).toBe(true);
  });

  it("the CLI's --json shapes are here, one per command", () => {
    expect(Object.keys(JsonShapes)).toContain("lease acquire");
    expect(
      JsonShapes.versions.safeParse({
        ok: true,
        command: "versions",
        location: "x",
        branch: "main",
        versions: [],
      }).success,
    ).toBe(true);
  });
});
