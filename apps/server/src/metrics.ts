import type {
  DeleteManyResult,
  DeleteOptions,
  GetResult,
  ListOptions,
  ListPage,
  ObjectMeta,
  ObjectStore,
  PutOptions,
  PutResult,
  StoreCapabilities,
} from "@holdfast/conditional-store";
import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** The server's Prometheus metrics, on a registry of its own (several servers can share a process). */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: "holdfast_http_requests_total",
    help: "HTTP requests answered, by route pattern, method and status",
    labelNames: ["route", "method", "status"] as const,
    registers: [this.registry],
  });
  readonly storeRequests = new Counter({
    name: "holdfast_store_requests_total",
    help: "Requests sent to the object store, by dataset and type (get, head, put, delete, deleteMany, list)",
    labelNames: ["dataset", "type"] as const,
    registers: [this.registry],
  });
  readonly reissues = new Counter({
    name: "holdfast_store_reissues_total",
    help: "Conditional puts re-sent unchanged after an answer was lost",
    labelNames: ["dataset"] as const,
    registers: [this.registry],
  });
  readonly unresolved = new Counter({
    name: "holdfast_unresolved_outcomes_total",
    help: "Operations whose outcome stayed unknown (answered 502 kind unresolved; run recover)",
    labelNames: ["dataset", "route"] as const,
    registers: [this.registry],
  });
  readonly activeLeases = new Gauge({
    name: "holdfast_active_leases",
    help: "Active leases per dataset, judged in storage time at the last refresh",
    labelNames: ["dataset"] as const,
    registers: [this.registry],
  });
  readonly cleanupDuration = new Histogram({
    name: "holdfast_cleanup_duration_seconds",
    help: "Duration of cleanup and recovery runs, by dataset, kind and outcome",
    labelNames: ["dataset", "kind", "outcome"] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 1800],
    registers: [this.registry],
  });
  readonly objectsDeleted = new Counter({
    name: "holdfast_objects_deleted_total",
    help: "Objects deleted by cleanup and recovery, by dataset and kind",
    labelNames: ["dataset", "kind"] as const,
    registers: [this.registry],
  });
  readonly jobObjectsLeft = new Gauge({
    name: "holdfast_cleanup_job_objects_left",
    help: "Objects a running cleanup job has left to delete in its delete phase (the series ends with the job)",
    labelNames: ["dataset", "job"] as const,
    registers: [this.registry],
  });
  readonly jobEta = new Gauge({
    name: "holdfast_cleanup_job_eta_seconds",
    help: "Estimated seconds until a running cleanup job's current phase ends, when known (the series ends with the job)",
    labelNames: ["dataset", "job", "phase"] as const,
    registers: [this.registry],
  });
  readonly jobObjectsDeleted = new Counter({
    name: "holdfast_cleanup_job_objects_deleted_total",
    help: "Objects a running cleanup job deleted so far, by phase (delete, orphans; the series ends with the job)",
    labelNames: ["dataset", "job", "phase"] as const,
    registers: [this.registry],
  });

  /** The per-job progress series of one job: updated from its progress, removed when it ends. */
  jobProgress(dataset: string, job: string): JobProgressMeter {
    let phase: string | undefined;
    let counted = 0;
    const phases = new Set<string>();
    return {
      update: (e) => {
        if (e.phase !== phase) {
          if (phase) this.jobEta.remove({ dataset, job, phase });
          phase = e.phase;
          counted = 0;
        }
        if (e.phase === "delete" || e.phase === "orphans") {
          phases.add(e.phase);
          // From the phase's first event on (0 at first), so the series exists before a delete.
          this.jobObjectsDeleted.inc(
            { dataset, job, phase: e.phase },
            Math.max(0, e.done - counted),
          );
          counted = Math.max(counted, e.done);
        }
        if (e.phase === "delete" && e.left !== undefined) {
          this.jobObjectsLeft.set({ dataset, job }, e.left);
        }
        if (e.etaMs !== undefined)
          this.jobEta.set({ dataset, job, phase: e.phase }, e.etaMs / 1000);
      },
      end: () => {
        this.jobObjectsLeft.remove({ dataset, job });
        if (phase) this.jobEta.remove({ dataset, job, phase });
        for (const p of phases) this.jobObjectsDeleted.remove({ dataset, job, phase: p });
      },
    };
  }
}

/** Feeds one job's progress into the per-job series (see {@link ServerMetrics.jobProgress}). */
export interface JobProgressMeter {
  update(estimate: {
    phase: string;
    done: number;
    left: number | undefined;
    etaMs: number | undefined;
  }): void;
  end(): void;
}

/**
 * Forwards every request to `inner` unchanged and counts it in the server's metrics: by
 * type, and re-issues (a conditional put repeating the previous failed put to the same key
 * byte for byte, which is what the resolver sends after a lost answer). Adds no behaviour.
 */
export class MeteredStore implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: StoreCapabilities;
  readonly #failedPuts = new Map<string, Uint8Array>();

  constructor(
    readonly inner: ObjectStore,
    private readonly metrics: ServerMetrics,
    private readonly dataset: string,
  ) {
    this.backend = inner.backend;
    this.location = inner.location;
    this.capabilities = inner.capabilities;
  }

  get(key: string, options?: { signal?: AbortSignal | undefined }): Promise<GetResult | null> {
    this.#count("get");
    return this.inner.get(key, options);
  }

  head(key: string, options?: { signal?: AbortSignal | undefined }): Promise<ObjectMeta | null> {
    this.#count("head");
    return this.inner.head(key, options);
  }

  async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    this.#count("put");
    const previous = this.#failedPuts.get(key);
    if (
      previous !== undefined &&
      options?.precondition !== undefined &&
      sameBytes(previous, body)
    ) {
      this.metrics.reissues.inc({ dataset: this.dataset });
    }
    try {
      const result = await this.inner.put(key, body, options);
      this.#failedPuts.delete(key);
      return result;
    } catch (error) {
      if (options?.precondition !== undefined) {
        // Bounded: only the keys whose last conditional put failed are remembered.
        if (this.#failedPuts.size > 1000) this.#failedPuts.clear();
        this.#failedPuts.set(key, body);
      }
      throw error;
    }
  }

  delete(key: string, options?: DeleteOptions): Promise<void> {
    this.#count("delete");
    return this.inner.delete(key, options);
  }

  deleteMany(
    keys: readonly string[],
    options?: { signal?: AbortSignal | undefined },
  ): Promise<DeleteManyResult> {
    this.#count("deleteMany");
    return this.inner.deleteMany(keys, options);
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    this.#count("list");
    return this.inner.list(prefix, options);
  }

  #count(type: string): void {
    this.metrics.storeRequests.inc({ dataset: this.dataset, type });
  }
}

// --- utils ---

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a).equals(Buffer.from(b));
}
