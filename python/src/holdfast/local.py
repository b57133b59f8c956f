"""A store on a local file system, byte-compatible with ``@holdfast/backends-local``.

The same layout (docs/protocol.md §1.2): each key is the plain file
``<root>/<key>`` holding exactly the object's bytes; a key that is also the folder of other
keys keeps its object in ``<key>/.holdfast-self``; temp and lock files live under
``_holdfast/.local/`` (``tmp/``, ``locks/``), which listings never show. The same ETag
(``<inode>-<size>-<mtime ns>``, each in base 36) and Last-Modified (the mtime, set by the
put to its clock reading plus a random 1..999 µs). The same locks: 256 permanent lock files
``_holdfast/.local/locks/<first byte of SHA-256(key) in hex>.lock``, locked exclusively with
``fcntl(F_OFD_SETLK)`` on Linux (what ``fs-native-extensions`` takes; a BSD ``flock`` would
not exclude it there) and ``flock`` on macOS (what it takes there).

Create-only is ``link(2)`` of a synced temp file onto the key's path (``EEXIST`` is atomic
across processes); compare-and-swap, unconditional puts and deletes take the key's lock,
compare the ETag under it, then ``rename(2)`` (or ``unlink(2)``), so a compare-and-swap
never resurrects a concurrent delete (R3).
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import secrets
import stat
import struct
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .context import Clock, system_clock
from .errors import HoldfastError
from .store import (
    Capabilities,
    GetResult,
    IfAbsent,
    IfMatch,
    ListPage,
    ObjectMeta,
    Precondition,
    check_abort,
    validate_key,
    validate_prefix,
)

LOCAL_BACKEND = "local"
LOCAL_INTERNAL_PREFIX = "_holdfast/.local/"
LOCAL_SELF_NAME = ".holdfast-self"
LOCAL_OLD_SUFFIX = ".hfobj"
OLD_LOCK_DIR = ".holdfast-locks"
LOCK_STRIPES = 256
MAX_NAME_BYTES = 255
MAX_PATH_RETRIES = 64


@dataclass(frozen=True)
class _Paths:
    path: str
    self_path: str
    segments: tuple[str, ...]


@dataclass(frozen=True)
class _Located:
    file: str
    stats: os.stat_result


def etag_of(stats: os.stat_result) -> str:
    """``<inode>-<size>-<mtime ns>`` in base 36: the local backend's ETag. It changes on every
    holdfast write, identical bytes included: a write never changes a file in place, and the
    temp file it fills is created while the file it replaces still exists."""
    return f"{_base36(stats.st_ino)}-{_base36(stats.st_size)}-{_base36(stats.st_mtime_ns)}"


class LocalStore:
    """A holdfast store over a directory (see the module documentation)."""

    backend = LOCAL_BACKEND

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        fsync: bool = True,
        create_root: bool = True,
        clock: Clock = system_clock,
        timestamp_precision_ms: int = 1,
        page_size: int = 1000,
        lock_timeout_ms: int = 30_000,
    ) -> None:
        """``fsync``: sync each written file before it becomes visible and its folder after
        (default on); ``clock`` stamps Last-Modified; ``timestamp_precision_ms``: the precision
        Last-Modified is reported at (raise it on file systems with coarse mtimes);
        ``lock_timeout_ms``: how long a write waits for another writer's key lock before it is
        refused (nothing written)."""
        if not os.fspath(root):
            raise HoldfastError("invalid-input", "open", "local store needs a root directory")
        for name, value in (
            ("timestamp_precision_ms", timestamp_precision_ms),
            ("page_size", page_size),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise HoldfastError(
                    "invalid-input", "open", f"{name} must be a positive integer, got {value!r}"
                )
        self.root = os.path.abspath(os.fspath(root))
        self.location = f"file://{self.root}"
        self.capabilities = Capabilities(
            atomic_conditional_update=True,
            atomic_conditional_delete=True,
            timestamp_precision_ms=timestamp_precision_ms,
            request_mode="completes-before-answer",
            etag_is_content_hash=False,
        )
        self._fsync = fsync
        self._create_root = create_root
        self._clock = clock
        self._page_size = page_size
        self._lock_timeout_ms = lock_timeout_ms
        self._tmp_dir = os.path.join(self.root, *LOCAL_INTERNAL_PREFIX.strip("/").split("/"), "tmp")
        self._locks_dir = os.path.join(
            self.root, *LOCAL_INTERNAL_PREFIX.strip("/").split("/"), "locks"
        )
        self._ready = False

    # --- the contract ---

    def get(self, key: str, *, abort: threading.Event | None = None) -> GetResult | None:
        paths = self._paths(key, "get")
        check_abort(abort, "get", key)
        self._ensure_root("get")
        try:
            for file in (paths.path, paths.self_path):
                try:
                    fd = os.open(file, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                except (FileNotFoundError, NotADirectoryError):
                    return None
                try:
                    stats = os.fstat(fd)
                    if stat.S_ISREG(stats.st_mode):
                        body = _read_exactly(fd, stats.st_size)
                        return GetResult(key, etag_of(stats), self._lm(stats), len(body), body)
                    if not stat.S_ISDIR(stats.st_mode):
                        return None
                finally:
                    os.close(fd)
            return None
        except OSError as error:
            raise _to_error(error, "get", key) from error

    def head(self, key: str, *, abort: threading.Event | None = None) -> ObjectMeta | None:
        paths = self._paths(key, "head")
        check_abort(abort, "head", key)
        self._ensure_root("head")
        try:
            found = _locate(paths)
        except OSError as error:
            raise _to_error(error, "head", key) from error
        return None if found is None else self._meta(key, found.stats)

    def put(
        self,
        key: str,
        body: bytes,
        *,
        precondition: Precondition | None = None,
        abort: threading.Event | None = None,
    ) -> str:
        paths = self._paths(key, "put")
        check_abort(abort, "put", key)
        if not isinstance(body, bytes | bytearray | memoryview):
            raise HoldfastError("invalid-input", "put", f"body of {key} is not bytes", key=key)
        if precondition is not None and not (
            isinstance(precondition, IfAbsent)
            or (
                isinstance(precondition, IfMatch)
                and isinstance(precondition.etag, str)
                and precondition.etag
            )
        ):
            raise HoldfastError("invalid-input", "put", f"malformed precondition on {key}", key=key)
        self._ensure_root("put", precondition)
        temp, etag = self._write_temp(bytes(body), key, precondition)
        consumed = False
        try:
            if isinstance(precondition, IfAbsent):
                self._link_if_absent(temp, paths, key, precondition)
                return etag
            etag = self._replace_locked(temp, paths, key, precondition, abort)
            consumed = True  # renamed into place: the temp name is gone
            return etag
        except OSError as error:
            raise _to_error(error, "put", key, precondition) from error
        finally:
            # After link the temp name is a second link to the object; drop it.
            if not consumed:
                _unlink_quietly(temp)

    def delete(
        self, key: str, *, if_match: str | None = None, abort: threading.Event | None = None
    ) -> None:
        paths = self._paths(key, "delete")
        precondition = None if if_match is None else IfMatch(if_match)
        check_abort(abort, "delete", key)
        self._ensure_root("delete", precondition)
        try:
            # Unconditional deletes take the lock too: a compare-and-swap that compared just
            # before the unlink would rename just after it and resurrect the key (R3).
            with self._key_lock(key, "delete", precondition, abort):
                folder = self._unlink_object(key, paths, precondition)
            if folder is None:
                return
            self._sync_dir(folder, "delete", key, precondition)
            self._remove_empty_dirs(folder)
        except OSError as error:
            raise _to_error(error, "delete", key, precondition) from error

    def list(
        self,
        prefix: str,
        *,
        start_after: str | None = None,
        page_token: str | None = None,
        page_size: int | None = None,
        abort: threading.Event | None = None,
    ) -> ListPage:
        validate_prefix(prefix, "list")
        check_abort(abort, "list")
        self._ensure_root("list")
        limit = max(1, min(page_size or self._page_size, self._page_size))
        after = start_after or ""
        if page_token is not None:
            from_token = _decode_token(page_token)
            if from_token.encode("utf-8") > after.encode("utf-8"):
                after = from_token
        try:
            found = sorted(self._walk(prefix, after), key=lambda item: item[0].encode("utf-8"))
        except OSError as error:
            raise _to_error(error, "list", None) from error
        after_bytes = after.encode("utf-8")
        candidates = [item for item in found if not after or item[0].encode("utf-8") > after_bytes]
        page = candidates[:limit]
        objects: list[ObjectMeta] = []
        for listed_key, file in page:
            try:
                stats = os.stat(file)
            except (FileNotFoundError, NotADirectoryError):
                continue  # deleted since the folder was read: not listed
            if stat.S_ISREG(stats.st_mode):
                objects.append(self._meta(listed_key, stats))
        if len(candidates) > limit:
            return ListPage(objects, _encode_token(page[-1][0]))
        return ListPage(objects)

    # --- writes ---

    def _write_temp(
        self, body: bytes, key: str, precondition: Precondition | None
    ) -> tuple[str, str]:
        """Writes the body to a fresh temp file, stamps its mtime with the clock reading (plus
        a random 1..999 µs that stays inside the millisecond) and syncs it. Its stat is the
        object's ETag: linking or renaming it into place keeps inode, size and mtime."""
        temp = os.path.join(self._tmp_dir, f"{secrets.token_hex(12)}.tmp")
        try:
            try:
                fd = os.open(
                    temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666
                )
            except FileNotFoundError:
                os.makedirs(self._tmp_dir, exist_ok=True)
                fd = os.open(
                    temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666
                )
            try:
                view = memoryview(body)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                stamp_ns = int(self._clock()) * 1_000_000 + secrets.randbelow(999) * 1000 + 1000
                os.utime(fd, ns=(stamp_ns, stamp_ns))
                if self._fsync:
                    os.fsync(fd)
                return temp, etag_of(os.fstat(fd))
            finally:
                os.close(fd)
        except OSError as error:
            _unlink_quietly(temp)
            raise _to_error(error, "put", key, precondition) from error

    def _link_if_absent(
        self, temp: str, paths: _Paths, key: str, precondition: Precondition
    ) -> None:
        target = paths.path
        for _attempt in range(MAX_PATH_RETRIES + 1):
            try:
                os.link(temp, target)
            except (FileNotFoundError, NotADirectoryError):
                if target == paths.self_path:
                    target = paths.path  # the directory vanished: start over at the plain path
                else:
                    self._make_parents(paths, key, "put", precondition)
                continue
            except FileExistsError:
                if target == paths.self_path:
                    raise _conflict("put", key, precondition) from None
                existing = _lstat(paths.path)
                if existing is not None and stat.S_ISDIR(existing.st_mode):
                    target = paths.self_path
                elif existing is not None:
                    raise _conflict("put", key, precondition) from None
                continue
            self._sync_dir(os.path.dirname(target), "put", key, precondition)
            return
        raise _path_race("put", key, precondition)

    def _replace_locked(
        self,
        temp: str,
        paths: _Paths,
        key: str,
        precondition: Precondition | None,
        abort: threading.Event | None,
    ) -> str:
        if_match = precondition if isinstance(precondition, IfMatch) else None
        for _attempt in range(MAX_PATH_RETRIES + 1):
            with self._key_lock(key, "put", precondition, abort):
                outcome = self._replace(temp, paths, key, if_match)
            if outcome is not None:
                return outcome
            # Folders are made outside the key's lock: making one may take another key's
            # lock (a file that becomes a folder), and two keys may share a lock file.
            self._make_parents(paths, key, "put", precondition)
        raise _path_race("put", key, precondition)

    def _replace(self, temp: str, paths: _Paths, key: str, if_match: IfMatch | None) -> str | None:
        """Under the key's lock: rename the temp into place; ``None`` when folders are missing."""
        current = _locate(paths)
        # Under the lock every write of this key sees the one before it: stamping strictly
        # later keeps the key's ETags strictly increasing, so an ETag the key had earlier never
        # comes back even when a freed inode number is reused within one millisecond (R9).
        etag = _stamp_after(temp, None if current is None else current.stats)
        target = paths.path
        if if_match is not None:
            target = _require_match(current, key, "put", if_match).file
        for attempt in range(MAX_PATH_RETRIES + 1):
            if if_match is not None and attempt > 0:
                break
            try:
                os.rename(temp, target)
            except OSError as error:
                missing = error.errno in (errno.ENOENT, errno.ENOTDIR)
                if if_match is not None:
                    raise
                if target == paths.self_path:
                    if not missing:
                        raise
                    target = paths.path
                elif missing:
                    return None
                elif error.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                    target = paths.self_path
                else:
                    raise
                continue
            self._sync_dir(os.path.dirname(target), "put", key, if_match)
            return etag
        raise _path_race("put", key, if_match)

    def _make_parents(
        self, paths: _Paths, key: str, operation: str, precondition: Precondition | None
    ) -> None:
        """Makes the key's folders. Where an ancestor path is a file (an object whose key is a
        prefix of this one), that object becomes a folder holding it as its self file, by one
        atomic ``renameat2(RENAME_EXCHANGE)`` under the ancestor key's lock."""
        folder = os.path.dirname(paths.path)
        missing: list[str] = []
        probe = folder
        while True:
            info = _lstat(probe)
            if info is not None:
                break
            missing.append(probe)
            probe = os.path.dirname(probe)
        if info is not None and stat.S_ISDIR(info.st_mode):
            for created in reversed(missing):
                try:
                    os.mkdir(created)
                except FileExistsError:
                    continue
                except (FileNotFoundError, NotADirectoryError):
                    return  # a folder on the way was removed meanwhile: the caller tries again
                self._sync_dir(os.path.dirname(created), operation, key, precondition)
            return
        for depth in range(1, len(paths.segments)):
            ancestor_key = "/".join(paths.segments[:depth])
            ancestor = os.path.join(self.root, *paths.segments[:depth])
            found = _lstat(ancestor)
            if found is None:
                return  # removed meanwhile: the caller tries again
            if stat.S_ISDIR(found.st_mode):
                continue
            if not stat.S_ISREG(found.st_mode):
                raise HoldfastError(
                    "refused",
                    operation,
                    f"{ancestor} is neither a file nor a folder",
                    key=key,
                    code="ENOTDIR",
                )
            self._file_to_directory(ancestor_key, ancestor, operation, precondition)
            return

    def _file_to_directory(
        self, ancestor_key: str, path: str, operation: str, precondition: Precondition | None
    ) -> None:
        with self._key_lock(ancestor_key, operation, precondition, None):
            info = _lstat(path)
            if info is None or not stat.S_ISREG(info.st_mode):
                return
            os.makedirs(self._tmp_dir, exist_ok=True)
            staged = os.path.join(self._tmp_dir, f"{secrets.token_hex(12)}.dir")
            os.mkdir(staged)
            try:
                os.link(path, os.path.join(staged, LOCAL_SELF_NAME))
                _exchange(path, staged)
            finally:
                # After the exchange `staged` names the old file (still linked as the self file).
                _remove_tree(staged)
            self._sync_dir(os.path.dirname(path), operation, ancestor_key, precondition)
            self._sync_dir(path, operation, ancestor_key, precondition)

    # --- deletes ---

    def _unlink_object(self, key: str, paths: _Paths, precondition: IfMatch | None) -> str | None:
        """Unlinks the key's object (under its lock); answers the folder it left (or None)."""
        if precondition is not None:
            current = _require_match(_locate(paths), key, "delete", precondition)
            return os.path.dirname(current.file) if _unlink_file(current.file) else None
        try:
            return os.path.dirname(paths.path) if _unlink_file(paths.path) else None
        except OSError as error:
            if error.errno not in (errno.EISDIR, errno.EPERM):
                raise
            info = _lstat(paths.path)
            if info is None or not stat.S_ISDIR(info.st_mode):
                raise
            return paths.path if _unlink_file(paths.self_path) else None

    def _remove_empty_dirs(self, folder: str) -> None:
        """Removes the folder and its ancestors below the root while they are empty (rmdir(2)
        refuses a non-empty folder atomically, so this never removes another writer's entry)."""
        current = folder
        while current.startswith(self.root + os.sep):
            try:
                os.rmdir(current)
            except OSError:
                return
            current = os.path.dirname(current)

    # --- locks and durability ---

    @contextmanager
    def _key_lock(
        self,
        key: str,
        operation: str,
        precondition: Precondition | None,
        abort: threading.Event | None,
    ) -> Iterator[None]:
        """Holds the key's lock: this process's turn for the lock file, then an exclusive
        OS-level lock on it, which other processes (Node included) respect and the kernel
        releases if the holder dies. The body must not take another key's lock."""
        lock_path = self._lock_path(key)
        with _process_lock(lock_path):
            fd = self._open_lock_file(lock_path)
            try:
                deadline = time.monotonic() + self._lock_timeout_ms / 1000.0
                pause = 0.001
                while not _try_lock(fd):
                    if abort is not None and abort.is_set():
                        raise HoldfastError(
                            "aborted",
                            operation,
                            f"{operation} aborted",
                            key=key,
                            precondition=precondition,
                        )
                    if time.monotonic() > deadline:
                        raise HoldfastError(
                            "refused",
                            operation,
                            f"timed out waiting for the lock on {key}",
                            key=key,
                            precondition=precondition,
                            code="ELOCKTIMEOUT",
                            hint="another process holds this key's lock; nothing was written",
                        )
                    time.sleep(pause + secrets.randbelow(1000) / 1000 * pause)
                    pause = min(pause * 2, 0.02)
                try:
                    yield
                finally:
                    _unlock(fd)
            finally:
                os.close(fd)

    def _lock_path(self, key: str) -> str:
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
        return os.path.join(self._locks_dir, f"{digest[:2]}.lock")

    def _open_lock_file(self, lock_path: str) -> int:
        cloexec = getattr(os, "O_CLOEXEC", 0)
        try:
            return os.open(lock_path, os.O_RDWR | cloexec)
        except FileNotFoundError:
            pass
        try:
            return os.open(lock_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | cloexec, 0o666)
        except FileNotFoundError:
            os.makedirs(self._locks_dir, exist_ok=True)  # first lock of this store
            return os.open(lock_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | cloexec, 0o666)

    def _sync_dir(
        self, folder: str, operation: str, key: str, precondition: Precondition | None
    ) -> None:
        if not self._fsync:
            return
        current = folder
        while True:
            try:
                fd = os.open(current, os.O_RDONLY)
                break
            except FileNotFoundError as error:
                # A concurrent delete removed the folder: its removal is what must be durable.
                if current == self.root:
                    raise _to_error(error, operation, key, precondition) from error
                current = os.path.dirname(current)
        try:
            os.fsync(fd)
        except OSError as error:
            raise HoldfastError(
                "ambiguous",
                operation,
                f"could not sync directory of {key}",
                key=key,
                precondition=precondition,
                code=errno.errorcode.get(error.errno or 0),
                cause=error,
            ) from error
        finally:
            os.close(fd)

    # --- reading helpers ---

    def _walk(self, prefix: str, after: str) -> Iterator[tuple[str, str]]:
        """Every object (key, file) in the range (keys starting with ``prefix``, after
        ``after``), in no particular order. An entry in the range that maps to no key (a
        ``.hfobj`` name, a self-file name no key can own, a symlink or socket, a backslash or
        control character) stops the listing, as the TypeScript backend's does: a census must
        never decide without it (invariant 8)."""
        base = prefix.rsplit("/", 1)[0] + "/" if "/" in prefix else ""
        start = os.path.join(self.root, *base.strip("/").split("/")) if base else self.root
        stack = [(start, base)]
        while stack:
            folder, key_prefix = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for entry in entries:
                key = f"{key_prefix}{entry.name}"
                if (
                    entry.name == LOCAL_SELF_NAME
                    and key_prefix
                    and entry.is_file(follow_symlinks=False)
                ):
                    own = key_prefix[:-1]
                    if _before(own, prefix, after):
                        yield own, entry.path
                elif entry.is_dir(follow_symlinks=False):
                    sub = f"{key}/"
                    if sub == LOCAL_INTERNAL_PREFIX:
                        continue
                    if not _is_local_key(key):
                        if _reaches(sub, prefix, after):
                            raise _unmappable(key, "a folder whose name")
                        continue
                    if _reaches(sub, prefix, after):
                        stack.append((entry.path, sub))
                elif _before(key, prefix, after):
                    if not entry.is_file(follow_symlinks=False):
                        raise _unmappable(key, "an entry that is no regular file or folder, which")
                    if not _is_local_key(key):
                        raise _unmappable(key, "a file whose name")
                    yield key, entry.path

    def _paths(self, key: str, operation: str) -> _Paths:
        segments = _check_local_key(key, operation)
        path = os.path.join(self.root, *segments)
        return _Paths(path, os.path.join(path, LOCAL_SELF_NAME), tuple(segments))

    def _ensure_root(self, operation: str, precondition: Precondition | None = None) -> None:
        if self._ready:
            return
        try:
            if self._create_root:
                os.makedirs(self.root, exist_ok=True)
            if not os.path.isdir(self.root):
                raise HoldfastError(
                    "refused", "open", f"{self.root} is not a directory", code="ENOTDIR"
                )
            _assert_not_old_layout(self.root)
        except OSError as error:
            raise _to_error(error, operation, None, precondition) from error
        self._ready = True

    def _meta(self, key: str, stats: os.stat_result) -> ObjectMeta:
        return ObjectMeta(key, etag_of(stats), self._lm(stats), stats.st_size)

    def _lm(self, stats: os.stat_result) -> int:
        ms = stats.st_mtime_ns // 1_000_000
        precision = self.capabilities.timestamp_precision_ms
        return ms // precision * precision


