// The repeated-request part of the contract on the local backend. A local store has no wire:
// nothing between holdfast and the filesystem can deliver a request twice, and no proxy can
// stand before it. The part still runs on the real filesystem, with the scripted fault
// store's `repeat` (the request is applied twice, the second answer returned) around it, so
// the local store's answers to a second copy (EEXIST, a changed ETag, an absent file) are
// the ones the resolver settles (docs/guarantees.md, "Conditional requests").
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { describeRepeatedRequestContract, type RepeatedWrite } from "@holdfast/store-contract";
import { afterAll } from "vitest";

const base = mkdtempSync(join(tmpdir(), "holdfast-local-repeated-"));
let n = 0;
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeRepeatedRequestContract("local (fault store's repeat over the real filesystem)", {
  create: async () => {
    n += 1;
    const root = join(base, `store-${n}`);
    const store = new FaultStore(createLocalStore({ root }));
    let kinds = new Set<RepeatedWrite>();
    let repeated = 0;
    const fires = (kind: RepeatedWrite) => {
      if (!kinds.has(kind)) return false;
      repeated += 1;
      return true;
    };
    const rule = (
      operation: "put" | "delete",
      precondition: "create" | "if-match" | "none",
      kind: RepeatedWrite,
    ) => ({
      operation,
      precondition,
      times: Number.POSITIVE_INFINITY,
      key: () => fires(kind),
      fault: { type: "repeat" } as const,
    });
    store.script(
      rule("put", "create", "create"),
      rule("put", "if-match", "if-match"),
      rule("put", "none", "put"),
      rule("delete", "if-match", "conditional-delete"),
      rule("delete", "none", "delete"),
    );
    return {
      store,
      repeat: (list) => {
        kinds = new Set(list);
      },
      stop: () => {
        kinds = new Set();
      },
      repeated: () => repeated,
      close: async () => rmSync(root, { recursive: true, force: true }),
    };
  },
});
