import {
  type Clock,
  holdfastError,
  listAll,
  putIfAbsent,
  writerPayload,
} from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import { resolverOptions } from "@holdfast/protocol/internal";
import { z } from "zod";
import type { DatasetEntry } from "./datasets.js";

/**
 * Revoked bearer tokens, kept on each served dataset's own store so that every replica, on
 * any host, sees a revocation without a restart or a copy of the tokens file:
 *
 *   _holdfast/server/revoked-tokens/<sha256>.json   one per revoked token, written once
 *
 * The key carries the token's SHA-256 (the tokens file's entry), so a replica learns every
 * revocation from one LIST per dataset. Records are never removed: a token's hash is random,
 * so a revoked one never comes back.
 */
export const REVOKED_TOKENS_PREFIX = "_holdfast/server/revoked-tokens/";

const REVOKED_KEY = /^_holdfast\/server\/revoked-tokens\/([0-9a-f]{64})\.json$/;

/** The body of a revocation record, schema 1 (`revokedAt` is the revoking host's clock, for people). */
export const RevokedTokenRecord = z.object({
  schema: z.literal(1),
  name: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  revokedAt: z.string(),
  writerId: z.string(),
});

/**
 * Revokes a token on one dataset's store: a create-only write of its record (an existing
 * record means it was revoked already, which is success). Every replica serving the dataset
 * refuses the token once it re-reads the list (`revocationRefreshMs`, 10 s by default).
 */
export async function revokeToken(
  ctx: ProtocolContext,
  entry: { readonly name: string; readonly sha256: string },
): Promise<{ key: string; alreadyRevoked: boolean }> {
  if (!/^[0-9a-f]{64}$/.test(entry.sha256)) {
    throw holdfastError("invalid-input", "parse", "a token's SHA-256 is 64 lowercase hex digits", {
      code: "INVALID_TOKEN_HASH",
    });
  }
  const key = `${REVOKED_TOKENS_PREFIX}${entry.sha256}.json`;
  const { bytes } = writerPayload(
    {
      schema: 1,
      name: entry.name,
      sha256: entry.sha256,
      revokedAt: new Date(ctx.clock.now()).toISOString(),
    },
    ctx.ids,
  );
  const outcome = await putIfAbsent(ctx.store, key, bytes, resolverOptions(ctx));
  return { key, alreadyRevoked: outcome.status === "conflict" };
}

/**
 * The revoked hashes of every served dataset, re-read at most every `refreshMs` of the
 * injected clock (a local timer), on the first authenticated request after that. The set
 * only grows: a failed re-read keeps what was known and is retried after `refreshMs`. Until
 * one read of every dataset succeeded, `current` throws (authentication fails closed: a
 * revoked token must never pass because the list could not be read).
 */
export class RevokedTokens {
  readonly #revoked = new Set<string>();
  #loaded = false;
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | null = null;

  constructor(
    private readonly datasets: ReadonlyMap<string, DatasetEntry>,
    private readonly clock: Clock,
    private readonly refreshMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The revoked SHA-256 hashes, fresh to within `refreshMs`. */
  async current(): Promise<ReadonlySet<string>> {
    if (this.clock.now() - this.#readAt >= this.refreshMs) {
      this.#reading ??= this.#read().finally(() => {
        this.#reading = null;
      });
      await this.#reading;
    }
    if (!this.#loaded) {
      throw holdfastError(
        "unresolved",
        "list",
        "the list of revoked tokens could not be read from the store, so no token is accepted",
        {
          key: REVOKED_TOKENS_PREFIX,
          code: "REVOCATIONS_UNREADABLE",
          hint: "check the store (GET /readyz); requests are accepted again once it answers",
        },
      );
    }
    return this.#revoked;
  }

  async #read(): Promise<void> {
    const startedAt = this.clock.now();
    try {
      const found: string[] = [];
      for (const ds of this.datasets.values()) {
        for await (const meta of listAll(ds.store, REVOKED_TOKENS_PREFIX)) {
          const match = REVOKED_KEY.exec(meta.key);
          if (match) found.push(match[1]!);
        }
      }
      for (const sha256 of found) this.#revoked.add(sha256);
      this.#loaded = true;
    } catch (error) {
      this.onError(error);
    } finally {
      this.#readAt = startedAt;
    }
  }
}