# --- utils ---


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if value == 0:
        return "0"
    out = []
    while value:
        value, rest = divmod(value, 36)
        out.append(digits[rest])
    return "".join(reversed(out))


def _check_local_key(key: str, operation: str) -> list[str]:
    validate_key(key, operation)
    segments = key.split("/")

    def refuse(why: str, hint: str | None = None) -> HoldfastError:
        return HoldfastError(
            "invalid-input",
            operation,
            f"key {key!r} {why}",
            key=key,
            code="INVALID_LOCAL_KEY",
            hint=hint,
        )

    if key.startswith(LOCAL_INTERNAL_PREFIX) or f"{key}/" == LOCAL_INTERNAL_PREFIX:
        raise refuse(
            f"lies under {LOCAL_INTERNAL_PREFIX}", "that folder is the local backend's own"
        )
    for segment in segments:
        if len(segment.encode("utf-8")) > MAX_NAME_BYTES:
            raise refuse(
                "has a path segment too long for a file name",
                f"each segment must fit in {MAX_NAME_BYTES} bytes",
            )
        if segment == LOCAL_SELF_NAME:
            raise refuse(f"has a segment named {LOCAL_SELF_NAME}")
        if segment.endswith(LOCAL_OLD_SUFFIX):
            raise refuse(f"has a segment ending in {LOCAL_OLD_SUFFIX} (the old layout's marker)")
    return segments


