import {
  type DeleteManyResult,
  type DeleteOptions,
  type GetResult,
  holdfastError,
  type ListOptions,
  type ListPage,
  type ObjectMeta,
  type ObjectStore,
  type PutOptions,
  type PutResult,
} from "@holdfast/conditional-store";
import type { Scheduler } from "./scheduler.js";

/** Thrown inside an actor when the simulation crashes it at a request boundary. */
export class SimulatedCrash extends Error {
  override readonly name = "SimulatedCrash";
}

export interface FaultRates {
  /** Probability that a write applies and its answer is lost. */
  applyThenLose: number;
  /** Probability that a write is lost before applying. */
  loseBefore: number;
  /** Probability that the actor crashes at this request (before sending). */
  crash: number;
  /**
   * Probability that a write reaches the store twice (an intermediary retrying it at once):
   * both copies are sent to the store, and the actor gets the second copy's answer (a
   * create's or compare-and-swap's second copy conflicts with the first).
   */
  repeat: number;
}

/**
 * One actor's view of the shared store: each request waits for the scheduler, may crash
 * the actor, and writes may lose their answer (applied or not) at the configured rates.
 */
export class GatedStore implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: ObjectStore["capabilities"];
  crashed = false;
  requests = 0;
  /** Writes whose answer was lost so far (applied or not). */
  lostAnswers = 0;
  /** Writes that reached the store twice so far. */
  repeated = 0;

  constructor(
    private readonly inner: ObjectStore,
    private readonly scheduler: Scheduler,
    private readonly actor: string,
    private readonly faults: FaultRates,
    /** Called when a write is released and again once it applied (the simulation skips checks while nothing changed). */
    private readonly onWrite: () => void = () => {},
    /** Listings of this prefix come back empty (a planted fault; see `PlantedFault`). */
    private readonly hiddenPrefix?: string,
  ) {
    this.backend = inner.backend;
    this.location = inner.location;
    this.capabilities = inner.capabilities;
  }

  async #enter(label: string, key = ""): Promise<void> {
    if (this.crashed) throw new SimulatedCrash(`${this.actor} already crashed`);
    await this.scheduler.gate(this.actor, key ? `${label} ${key}` : label);
    this.requests += 1;
    if (this.scheduler.random() < this.faults.crash) {
      this.crashed = true;
      this.scheduler.trace?.(`  ${this.actor}: crashed`);
      throw new SimulatedCrash(`${this.actor} crashed before ${label}`);
    }
  }

  async #write<T>(label: string, key: string, send: () => Promise<T>): Promise<T> {
    await this.#enter(label, key);
    this.onWrite();
    const r = this.scheduler.random();
    if (r < this.faults.loseBefore) {
      this.lostAnswers += 1;
      this.scheduler.trace?.(`  ${this.actor}: lost before applying`);
      throw holdfastError("ambiguous", label, `simulated lost request (not applied) on ${key}`, {
        key,
      });
    }
    const lost = this.faults.loseBefore + this.faults.applyThenLose;
    if (r >= lost && r < lost + this.faults.repeat) {
      // The first copy applies and its answer is dropped on the way; the second is answered.
      this.repeated += 1;
      this.scheduler.trace?.(`  ${this.actor}: reached the store twice`);
      await send().catch(() => undefined);
      this.onWrite();
      const second = await send();
      this.onWrite();
      return second;
    }
    const result = await send();
    this.onWrite();
    if (r < lost) {
      this.lostAnswers += 1;
      this.scheduler.trace?.(`  ${this.actor}: applied, answer lost`);
      throw holdfastError("ambiguous", label, `simulated lost answer (applied) on ${key}`, { key });
    }
    return result;
  }

  async get(key: string): Promise<GetResult | null> {
    await this.#enter("get", key);
    return this.inner.get(key);
  }

  async head(key: string): Promise<ObjectMeta | null> {
    await this.#enter("head", key);
    return this.inner.head(key);
  }

  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    return this.#write("put", key, () => this.inner.put(key, body, options));
  }

  delete(key: string, options?: DeleteOptions): Promise<void> {
    return this.#write("delete", key, () => this.inner.delete(key, options));
  }

  deleteMany(keys: readonly string[]): Promise<DeleteManyResult> {
    return this.#write("deleteMany", keys[0] ?? "", () => this.inner.deleteMany(keys));
  }

  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    await this.#enter("list", prefix);
    if (this.hiddenPrefix !== undefined && prefix.startsWith(this.hiddenPrefix)) {
      return { objects: [] };
    }
    return this.inner.list(prefix, options);
  }
}
