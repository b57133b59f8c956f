import { describe, expect, it } from "vitest";
import {
  acquireCleanupLock,
  CLEANUP_LOCK_KEY,
  describeLockHolder,
  inspectCleanupLock,
  lockHeldError,
  renewCleanupLock,
} from "../src/index.js";
import { memoryContext } from "./helpers.js";

// docs/protocol.md §5.9: who holds the cleanup lock, judged in storage time only (the lock's
// Last-Modified is the holder's last heartbeat), as `holdfast recover` explains it.
describe("the cleanup lock's holder (inspectCleanupLock)", () => {
  it("a live holder, one that stopped renewing, then a lock that cleared (bound + precision)", async () => {
    const { ctx, time } = memoryContext();
    expect(await inspectCleanupLock(ctx)).toBeNull();
    const lock = await acquireCleanupLock(ctx, { owner: "01HOLDER", boundMs: 30_000 });
    const stamp = (await ctx.store.head(CLEANUP_LOCK_KEY))!.lastModified;

    const live = await inspectCleanupLock(ctx);
    expect(live).toMatchObject({
      owner: "01HOLDER",
      renewsEveryMs: 10_000,
      stoppedRenewing: false,
    });
    expect(live!.lastHeartbeat).toEqual(stamp);
    // One precision interval on top of the bound, so truncation never clears it early.
    expect(live!.clearsAt.getTime()).toBe(stamp.getTime() + 30_000 + 1000);
    expect(describeLockHolder(live!)).toMatch(/^another cleanup is running \(owner 01HOLDER\)/);
    expect(lockHeldError(live!)).toMatchObject({
      kind: "conflict",
      code: "CLEANUP_RUNNING",
      key: CLEANUP_LOCK_KEY,
    });

    // A renewal is a heartbeat: 1.5 renewal intervals + precision after it, the holder has
    // missed one.
    await time.advance(10_000);
    await renewCleanupLock(ctx, lock);
    await time.advance(15_000);
    expect((await inspectCleanupLock(ctx))?.stoppedRenewing).toBe(false);
    await time.advance(2_000);
    const stale = await inspectCleanupLock(ctx);
    expect(stale?.stoppedRenewing).toBe(true);
    expect(describeLockHolder(stale!)).toContain("which stopped renewing it");

    await time.advance(15_000); // 32 s after the renewal: bound + precision passed
    expect(await inspectCleanupLock(ctx)).toBeNull();
  });
});
