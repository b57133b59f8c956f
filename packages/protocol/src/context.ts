import {
  type Clock,
  cryptoRandomBytes,
  type IdSource,
  type ObjectStore,
  type RandomBytes,
  type ReissuePolicy,
  type ResolveOptions,
  realSleep,
  type Sleep,
  systemClock,
  ulidIds,
} from "@holdfast/conditional-store";

/**
 * What every protocol operation needs: the store (keys relative to the dataset root) and
 * the injected clock, id source and sleep. The clock only drives local timers (a lease
 * keeper's fence); it is never compared with another host's clock (docs/protocol.md §3).
 */
export interface ProtocolContext {
  readonly store: ObjectStore;
  /** Local timers only; never compared across hosts. */
  readonly clock: Clock;
  /** Writer ids and object names (ULIDs; seeded in tests). */
  readonly ids: IdSource;
  /** Injected pauses (resolver re-issues, keeper renewals). */
  readonly sleep: Sleep;
  /**
   * Random bytes for secrets (a lease's capability, docs/protocol.md §4).
   * @default cryptoRandomBytes (`node:crypto`)
   */
  readonly random?: RandomBytes | undefined;
  /** Re-issue policy handed to the resolver. @default DEFAULT_REISSUE_POLICY */
  readonly reissue?: ReissuePolicy | undefined;
}

/** Builds a context with production defaults (`systemClock`, `ulidIds()`, `realSleep`) for anything not given. */
export function createContext(
  store: ObjectStore,
  partial: Partial<Omit<ProtocolContext, "store">> = {},
): ProtocolContext {
  return {
    store,
    clock: partial.clock ?? systemClock,
    ids: partial.ids ?? ulidIds(),
    sleep: partial.sleep ?? realSleep,
    random: partial.random ?? cryptoRandomBytes,
    reissue: partial.reissue,
  };
}

/** Resolver options from a context (policy and sleep), optionally bound to a fence signal. */
export function resolverOptions(ctx: ProtocolContext, signal?: AbortSignal): ResolveOptions {
  return { policy: ctx.reissue, sleep: ctx.sleep, signal };
}
