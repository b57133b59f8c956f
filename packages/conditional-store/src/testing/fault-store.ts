import { realSleep, type Sleep } from "../clock.js";
import { emptyRequestCounts, type RequestCounts, type RequestType } from "../counting.js";
import { type HoldfastError, holdfastError } from "../errors.js";
import type {
  DeleteManyOptions,
  DeleteManyResult,
  DeleteOptions,
  GetResult,
  ListOptions,
  ListPage,
  ObjectMeta,
  ObjectStore,
  Precondition,
  PutOptions,
  PutResult,
  RequestMode,
  StoreCapabilities,
} from "../types.js";

/** Which requests a scripted fault applies to. Every field narrows; an empty match takes every request. */
export interface FaultMatch {
  /** @default any operation */
  readonly operation?: RequestType | undefined;
  /** Exact key, a pattern, or a predicate (for `deleteMany`: any key of the batch; for `list`: the prefix). @default any key */
  readonly key?: string | RegExp | ((key: string) => boolean) | undefined;
  /**
   * `create` (`ifNoneMatch: "*"`), `if-match` (a put or delete with `ifMatch`), `none`
   * (unconditional), or `any`. @default "any"
   */
  readonly precondition?: "create" | "if-match" | "none" | "any" | undefined;
  /** The fault starts at the nth matching request (1-based). @default 1 */
  readonly nth?: number | undefined;
  /** How many matching requests, from the nth on, the fault takes. `Infinity` for all. @default 1 */
  readonly times?: number | undefined;
}

/**
 * One scripted step. Steps run in order; the first terminal step decides the answer:
 * - `delay` (before): pause `ms` on the injected Sleep, then go on;
 * - `foreign-put` (before): another writer's put reaches the store first;
 * - `before` (before): run any action on the inner store first;
 * - `strip-precondition` (before): forward the request without its precondition, as a
 *   store that ignores `If-None-Match`/`If-Match` would;
 * - `apply-then-lose`: forward, then throw `ambiguous` as if the answer was lost;
 * - `lose-before-apply`: throw `ambiguous` without forwarding;
 * - `refuse`: throw `refused` (missing bucket) or `auth` (403) without forwarding;
 * - `in-flight`: throw S3's 409 `ConditionalRequestConflict` without forwarding;
 * - `repeat`: forward twice and answer the second, as a retrying SDK does;
 * - `throw`: throw `error` without forwarding.
 */
export type Fault =
  | { readonly type: "delay"; readonly ms: number }
  | {
      readonly type: "foreign-put";
      readonly body: Uint8Array;
      /** @default the request's key */
      readonly key?: string | undefined;
      readonly precondition?: Precondition | undefined;
    }
  | { readonly type: "before"; readonly run: (inner: ObjectStore) => Promise<unknown> }
  | { readonly type: "strip-precondition" }
  | { readonly type: "apply-then-lose"; readonly error?: HoldfastError | undefined }
  | { readonly type: "lose-before-apply"; readonly error?: HoldfastError | undefined }
  | { readonly type: "refuse"; readonly kind?: "refused" | "auth" | undefined }
  | { readonly type: "in-flight" }
  | { readonly type: "repeat" }
  | { readonly type: "throw"; readonly error: unknown };

/** A match plus the steps to run when it fires. */
export interface FaultRule extends FaultMatch {
  readonly fault: Fault | readonly Fault[];
}

/** One request the fault store received, in order. */
export interface FaultRequestRecord {
  readonly operation: RequestType;
  readonly key: string;
  readonly precondition: Precondition | undefined;
  /** Types of the steps that ran on this request (empty: forwarded unchanged). */
  readonly faults: readonly Fault["type"][];
}

/** Options of {@link FaultStore}. */
export interface FaultStoreOptions {
  /** Declare a request mode other than the inner store's (e.g. `repeating` over a MemoryStore). */
  readonly requestMode?: RequestMode | undefined;
  /** Override any other declared capability. */
  readonly capabilities?: Partial<StoreCapabilities> | undefined;
  /** Sleep used by `delay` steps. @default realSleep */
  readonly sleep?: Sleep | undefined;
  /** Initial script. */
  readonly rules?: readonly FaultRule[] | undefined;
}

