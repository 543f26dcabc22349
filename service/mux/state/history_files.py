"""The files of the history's entries: read, linked, copied, removed (mux.state.history)."""

import contextlib
import errno
import logging
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from mux.state.history_records import HistoryEntry, summary
from mux.state.schema import Session, SnapshotError
from mux.state.session_file import SESSION_FILE, parse_session
from mux.state.thinning import ThinningEntry

log = logging.getLogger(__name__)

CONTENTS_NAME = "contents"
SESSION_NAME = "session.json"


@dataclass(frozen=True)
class ScannedEntry:
    """One entry as last read from disk; used again while its files look the same."""

    signature: tuple[int, ...]
    entry: HistoryEntry
    thinning: ThinningEntry


def scan_entry(
    path: Path, generation: int, before: ScannedEntry | None, home: str | None
) -> ScannedEntry:
    """Entry `generation` at `path`; `before` (its last scan) again while its files
    look the same (inode, time, size): entries are never rewritten. A damaged entry
    is logged whenever it is scanned anew."""
    folder = os.lstat(path)
    files: dict[tuple[int, int], int] = {}
    signature = [folder.st_ino, folder.st_mtime_ns]
    for item in (path / SESSION_NAME, path / CONTENTS_NAME):
        try:
            status = os.lstat(item)
            signature += [status.st_ino, status.st_mtime_ns, status.st_size]
        except OSError:
            signature += [-1, -1, -1]
    if before is not None and before.signature == tuple(signature):
        return before
    for item in [path / SESSION_NAME, *contents_files(path).values()]:
        with contextlib.suppress(OSError):
            status = os.lstat(item)
            if stat.S_ISREG(status.st_mode):
                files[(status.st_dev, status.st_ino)] = status.st_size
    session, problem = load_entry(path, generation)
    size = sum(files.values())
    if session is None:
        log.warning("snapshot %d in the history is damaged: %s", generation, problem)
        entry = HistoryEntry(
            generation, folder.st_mtime, 0, 0, (), size, f"damaged: {problem}", problem
        )
    else:
        entry = HistoryEntry(
            generation=generation,
            time=session.saved_at,
            panes=len(session.panes),
            windows=len(session.windows),
            hosts=(),  # every pane of a snapshot runs on this machine
            bytes=size,
            summary=summary(session, home),
        )
    has_panes = session is not None and bool(session.panes)
    thinning = ThinningEntry(generation, entry.time, has_panes, files)
    return ScannedEntry(tuple(signature), entry, thinning)


def load_entry(path: Path, generation: int) -> tuple[Session | None, str]:
    """The entry's snapshot, or None and what is wrong with it."""
    try:
        session = parse_session(read_bounded(path / SESSION_NAME))
    except FileNotFoundError:
        return None, "its snapshot file is missing"
    except OSError as e:
        if e.errno == errno.ELOOP:
            return None, "its snapshot file is a symbolic link"
        return None, f"its snapshot file cannot be read ({os.strerror(e.errno or 0)})"
    except SnapshotError as e:
        return None, str(e)
    if session.generation != generation:
        return None, f"its snapshot is generation {session.generation}"
    return session, ""


def read_bounded(path: Path) -> bytes:
    """At most one byte more than a session file may have (parse_session refuses it);
    a symbolic link or anything but a regular file is refused without being followed."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK | os.O_NOFOLLOW
    fd = os.open(path, flags)
    with open(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SnapshotError("its snapshot file is not a regular file")
        return file.read(SESSION_FILE.max_bytes + 1)


def contents_files(entry: Path) -> dict[str, Path]:
    kept = entry / CONTENTS_NAME
    try:
        if not stat.S_ISDIR(os.lstat(kept).st_mode):
            return {}
        items = list(os.scandir(kept))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    return {
        item.name: Path(item.path)
        for item in sorted(items, key=lambda item: item.name)
        if item.is_file(follow_symlinks=False)
    }


def keep_file(source: Path, kept: Path) -> None:
    """A hard link to `source` as `kept`; a copy where a link cannot be made. A source
    that is gone (replaced between the snapshot and now) is logged and left out."""
    try:
        if not stat.S_ISREG(os.lstat(source).st_mode):
            log.warning("contents file %s is not a regular file: not kept", source.name)
            return
        os.link(source, kept, follow_symlinks=False)
        return
    except FileNotFoundError:
        log.warning("contents file %s is gone: the snapshot is kept without it", source.name)
        return
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
    with open(source, "rb") as original, open(kept, "xb") as copy:
        os.fchmod(copy.fileno(), 0o600)
        shutil.copyfileobj(original, copy)
        copy.flush()
        os.fsync(copy.fileno())


def remove_tree(path: Path) -> None:
    """Remove `path`, a directory tree or anything else (never following a link)."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(status.st_mode):
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
