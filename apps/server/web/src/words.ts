/**
 * The dashboard's words for what the API answers in field names and numbers: store
 * capabilities, clock skew, bytes, durations. Pure: no DOM, tested in Node.
 */

/** Each capability a store declares (`StoreCapabilities`), as a sentence for its value. */
const CAPABILITIES: Record<string, (value: unknown) => string> = {
  atomicConditionalUpdate: (v) =>
    v === true
      ? "Compare-and-swap writes are atomic: tags, branches and leases can be updated safely."
      : "Compare-and-swap writes are not atomic: reference updates are refused.",
  atomicConditionalDelete: (v) =>
    v === true
      ? "Conditional deletes are atomic (delete only if unchanged)."
      : "Conditional deletes are not honoured: deletes are unconditional on keys that only their owner can name.",
  timestampPrecisionMs: (v) =>
    `Timestamps are precise to ${typeof v === "number" ? formatDuration(v) : String(v)}; lease expiry is judged with at least that margin.`,
  maxBatchDelete: (v) => `One batch delete removes at most ${String(v)} objects.`,
  requestMode: (v) =>
    v === "single-attempt"
      ? "Each request is sent once; holdfast alone re-issues a request whose answer was lost."
      : v === "repeating"
        ? "The client library retries by itself; holdfast reads back to settle a repeated write."
        : v === "completes-before-answer"
          ? "A write finishes before the store answers (a local disk): an error means nothing was written."
          : `Requests are sent in mode ${String(v)}.`,
  etagIsContentHash: (v) =>
    v === true
      ? "ETags are content hashes: rewriting identical bytes keeps the ETag, so every lease renewal changes its bytes."
      : "ETags change on every write.",
};

/** A capability as a row: the plain-words name and the sentence for its value. */
export function describeCapability(name: string, value: unknown): { name: string; text: string } {
  const sentence = CAPABILITIES[name];
  return {
    name: CAPABILITY_NAMES[name] ?? name,
    text: sentence ? sentence(value) : `${name}: ${JSON.stringify(value)}`,
  };
}

const CAPABILITY_NAMES: Record<string, string> = {
  atomicConditionalUpdate: "Atomic compare-and-swap",
  atomicConditionalDelete: "Atomic conditional delete",
  timestampPrecisionMs: "Timestamp precision",
  maxBatchDelete: "Batch delete size",
  requestMode: "How requests are sent",
  etagIsContentHash: "ETags",
};

/**
 * Clock skew as one sentence, one sign convention everywhere: `skewMs` is the store's clock
 * minus this server's (positive: the store is ahead).
 */
export function describeSkew(skewMs: number | null): string {
  if (skewMs === null) return "The store's clock could not be compared with this server's.";
  if (Math.abs(skewMs) < 50) return "The store clock agrees with this server's (within 0.05 s).";
  const s = (Math.abs(skewMs) / 1000).toFixed(Math.abs(skewMs) < 1000 ? 2 : 1);
  return `The store clock is ${s} s ${skewMs > 0 ? "ahead of" : "behind"} this server.`;
}

/** Bytes in SI units: "0 B", "999 B", "1.2 kB", "367 MB". */
export function formatBytes(bytes: number): string {
  const units = ["B", "kB", "MB", "GB", "TB", "PB"];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const shown = unit === 0 ? String(value) : value.toFixed(value < 10 ? 1 : 0);
  return `${shown} ${units[unit]}`;
}

/** A duration for people: "850 ms", "42 s", "4 min 10 s", "3 h 5 min", "2 d 1 h". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
  if (s < 86_400) {
    const m = Math.floor((s % 3600) / 60);
    return `${Math.floor(s / 3600)} h${m ? ` ${m} min` : ""}`;
  }
  const h = Math.floor((s % 86_400) / 3600);
  return `${Math.floor(s / 86_400)} d${h ? ` ${h} h` : ""}`;
}