interface RuleState {
  readonly rule: FaultRule;
  seen: number;
  fired: number;
}

/**
 * A scripted fault store for tests: wraps any `ObjectStore` and, per request, can lose an
 * answer after or before applying, refuse, answer S3's 409, let another writer in first,
 * repeat a put, delay, or ignore a precondition. Counts requests by type like
 * `CountingStore`. The scenarios of docs/guarantees.md (C1–C10) are written against it.
 */
export class FaultStore implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: StoreCapabilities;
  readonly inner: ObjectStore;
  readonly #sleep: Sleep;
  readonly #rules: RuleState[] = [];
  readonly #log: FaultRequestRecord[] = [];
  #counts: RequestCounts = emptyRequestCounts();

  constructor(inner: ObjectStore, options: FaultStoreOptions = {}) {
    this.inner = inner;
    this.backend = inner.backend;
    this.location = inner.location;
    this.capabilities = {
      ...inner.capabilities,
      ...options.capabilities,
      requestMode:
        options.requestMode ?? options.capabilities?.requestMode ?? inner.capabilities.requestMode,
    };
    this.#sleep = options.sleep ?? realSleep;
    for (const rule of options.rules ?? []) this.script(rule);
  }

  /** Appends rules to the script. The first rule that fires on a request decides it. */
  script(...rules: FaultRule[]): this {
    for (const rule of rules) this.#rules.push({ rule, seen: 0, fired: 0 });
    return this;
  }

  /** Shorthand for `script({ ...match, fault })`. */
  on(match: FaultMatch, fault: Fault | readonly Fault[]): this {
    return this.script({ ...match, fault });
  }

  /** Drops every rule; later requests are forwarded unchanged until new rules are scripted. */
  clearScript(): this {
    this.#rules.length = 0;
    return this;
  }

  /** Rules that have not yet fired as often as scripted (a test can assert the script ran). */
  pendingRules(): FaultRule[] {
    return this.#rules
      .filter((s) => Number.isFinite(s.rule.times ?? 1) && s.fired < (s.rule.times ?? 1))
      .map((s) => s.rule);
  }

  /** Every request received, in order. */
  requests(): readonly FaultRequestRecord[] {
    return [...this.#log];
  }

  /** Requests received by type (faulted ones included; a `repeat` counts once). */
  requestCounts(): RequestCounts {
    return { ...this.#counts };
  }

  /** Zeroes counts and the request log; the script is kept. */
  resetCounts(): void {
    this.#counts = emptyRequestCounts();
    this.#log.length = 0;
  }

  get(key: string, options?: { signal?: AbortSignal | undefined }): Promise<GetResult | null> {
    return this.#run("get", key, undefined, (inner) => inner.get(key, options));
  }

  head(key: string, options?: { signal?: AbortSignal | undefined }): Promise<ObjectMeta | null> {
    return this.#run("head", key, undefined, (inner) => inner.head(key, options));
  }

  put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    return this.#run("put", key, options.precondition, (inner, strip) =>
      inner.put(key, body, strip ? { ...options, precondition: undefined } : options),
    );
  }

  delete(key: string, options: DeleteOptions = {}): Promise<void> {
    const precondition = options.ifMatch === undefined ? undefined : { ifMatch: options.ifMatch };
    return this.#run("delete", key, precondition, (inner, strip) =>
      inner.delete(key, strip ? { ...options, ifMatch: undefined } : options),
    );
  }

  deleteMany(keys: readonly string[], options?: DeleteManyOptions): Promise<DeleteManyResult> {
    return this.#run("deleteMany", keys, undefined, (inner) => inner.deleteMany(keys, options));
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.#run("list", prefix, undefined, (inner) => inner.list(prefix, options));
  }

  async #run<T>(
    operation: RequestType,
    keyOrKeys: string | readonly string[],
    precondition: Precondition | undefined,
    forward: (inner: ObjectStore, stripPrecondition: boolean) => Promise<T>,
  ): Promise<T> {
    this.#counts[operation] += 1;
    const keys = typeof keyOrKeys === "string" ? [keyOrKeys] : keyOrKeys;
    const key = keys[0] ?? "";
    const steps = this.#fire(operation, keys, precondition);
    this.#log.push({ operation, key, precondition, faults: steps.map((s) => s.type) });

    let strip = false;
    for (const step of steps) {
      switch (step.type) {
        case "delay":
          await this.#sleep(step.ms);
          break;
        case "foreign-put":
          await this.inner.put(step.key ?? key, step.body, { precondition: step.precondition });
          break;
        case "before":
          await step.run(this.inner);
          break;
        case "strip-precondition":
          strip = true;
          break;
        case "apply-then-lose":
          await forward(this.inner, strip).catch(() => undefined);
          throw step.error ?? lostAnswer(operation, key, precondition, "after applying");
        case "lose-before-apply":
          throw step.error ?? lostAnswer(operation, key, precondition, "before applying");
        case "refuse":
          throw refusal(step.kind ?? "refused", operation, key, precondition);
        case "in-flight":
          throw holdfastError(
            "in-flight",
            operation,
            `scripted 409: a conditional write to ${key} is in flight`,
            { key, precondition, status: 409, code: "ConditionalRequestConflict" },
          );
        case "repeat":
          // A retrying SDK: the first copy reaches the store, its answer is dropped.
          await forward(this.inner, strip).catch(() => undefined);
          return forward(this.inner, strip);
        case "throw":
          throw step.error;
      }
    }
    return forward(this.inner, strip);
  }

  #fire(
    operation: RequestType,
    keys: readonly string[],
    precondition: Precondition | undefined,
  ): readonly Fault[] {
    let chosen: readonly Fault[] = [];
    for (const state of this.#rules) {
      if (!matches(state.rule, operation, keys, precondition)) continue;
      state.seen += 1;
      const nth = state.rule.nth ?? 1;
      const times = state.rule.times ?? 1;
      if (chosen.length > 0 || state.seen < nth || state.fired >= times) continue;
      state.fired += 1;
      chosen = Array.isArray(state.rule.fault)
        ? (state.rule.fault as readonly Fault[])
        : [state.rule.fault as Fault];
    }
    return chosen;
  }
}