def _is_local_key(key: str) -> bool:
    try:
        _check_local_key(key, "list")
    except HoldfastError:
        return False
    return True


LOCAL_UNMAPPABLE_NAME = "LOCAL_UNMAPPABLE_NAME"


def _before(key: str, prefix: str, after: str) -> bool:
    return key.startswith(prefix) and (after == "" or key.encode("utf-8") > after.encode("utf-8"))


def _reaches(sub: str, prefix: str, after: str) -> bool:
    """Whether the folder whose keys start with ``sub`` can hold a key of the range."""
    if not sub.startswith(prefix) and not prefix.startswith(sub):
        return False
    return after == "" or sub.encode("utf-8") >= after.encode("utf-8") or after.startswith(sub)


def _unmappable(path: str, what: str) -> HoldfastError:
    return HoldfastError(
        "invalid-input",
        "list",
        f"{path} is {what} the local backend cannot map to an object key; the listing stops "
        "rather than skip it",
        key=path,
        code=LOCAL_UNMAPPABLE_NAME,
        hint="move or rename that file (holdfast never writes such names); nothing was decided",
    )


def _assert_not_old_layout(root: str) -> None:
    found = [n for n in _names_in(root) if n.endswith(LOCAL_OLD_SUFFIX) or n == OLD_LOCK_DIR]
    found += [
        f"_holdfast/{n}"
        for n in _names_in(os.path.join(root, "_holdfast"))
        if n.endswith(LOCAL_OLD_SUFFIX)
    ]
    if found:
        raise HoldfastError(
            "unsupported",
            "open",
            f"{root} holds objects in the old wrapped layout ({found[0]}), which this version "
            "cannot read",
            code="LOCAL_OLD_LAYOUT",
            hint="objects are now plain files at their own paths; recreate the store "
            "(no migration exists)",
        )


