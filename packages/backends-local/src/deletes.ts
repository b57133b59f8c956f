import { rmdir } from "node:fs/promises";
import { dirname, sep } from "node:path";
import type { DeleteManyResult } from "@holdfast/conditional-store";
import pMap from "p-map";
import type { LocalDisk } from "./disk.js";
import { toHoldfastError } from "./errors.js";
import { unlinkObject } from "./files.js";
import type { KeyPaths } from "./layout.js";
import { lockPathOf, withKeyLock } from "./locks.js";

// Deletes, one key or a batch: every unlink under the key's lock, each folder synced once
// after its unlinks, and the folders the deletes emptied removed.

const DELETE_CONCURRENCY = 8;

/** A key of a batch delete, with its paths (checked before anything is deleted). */
export interface DeleteTarget {
  readonly key: string;
  readonly paths: KeyPaths;
}

/**
 * Deletes one key: unlinks its object under its lock, syncs the folder it was unlinked
 * from, and removes the folders that left empty. Unconditional deletes take the lock too:
 * a compare-and-swap that compared before the unlink renames after it, and would
 * resurrect the key (R3; test "R3 delete honours the lock of a compare-and-swap that has
 * compared"). The lock costs one open, two fcntl and one close on a permanent lock file.
 * A delete that need not be durable (`durable: false`) skips the folder sync: a power loss
 * may bring the object back, as if the delete had not been made.
 */
export async function deleteOne(
  disk: LocalDisk,
  key: string,
  paths: KeyPaths,
  precondition: { ifMatch: string } | undefined,
  signal: AbortSignal | undefined,
  durable = true,
): Promise<void> {
  const folder = await disk.withLock(key, "delete", precondition, signal, () =>
    unlinkObject(key, paths, precondition),
  );
  if (folder === null) return;
  if (durable) await disk.syncDir(folder, "delete", key, precondition);
  await removeEmptyDirs(disk.root, [folder]);
}

/**
 * Deletes a batch of keys. Keys that share a lock file are unlinked in one critical
 * section: one open, two fcntl and one close per lock file the batch touches (at most
 * LOCK_STRIPES), not per key. The lock is what keeps a compare-and-swap of the key in
 * another process (or store) from renaming its object back after the unlink (R3; test
 * "R3 deleteMany honours the lock of a compare-and-swap that has compared"). Then one
 * directory sync per folder for the whole batch, after all its unlinks: a key is reported
 * deleted only once its removal is durable.
 *
 * `createOnly` (the caller's statement that no key of the batch is ever compare-and-swapped
 * or deleted by if-match: data files and manifests, docs/protocol.md §1) unlinks without the
 * locks: they exclude only a compare-and-swap that has compared (R3), and an unconditional
 * put or delete racing an unlink is one atomic rename or unlink either way. On a dataset
 * holdfast never wrote, the locks' first use would create a lock file for nearly every
 * stripe a batch touches (up to LOCK_STRIPES inode creations, the largest fixed cost of a
 * small cleanup there); the folder syncs are the same.
 */
export async function deleteBatch(
  disk: LocalDisk,
  targets: readonly DeleteTarget[],
  signal: AbortSignal | undefined,
  createOnly = false,
): Promise<DeleteManyResult> {
  const deleted: string[] = [];
  const failed: DeleteManyResult["failed"] = [];
  const unlinkedIn = new Map<string, string[]>(); // folder → keys unlinked from it
  const unlink = async ({ key, paths }: DeleteTarget) => {
    try {
      const folder = await unlinkObject(key, paths, undefined);
      if (folder === null) deleted.push(key);
      else {
        // Appended in place: copying the folder's list for every key was quadratic in a
        // batch of 1,000 keys of one folder (500,000 copies, a new array per key).
        const keys = unlinkedIn.get(folder);
        if (keys) keys.push(key);
        else unlinkedIn.set(folder, [key]);
      }
    } catch (error) {
      failed.push({ key, error: toHoldfastError(error, "deleteMany", key) });
    }
  };
  if (createOnly) {
    await pMap(targets, unlink, { concurrency: DELETE_CONCURRENCY });
  } else {
    const byLock = new Map<string, DeleteTarget[]>();
    for (const target of targets) {
      const lockPath = lockPathOf(disk.root, target.key);
      const group = byLock.get(lockPath);
      if (group) group.push(target);
      else byLock.set(lockPath, [target]);
    }
    await pMap(
      byLock,
      async ([lockPath, group]) => {
        let done = 0;
        try {
          await withKeyLock(
            lockPath,
            disk.lockRequest(group[0]!.key, "deleteMany", signal),
            async () => {
              for (const target of group) {
                await unlink(target);
                done += 1;
              }
            },
          );
        } catch (error) {
          // The lock was not had (timeout, abort): the keys not yet tried are not deleted.
          for (const { key } of group.slice(done)) {
            failed.push({ key, error: toHoldfastError(error, "deleteMany", key) });
          }
        }
      },
      { concurrency: DELETE_CONCURRENCY },
    );
  }
  await pMap(
    unlinkedIn,
    async ([folder, folderKeys]) => {
      try {
        await disk.syncDir(folder, "deleteMany", folderKeys[0]!, undefined, folderKeys);
        deleted.push(...folderKeys);
      } catch (error) {
        for (const key of folderKeys) {
          failed.push({ key, error: toHoldfastError(error, "deleteMany", key) });
        }
      }
    },
    { concurrency: DELETE_CONCURRENCY },
  );
  await removeEmptyDirs(disk.root, [...unlinkedIn.keys()]);
  return { deleted, failed };
}

/**
 * Removes the given folders and their ancestors below the root while they are empty,
 * deepest first, trying each folder once. rmdir(2) refuses a non-empty folder
 * atomically, so this never removes anything another writer put there; a writer whose
 * folder vanished meanwhile makes it again (ENOENT → mkdir). Best effort: a folder
 * that stays (or comes back after a crash) is empty and harmless.
 */
async function removeEmptyDirs(root: string, folders: readonly string[]): Promise<void> {
  const candidates = new Set<string>();
  for (const folder of folders) {
    for (let dir = folder; dir.startsWith(`${root}${sep}`); dir = dirname(dir)) {
      candidates.add(dir);
    }
  }
  const kept = new Set<string>();
  for (const dir of [...candidates].sort((a, b) => b.length - a.length)) {
    if (kept.has(dir)) continue;
    try {
      await rmdir(dir);
    } catch {
      // Not empty (or gone): neither are its ancestors worth trying.
      for (let up = dirname(dir); candidates.has(up) && !kept.has(up); up = dirname(up)) {
        kept.add(up);
      }
    }
  }
}