// --- utils ---

function matches(
  match: FaultMatch,
  operation: RequestType,
  keys: readonly string[],
  precondition: Precondition | undefined,
): boolean {
  if (match.operation !== undefined && match.operation !== operation) return false;
  const wanted = match.precondition ?? "any";
  if (wanted !== "any") {
    const actual =
      precondition === undefined ? "none" : "ifNoneMatch" in precondition ? "create" : "if-match";
    if (actual !== wanted) return false;
  }
  const test = match.key;
  if (test === undefined) return true;
  return keys.some((k) =>
    typeof test === "string" ? k === test : test instanceof RegExp ? test.test(k) : test(k),
  );
}

function lostAnswer(
  operation: RequestType,
  key: string,
  precondition: Precondition | undefined,
  when: string,
): HoldfastError {
  return holdfastError("ambiguous", operation, `scripted connection reset ${when}: ${key}`, {
    key,
    precondition,
    code: "ECONNRESET",
  });
}

function refusal(
  kind: "refused" | "auth",
  operation: RequestType,
  key: string,
  precondition: Precondition | undefined,
): HoldfastError {
  return kind === "auth"
    ? holdfastError("auth", operation, `scripted 403 on ${key}`, {
        key,
        precondition,
        status: 403,
        code: "AccessDenied",
      })
    : holdfastError("refused", operation, `scripted refusal: bucket missing for ${key}`, {
        key,
        precondition,
        status: 404,
        code: "NoSuchBucket",
      });
}
