import type {
  Clock,
  IdSource,
  ObjectStore,
  ReissuePolicy,
  Sleep,
} from "@holdfast/conditional-store";

/**
 * What retirement needs from the caller: the same shape as `ProtocolContext` in
 * `@holdfast/dataset`, so a `ProtocolContext` can be passed as is.
 */
export interface RetirementContext {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly sleep: Sleep;
  readonly reissue?: ReissuePolicy | undefined;
}
