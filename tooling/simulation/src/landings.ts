import type { MemoryStore, ObjectStore } from "@holdfast/conditional-store";
import { parseManifestKey, versionsPrefix } from "@holdfast/dataset";

/**
 * The shared store as the actors reach it, noting for every manifest put that created its
 * key (the key was absent, the put applied) the highest version of its branch that already
 * existed at that moment (`null`: none above it). A commit that returns success must have
 * landed with nothing above it: otherwise it sits below the branch's latest, nobody builds
 * on it, and cleanup will retire what it names (invariant 7; docs/protocol.md §2.2). Commits only
 * create manifests (create-only puts), so a put over a present manifest (a foreign writer replacing
 * its bytes, or repairing them) is no commit's landing and leaves what the version landed below as
 * it was.
 */
export function observeLandings(memory: MemoryStore): {
  store: ObjectStore;
  landedBelow: Map<string, number | null>;
} {
  const landedBelow = new Map<string, number | null>();
  /** `undefined`: not a manifest key, or the key is present (the put creates nothing). */
  const highestAbove = (key: string): number | null | undefined => {
    const parsed = parseManifestKey(key);
    if (!parsed) return undefined;
    let top: number | null = null;
    for (const other of memory.keys(versionsPrefix(parsed.branch))) {
      if (other === key) return undefined;
      const found = parseManifestKey(other);
      if (found?.branch !== parsed.branch) continue;
      const version = found.version;
      if (version > parsed.version && (top === null || version > top)) {
        top = version;
      }
    }
    return top;
  };
  const store: ObjectStore = {
    backend: memory.backend,
    location: memory.location,
    capabilities: memory.capabilities,
    get: (key, options) => memory.get(key, options),
    head: (key, options) => memory.head(key, options),
    delete: (key, options) => memory.delete(key, options),
    deleteMany: (keys, options) => memory.deleteMany(keys, options),
    list: (prefix, options) => memory.list(prefix, options),
    async put(key, body, options) {
      // Read synchronously right before the memory store's put, which decides and applies
      // without awaiting: nothing else runs in between.
      const above = highestAbove(key);
      const result = await memory.put(key, body, options);
      if (above !== undefined) landedBelow.set(key, above);
      return result;
    },
  };
  return { store, landedBelow };
}