def _names_in(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _locate(paths: _Paths) -> _Located | None:
    try:
        at_path = os.stat(paths.path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISDIR(at_path.st_mode):
        return _Located(paths.path, at_path) if stat.S_ISREG(at_path.st_mode) else None
    try:
        own = os.stat(paths.self_path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return _Located(paths.self_path, own) if stat.S_ISREG(own.st_mode) else None


def _require_match(
    current: _Located | None, key: str, operation: str, precondition: IfMatch
) -> _Located:
    if current is None or etag_of(current.stats) != precondition.etag:
        raise HoldfastError(
            "conflict",
            operation,
            f"if-match on absent object {key}" if current is None else f"ETag mismatch on {key}",
            key=key,
            precondition=precondition,
            code="ENOENT" if current is None else "ETAG_MISMATCH",
        )
    return current


def _stamp_after(temp: str, previous: os.stat_result | None) -> str:
    own = os.stat(temp)
    if previous is None or own.st_mtime_ns > previous.st_mtime_ns:
        return etag_of(own)
    stamp_ns = (previous.st_mtime_ns // 1000 + 3) * 1000
    os.utime(temp, ns=(stamp_ns, stamp_ns))
    restamped = os.stat(temp)
    if restamped.st_mtime_ns <= previous.st_mtime_ns:
        raise HoldfastError(
            "refused",
            "put",
            "could not stamp a write later than the last one",
            code="STAMP_NOT_MONOTONIC",
        )
    return etag_of(restamped)


def _read_exactly(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _unlink_file(file: str) -> bool:
    try:
        os.unlink(file)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def _unlink_quietly(file: str) -> None:
    try:
        os.unlink(file)
    except OSError:
        pass


def _remove_tree(folder: str) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def _encode_token(key: str) -> str:
    import base64

    return base64.urlsafe_b64encode(key.encode("utf-8")).rstrip(b"=").decode("ascii")


def _decode_token(token: str) -> str:
    import base64

    try:
        key = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        key = ""
    if token == "" or _encode_token(key) != token:
        raise HoldfastError("invalid-input", "list", "malformed page token")
    return key


_process_locks: dict[str, threading.Lock] = {}
_process_locks_guard = threading.Lock()


@contextmanager
def _process_lock(lock_path: str) -> Iterator[None]:
    """This process's turn for a lock file, so threads do not spin on the OS lock."""
    with _process_locks_guard:
        lock = _process_locks.setdefault(lock_path, threading.Lock())
    with lock:
        yield


if sys.platform.startswith("linux"):
    import fcntl

    # struct flock on Linux: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid.
    def _flock_struct(kind: int) -> bytes:
        return struct.pack("hhqqi4x", kind, os.SEEK_SET, 0, 0, 0)

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _flock_struct(fcntl.F_WRLCK))
        except OSError as error:
            if error.errno in (errno.EAGAIN, errno.EACCES):
                return False
            raise
        return True

    def _unlock(fd: int) -> None:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _flock_struct(fcntl.F_UNLCK))

else:  # macOS and the BSDs: fs-native-extensions takes flock(2) there
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                return False
            raise
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _exchange(a: str, b: str) -> None:
    """``renameat2(a, b, RENAME_EXCHANGE)``: swaps two paths atomically (Linux)."""
    if not sys.platform.startswith("linux"):
        raise HoldfastError(
            "unsupported",
            "put",
            "turning an object into a folder needs renameat2(RENAME_EXCHANGE) (Linux)",
            code="ENOTSUP",
        )
    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, rename_exchange = -100, 2
    result = libc.renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), a)


def _conflict(operation: str, key: str, precondition: Precondition) -> HoldfastError:
    return HoldfastError(
        "conflict",
        operation,
        f"object already exists: {key}",
        key=key,
        precondition=precondition,
        code="EEXIST",
    )


def _path_race(operation: str, key: str, precondition: Precondition | None) -> HoldfastError:
    return HoldfastError(
        "refused",
        operation,
        f"folders of {key} kept changing; nothing written",
        key=key,
        precondition=precondition,
        code="EPATHRACE",
    )


def _to_error(
    error: OSError, operation: str, key: str | None, precondition: Precondition | None = None
) -> HoldfastError:
    """A local put completes before it answers: everything but a precondition failure is a
    refusal, never ambiguous."""
    code = errno.errorcode.get(error.errno or 0)
    message = str(error)
    if code == "EEXIST":
        if isinstance(precondition, IfAbsent):
            return HoldfastError(
                "conflict",
                operation,
                f"object already exists: {key}",
                key=key,
                code=code,
                precondition=precondition,
            )
        return HoldfastError(
            "refused", operation, message, key=key, code=code, precondition=precondition
        )
    if code == "ENOENT" and isinstance(precondition, IfMatch):
        return HoldfastError(
            "conflict",
            operation,
            f"if-match on absent object {key}",
            key=key,
            code=code,
            precondition=precondition,
        )
    if code in ("EACCES", "EPERM"):
        return HoldfastError(
            "auth",
            operation,
            message,
            key=key,
            code=code,
            precondition=precondition,
            hint="check the permissions of the store's root directory",
        )
    if code == "ENAMETOOLONG":
        return HoldfastError(
            "invalid-input", operation, message, key=key, code=code, precondition=precondition
        )
    if code in ("ENOTSUP", "EOPNOTSUPP", "EXDEV"):
        return HoldfastError(
            "unsupported",
            operation,
            message,
            key=key,
            code=code,
            precondition=precondition,
            hint="the local backend needs hard links, rename and file locks on one filesystem",
        )
    return HoldfastError(
        "refused", operation, message, key=key, code=code, precondition=precondition
    )
