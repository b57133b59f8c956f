import { realSleep, type Sleep } from "./clock.js";
import { isHoldfastError } from "./errors.js";
import { DEFAULT_REISSUE_POLICY, type ReissuePolicy } from "./policy.js";

/** Options of {@link reissueIdempotent}. */
export interface IdempotentReissueOptions {
  /** @default DEFAULT_REISSUE_POLICY */
  readonly policy?: ReissuePolicy | undefined;
  /** @default realSleep */
  readonly sleep?: Sleep | undefined;
  /** Stops further re-issues; the last error is thrown. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Sends a request whose repetition changes nothing (a read, a listing, an unconditional
 * delete, an unconditional put of the same bytes) and re-issues it unchanged while its
 * answer is `ambiguous`, under the same policy as conditional requests (docs/guarantees.md,
 * "Conditional requests": what a client may repeat). Every other answer stands: a
 * refusal, a conflict, an auth error. For backends whose client sends each request once
 * (`requestMode: "single-attempt"`); the SDKs of S3 and Azure repeat such requests
 * themselves. Conditional requests never come here: the resolver owns them.
 */
export async function reissueIdempotent<T>(
  call: () => Promise<T>,
  options: IdempotentReissueOptions = {},
): Promise<T> {
  const pauses = (options.policy ?? DEFAULT_REISSUE_POLICY).pausesMs;
  const sleep = options.sleep ?? realSleep;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (!isHoldfastError(error, "ambiguous") || attempt >= pauses.length) throw error;
      if (options.signal?.aborted) throw error;
      try {
        await sleep(pauses[attempt]!, options.signal);
      } catch {
        throw error;
      }
    }
  }
}
