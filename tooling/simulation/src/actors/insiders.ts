import { cleanup } from "@holdfast/cleanup";
import {
  type DeleteManyOptions,
  type DeleteManyResult,
  type DeleteOptions,
  type GetResult,
  isHoldfastError,
  type ListOptions,
  type ListPage,
  listAll,
  type ObjectMeta,
  type ObjectStore,
  type PutOptions,
  type PutResult,
} from "@holdfast/conditional-store";
import { initDataset } from "@holdfast/dataset";
import { acquireLease, releaseLease } from "@holdfast/leases";
import type { ProtocolContext } from "@holdfast/protocol";
import {
  FormatRegistry,
  holdfastFormatEntry,
  INSIDE_TABLE,
  refuseTableLocation,
} from "@holdfast/refs-lifecycle";
import { BRANCH, MIN_VERSION_AGE_MS, NEVER_BEATS, ORPHAN_GRACE_MS } from "../config.js";
import { rethrowIfCrashed, type SimulationWorld } from "../world.js";

/**
 * Folders inside the dataset a user might pass as if each were a dataset: its versions,
 * a branch's versions, its data, holdfast's own state, a branch's leases, its references.
 */
const INSIDE_PATHS: readonly (readonly string[])[] = [
  ["_versions"],
  ["_versions", BRANCH],
  ["data"],
  ["_holdfast"],
  ["_holdfast", "leases", BRANCH],
  ["_refs"],
];

/**
 * Insiders: each round picks a folder inside the dataset and tries to create a dataset
 * there (`holdfast init`), lease a version or run a cleanup through it, as the CLI and
 * Python open a URI: locate it among tables
 * (`FormatRegistry.locate`, the rule of conformance/table-root/), refuse what lies inside
 * a table, then open the dataset there and act. Every attempt must be refused
 * (`invalid-input` INSIDE_TABLE) before anything is written: a lease there would protect
 * nothing (the table's cleanup never looks there) and a cleanup there would clean a folder
 * of the table as if it were one. An accepted attempt, and any holdfast object written
 * below a folder of the dataset (a `_holdfast/` that is not the root's), is a violation.
 */
export function spawnInsiders(world: SimulationWorld): void {
  const { config, sched } = world;
  const registry = new FormatRegistry(holdfastFormatEntry);
  world.spawnEach("insider", config.insiders ?? 0, async (ctx, _i, name) => {
    for (let r = 0; r < config.rounds; r += 1) {
      await sched.sleep(sched.int(0, 3000));
      const inside = sched.pick(INSIDE_PATHS);
      const act = sched.pick(["init", "lease", "cleanup"] as const);
      const where = inside.join("/");
      try {
        const location = await registry.locate(inside, async (at) => prefixed(ctx.store, at));
        refuseTableLocation(location, (at) => at.join("/") || "(root)");
        const there: ProtocolContext = { ...ctx, store: prefixed(ctx.store, inside) };
        if (act === "init") {
          // What `holdfast init` does with the URI: a dataset of its own there would make
          // every later lease and cleanup through the folder look legitimate.
          await initDataset(there);
        } else {
          const { resolved } = await registry.open(there);
          if (act === "lease") {
            const lease = await acquireLease(there, {
              format: resolved.format,
              branch: BRANCH,
              version: sched.int(1, world.latestMain()),
              ttlMs: 20_000,
            });
            await releaseLease(there, lease).catch(() => undefined);
          } else {
            await cleanup(
              there,
              {
                retainVersions: 1,
                orphanGraceMs: ORPHAN_GRACE_MS,
                minVersionAgeMs: MIN_VERSION_AGE_MS,
              },
              { format: resolved.format, concurrent: true, heartbeatSleep: NEVER_BEATS },
            );
          }
        }
        world.violate(1, `${name}: a ${act} through ${where}/, inside the dataset, was accepted`);
      } catch (error) {
        rethrowIfCrashed(ctx, error);
        if (isHoldfastError(error, "invalid-input") && error.code === INSIDE_TABLE) {
          world.bump("insideRefused");
        } else {
          world.tolerate(ctx, error, "insideFailed", `${name} ${act} through ${where}/`);
        }
      }
      for await (const meta of listAll(world.memory, "")) {
        if (meta.key.indexOf("_holdfast/") > 0) {
          world.violate(1, `${meta.key}: holdfast wrote below a folder inside the dataset`);
          break;
        }
      }
    }
  });
}

/** A view of `inner` rooted at its folder `segments` (what a URI pointing there opens). */
function prefixed(inner: ObjectStore, segments: readonly string[]): ObjectStore {
  if (segments.length === 0) return inner;
  return new PrefixedStore(inner, `${segments.join("/")}/`);
}

class PrefixedStore implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: ObjectStore["capabilities"];
  readonly #inner: ObjectStore;
  readonly #prefix: string;

  constructor(inner: ObjectStore, prefix: string) {
    this.#inner = inner;
    this.#prefix = prefix;
    this.backend = inner.backend;
    this.location = `${inner.location}/${prefix}`;
    this.capabilities = inner.capabilities;
  }

  get(key: string, options?: { signal?: AbortSignal | undefined }): Promise<GetResult | null> {
    return this.#inner.get(this.#prefix + key, options).then((got) => got && this.#strip(got));
  }

  head(key: string, options?: { signal?: AbortSignal | undefined }): Promise<ObjectMeta | null> {
    return this.#inner.head(this.#prefix + key, options).then((m) => m && this.#strip(m));
  }

  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    return this.#inner.put(this.#prefix + key, body, options);
  }

  delete(key: string, options?: DeleteOptions): Promise<void> {
    return this.#inner.delete(this.#prefix + key, options);
  }

  async deleteMany(
    keys: readonly string[],
    options?: DeleteManyOptions,
  ): Promise<DeleteManyResult> {
    const result = await this.#inner.deleteMany(
      keys.map((k) => this.#prefix + k),
      options,
    );
    const n = this.#prefix.length;
    return {
      deleted: result.deleted.map((k) => k.slice(n)),
      failed: result.failed.map((f) => ({ ...f, key: f.key.slice(n) })),
    };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const page = await this.#inner.list(this.#prefix + prefix, {
      ...options,
      ...(options.startAfter === undefined
        ? {}
        : { startAfter: this.#prefix + options.startAfter }),
    });
    return { ...page, objects: page.objects.map((m) => this.#strip(m)) };
  }

  #strip<T extends { key: string }>(meta: T): T {
    return { ...meta, key: meta.key.slice(this.#prefix.length) };
  }
}
