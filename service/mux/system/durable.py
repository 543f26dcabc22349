"""The one way mux writes a file that must survive: all of it, or none of it.

A unique temporary file in the same directory, the whole content written,
fsync, an atomic rename over the target, fsync of the directory. Writers of
the same file (threads or processes) take turns on a lock file beside it, so
their renames never interleave. On any failure the temporary file is removed
and the previous file is left byte-identical; the error says which step
failed and why, in words (never a raw OS error dump).
"""

import contextlib
import errno
import fcntl
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path


class DurableWriteError(Exception):
    """The write did not complete. Unless `replaced`, the previous content is untouched;
    when `replaced` (only the directory flush failed), the new content is in place but
    may not survive a crash."""

    def __init__(self, path: Path, step: str, error: OSError, *, replaced: bool) -> None:
        reason = _REASONS.get(error.errno or 0, "an error of the file system")
        outcome = (
            "it is saved but may not survive a crash"
            if replaced
            else "the previous version is kept"
        )
        super().__init__(f"could not save {path.name}: {step} failed ({reason}); {outcome}")
        self.path = path
        self.step = step
        self.errno = error.errno
        self.replaced = replaced


_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EIO: "input/output error",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}


@dataclass(frozen=True)
class FileOps:
    """The system calls a durable write makes, replaceable for fault-injection tests."""

    write: Callable[[int, bytes], int] = os.write
    fsync: Callable[[int], None] = os.fsync
    replace: Callable[[str, str], None] = os.replace


REAL_OPS = FileOps()
_thread_locks: dict[Path, threading.Lock] = {}
_thread_locks_guard = threading.Lock()


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """One writer of `path` at a time: threads of this process, then other processes."""
    with _thread_locks_guard:
        thread_lock = _thread_locks.setdefault(path, threading.Lock())
    with thread_lock:
        fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _fsync_directory(directory: Path, ops: FileOps) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        ops.fsync(fd)
    finally:
        os.close(fd)


def durable_write(path: Path, data: bytes, *, mode: int = 0o600, ops: FileOps = REAL_OPS) -> None:
    """Replace `path` with `data` durably; raises DurableWriteError and changes nothing."""
    if not path.is_absolute():  # a writer thread must not depend on the cwd
        raise ValueError(f"durable_write needs an absolute path, got {path}")
    directory = path.parent
    with contextlib.ExitStack() as held:
        step = "preparing its directory"
        temporary: str | None = None
        replaced = False
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            held.enter_context(_exclusive(path))
            step = "creating a temporary file"
            fd, temporary = _make_temporary(path, mode)
            try:
                step = "writing"
                view = memoryview(data)
                while view:
                    written = ops.write(fd, view.tobytes())
                    view = view[written:]
                step = "flushing to disk"
                ops.fsync(fd)
            finally:
                os.close(fd)
            step = "renaming into place"
            ops.replace(temporary, str(path))
            temporary, replaced = None, True  # it is the file now
            step = "flushing the directory"
            _fsync_directory(directory, ops)
        except OSError as e:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
            raise DurableWriteError(path, step, e, replaced=replaced) from None


def durable_remove(path: Path, *, ops: FileOps = REAL_OPS) -> None:
    """Remove `path` (if it is there) and flush its directory; DurableWriteError if not done."""
    if not path.is_absolute():
        raise ValueError(f"durable_remove needs an absolute path, got {path}")
    step = "removing it"
    replaced = False
    try:
        with _exclusive(path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            replaced = True
            step = "flushing the directory"
            _fsync_directory(path.parent, ops)
    except OSError as e:
        raise DurableWriteError(path, step, e, replaced=replaced) from None


def _make_temporary(path: Path, mode: int) -> tuple[int, str]:
    for attempt in range(100):
        name = path.with_name(f".{path.name}.{os.getpid()}.{attempt}.tmp")
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        except FileExistsError:
            continue
        return fd, str(name)
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def remove_stale_temporaries(path: Path) -> list[str]:
    """Temporary files of writes cut short (a crash, kill -9) next to `path`. Only for a
    caller that knows no writer of `path` runs (muxd holding the instance lock)."""
    return _remove(path.parent.glob(f".{path.name}.*.tmp"))


def remove_stale_temporaries_in(directory: Path) -> list[str]:
    """As remove_stale_temporaries, for every file in `directory` (the checkpoints:
    one file per launch, each written by its own endpoint)."""
    return _remove(directory.glob(".*.*.*.tmp"))


def _remove(stale_files: Iterable[Path]) -> list[str]:
    removed = []
    for stale in stale_files:
        with contextlib.suppress(OSError):
            stale.unlink()
            removed.append(stale.name)
    return removed
