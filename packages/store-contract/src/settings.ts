// Options of the shared contract suite, and the settings its sections share.
import type {
  HoldfastErrorKind,
  ObjectStore,
  StoreCapabilities,
} from "@holdfast/conditional-store";
import type { ArrangeDeleteFailure } from "./cancellation.js";

/** Options of {@link describeObjectStoreContract}. */
export interface ObjectStoreContractOptions {
  /**
   * Returns a store over a fresh, empty, isolated location (a new temp directory, bucket
   * prefix or container prefix). Called once per test.
   */
  create: () => Promise<ObjectStore> | ObjectStore;
  /**
   * Capability values the backend is expected to declare. Each given field is asserted
   * against `store.capabilities`, so a backend opts out of a behaviour out loud.
   * @default {} (the suite adapts to whatever the store declares)
   */
  capabilities?: Partial<StoreCapabilities>;
  /**
   * Called after each test with the store it used. The default deletes every object the
   * store lists under the empty prefix, in `maxBatchDelete` batches.
   * @default deleteEverything
   */
  cleanup?: (store: ObjectStore) => Promise<void> | void;
  /** Rounds of the 8-writer races (create-only and if-match). @default 20 */
  concurrencyRounds?: number;
  /**
   * Error kinds a losing racer may report. A backend adds `ambiguous` where the store answers
   * some losers with a 5xx (Ceph RGW: 500 for a cancelled racing If-Match put); the suite
   * still requires exactly one winner and the winner's bytes stored.
   * @default ["conflict", "in-flight"]
   */
  raceLoserKinds?: readonly HoldfastErrorKind[];
  /**
   * Allowed difference between the store's clock and this host's clock, in ms, on top of
   * the declared `timestampPrecisionMs`, when Last-Modified is compared with the write.
   * @default 250
   */
  clockToleranceMs?: number;
  /** Number of keys of the multi-page listing test (more than 1,000). @default 1100 */
  manyKeys?: number;
  /** Concurrent requests used to write many keys. @default 16 */
  writeConcurrency?: number;
  /** Size of the large object round-trip, in bytes. @default 8 MiB */
  largeObjectBytes?: number;
  /** Timeout of the heavy tests (many keys, races, large object), in ms. @default 120_000 */
  slowTestTimeoutMs?: number;
  /**
   * Makes a later delete of one key fail on this store (e.g. a blob under a lease) and
   * returns how to undo it. When given, the suite checks that `deleteMany` reports that key
   * in `failed` with a typed error and still deletes the others.
   * @default undefined (that test is not registered)
   */
  arrangeDeleteFailure?: ArrangeDeleteFailure;
}

/** The suite's options with their defaults applied, handed to every section. */
export interface ContractSettings {
  rounds: number;
  loserKinds: readonly HoldfastErrorKind[];
  tolerance: number;
  manyKeys: number;
  writeConcurrency: number;
  largeBytes: number;
  slow: number;
  capabilities: Partial<StoreCapabilities> | undefined;
  arrangeDeleteFailure: ArrangeDeleteFailure | undefined;
}
