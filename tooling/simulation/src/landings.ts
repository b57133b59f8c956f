import type { MemoryStore, ObjectStore } from "@holdfast/conditional-store";
import { parseManifestKey, versionsPrefix } from "@holdfast/dataset";

/**
 * The shared store as the actors reach it, noting for every manifest put that applied the
 * highest version of its branch that already existed at that moment (`null`: none above
 * it). A commit that returns success must have landed with nothing above it: otherwise it
 * sits below the branch's latest, nobody builds on it, and cleanup will retire what it
 * names (invariant 7; docs/protocol.md §2, "Commits above the hint").
 */
export function observeLandings(memory: MemoryStore): {
  store: ObjectStore;
  landedBelow: Map<string, number | null>;
} {
  const landedBelow = new Map<string, number | null>();
  const highestAbove = (key: string): number | null | undefined => {
    const parsed = parseManifestKey(key);
    if (!parsed) return undefined;
    const prefix = versionsPrefix(parsed.branch);
    let top: number | null = null;
    for (const other of memory.keys()) {
      if (!other.startsWith(prefix)) continue;
      const version = parseManifestKey(other)?.version;
      if (version !== undefined && version > parsed.version && (top === null || version > top)) {
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
      const above = highestAbove(key);
      const result = await memory.put(key, body, options);
      if (above !== undefined) landedBelow.set(key, above);
      return result;
    },
  };
  return { store, landedBelow };
}
