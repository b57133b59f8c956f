import { encodeJson, MemoryStore } from "@holdfast/conditional-store";
import { manifestKey } from "@holdfast/dataset";
import { describe, expect, it } from "vitest";
import { observeLandings } from "../src/landings.js";

// The invariant-7 check of the simulation (docs/protocol.md §2.2):
// a manifest that lands while a higher version of its branch exists is seen as such.
describe("simulation: manifest landings", () => {
  it("notes the highest version above each manifest when it lands, per branch", async () => {
    const { store, landedBelow } = observeLandings(new MemoryStore());
    const put = (branch: string, version: number) =>
      store.put(manifestKey(branch, version), encodeJson({ branch, version }), {
        precondition: { ifNoneMatch: "*" },
      });
    await put("main", 1);
    await put("main", 5);
    await put("dev", 9);
    await put("main", 3); // below 5: a commit that lands here is hidden
    await store.delete(manifestKey("main", 5));
    await put("main", 4); // nothing above any more
    await store.put("data/x.bin", new Uint8Array(1));
    expect(Object.fromEntries(landedBelow)).toEqual({
      [manifestKey("main", 1)]: null,
      [manifestKey("main", 5)]: null,
      [manifestKey("dev", 9)]: null,
      [manifestKey("main", 3)]: 5,
      [manifestKey("main", 4)]: null,
    });
    // A put that does not apply (the key exists) is not a landing.
    await expect(put("main", 3)).rejects.toMatchObject({ kind: "conflict" });
    expect(landedBelow.get(manifestKey("main", 3))).toBe(5);
  });

  it("a put over a present manifest (a foreign rewrite or its repair) is no landing", async () => {
    const memory = new MemoryStore();
    const { store, landedBelow } = observeLandings(memory);
    const key = manifestKey("main", 6);
    const first = await store.put(key, encodeJson({ branch: "main", version: 6 }), {
      precondition: { ifNoneMatch: "*" },
    });
    await store.put(manifestKey("main", 7), encodeJson({ branch: "main", version: 7 }), {
      precondition: { ifNoneMatch: "*" },
    });
    // Replaced (if-match) and put back while 7 exists: main@6 still landed with nothing above.
    const broken = await store.put(key, new Uint8Array([123]), {
      precondition: { ifMatch: first.etag },
    });
    await store.put(key, encodeJson({ branch: "main", version: 6 }), {
      precondition: { ifMatch: broken.etag },
    });
    await store.put(key, encodeJson({ branch: "main", version: 6 }));
    expect(landedBelow.get(key)).toBeNull();
    // Deleted, then created again while 7 exists: that landing is below 7.
    await memory.delete(key);
    await store.put(key, encodeJson({ branch: "main", version: 6 }), {
      precondition: { ifNoneMatch: "*" },
    });
    expect(landedBelow.get(key)).toBe(7);
  });
});
