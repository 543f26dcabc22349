"""The history of snapshots: `<state>/history/<generation>/`, thinned by age (docs/contents.md).

An entry is a directory named by its snapshot's generation (decimal digits, nothing
else), holding `session.json` (the snapshot's bytes as they were written) and, in
`contents/`, a hard link to each pane contents file the snapshot names: the bytes are
on disk once, however many entries keep them, and outlive the file they were linked
from (a copy is made only where a link cannot be, as across file systems).

An entry is made whole in `.incoming/` and then renamed into place: a crash leaves
at most that directory, which is never listed and is removed the next time the
history is used. An entry is removed by renaming it to `.removing-<generation>`
first, so that a crash in the middle never leaves half an entry listed. Any other
name in the directory (a file, a symbolic link, a directory not named by digits) is
none of mux's and is left alone.

Every method does blocking I/O: call them off the event loop. They take turns (a
lock), so the autosaver's worker and a D-Bus call may use one history at once.
"""

import contextlib
import errno
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mux.protocol.errors import InvalidArgument, Unavailable
from mux.state.history_files import (
    CONTENTS_NAME,
    SESSION_NAME,
    ScannedEntry,
    contents_files,
    fsync_directory,
    keep_file,
    load_entry,
    remove_tree,
    scan_entry,
)
from mux.state.history_records import HistoryEntry, restorable_view
from mux.state.schema import MAX_GENERATION, Session
from mux.state.thinning import HistoryLimits, to_remove
from mux.system.durable import REAL_OPS, DurableWriteError, FileOps, durable_write

log = logging.getLogger(__name__)

STAGING_NAME = ".incoming"
REMOVING_PREFIX = ".removing-"
_GENERATION_NAME = re.compile(r"0|[1-9][0-9]{0,18}")
# A contents file's name inside an entry: one plain name, as `<state>/contents/` has them.
_CONTENTS_FILE_NAME = re.compile(r"[^./\x00][^/\x00]{0,254}")


class HistoryWriteError(Exception):
    """A snapshot could not be archived; the history is as it was before."""

    def __init__(self, generation: int, step: str, reason: str) -> None:
        super().__init__(
            f"could not keep snapshot {generation} in the history: {step} failed ({reason})"
        )
        self.generation = generation
        self.step = step


class SnapshotHistory:
    def __init__(
        self,
        directory: Path,
        limits: HistoryLimits,
        clock: Callable[[], float] = time.time,
        *,
        home: str | None = None,
        ops: FileOps = REAL_OPS,
    ) -> None:
        """`home`: shown as `~` in summaries; `ops`: the durable writer's system calls."""
        if not directory.is_absolute():
            raise ValueError(f"the history directory must be absolute: {directory}")
        self.directory = directory
        self._limits = limits
        self._clock = clock
        self._home = home
        self._ops = ops
        self._lock = threading.RLock()
        self._scanned: dict[int, ScannedEntry] = {}
        self._last_view: tuple[Any, ...] | None = None  # of the newest entry, once read
        self._last_view_known = False
        self._tidied = False

    # -- archiving -------------------------------------------------------------------

    def archive(self, session: Session, raw: bytes, contents: Mapping[str, Path]) -> bool:
        """Keep `session` (`raw`: its file's bytes) with the contents files it names
        (name in the snapshot -> the file now), unless the newest entry would restore
        the same; then thin. Whether it was archived; HistoryWriteError if it could not
        be (nothing of it is left)."""
        for name in contents:
            if not _CONTENTS_FILE_NAME.fullmatch(name):
                raise ValueError(f"not a contents file name: {name!r}")
        view = restorable_view(session)
        with self._lock:
            self._tidy_once()
            if self._newest_view() == view:
                return False
            self._write_entry(session.generation, raw, contents)
            self._last_view, self._last_view_known = view, True
            try:
                self.thin()
            except OSError as e:  # archived all the same; the next archive thins again
                log.error("the history could not be thinned: %s", os.strerror(e.errno or 0))
            return True

    def _newest_view(self) -> tuple[Any, ...] | None:
        if not self._last_view_known:
            newest = self.newest_generation()
            self._last_view = None
            if newest is not None:
                with contextlib.suppress(InvalidArgument, Unavailable):
                    self._last_view = restorable_view(self.read(newest))
            self._last_view_known = True
        return self._last_view

    def _write_entry(self, generation: int, raw: bytes, contents: Mapping[str, Path]) -> None:
        staging = self.directory / STAGING_NAME
        step = "making its directory"
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            remove_tree(staging)
            staging.mkdir(mode=0o700)
            if contents:
                step = "keeping its pane contents"
                kept = staging / CONTENTS_NAME
                kept.mkdir(mode=0o700)
                for name, source in contents.items():
                    keep_file(source, kept / name)
                fsync_directory(kept)
            step = "writing its snapshot"
            durable_write(staging / SESSION_NAME, raw, ops=self._ops)
            # The writer's lock file: nobody else writes in `.incoming`.
            (staging / f".{SESSION_NAME}.lock").unlink(missing_ok=True)
            step = "moving it into the history"
            self._move_into_place(staging, generation)
            fsync_directory(self.directory)
        except (OSError, DurableWriteError) as e:
            with contextlib.suppress(OSError):
                remove_tree(staging)
            reason = os.strerror(e.errno) if e.errno else "an error of the file system"
            raise HistoryWriteError(generation, step, reason.lower()) from None

    def _move_into_place(self, staging: Path, generation: int) -> None:
        target = self.directory / str(generation)
        try:
            os.rename(staging, target)
            return
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                raise
        # An entry of the same generation: generations started again (session.json was
        # removed by hand). The newer snapshot takes the number.
        log.warning("snapshot %d in the history is replaced by a newer one", generation)
        self._remove_entry(generation)
        os.rename(staging, target)

    # -- thinning --------------------------------------------------------------------

    def thin(self) -> dict[int, str]:
        """Remove what the limits no longer keep (mux.state.thinning); what went and why."""
        with self._lock:
            self._tidy_once()
            scanned = self._scan_all()
            plan = to_remove([s.thinning for s in scanned], self._limits, self._clock())
            for generation, why in plan.items():
                self._remove_entry(generation)
                log.info("snapshot %d left the history: %s", generation, why)
            return plan

    def _remove_entry(self, generation: int) -> None:
        """Out of the listing at once (a rename), then removed."""
        entry = self.directory / str(generation)
        doomed = self.directory / f"{REMOVING_PREFIX}{generation}"
        remove_tree(doomed)
        if os.path.isdir(entry) and not os.path.islink(entry):
            os.rename(entry, doomed)
            fsync_directory(self.directory)
            remove_tree(doomed)
        self._scanned.pop(generation, None)

    def remove_unfinished(self) -> list[str]:
        """Remove what an archive or a removal cut short left (`.incoming`,
        `.removing-*`); the names removed. Only for the one muxd using this history."""
        removed = []
        with self._lock, contextlib.suppress(FileNotFoundError, NotADirectoryError):
            for item in list(os.scandir(self.directory)):
                if item.name == STAGING_NAME or item.name.startswith(REMOVING_PREFIX):
                    with contextlib.suppress(OSError):
                        remove_tree(Path(item.path))
                        removed.append(item.name)
        if removed:
            log.info("unfinished history entries removed: %s", ", ".join(sorted(removed)))
        return removed

    def _tidy_once(self) -> None:
        if not self._tidied:
            self._tidied = True
            self.remove_unfinished()

    # -- reading ---------------------------------------------------------------------

    def entries(self) -> list[HistoryEntry]:
        """Every entry, newest first; a damaged one is listed as such (and logged once)."""
        with self._lock:
            self._tidy_once()
            return [s.entry for s in self._scan_all()]

    def newest_generation(self) -> int | None:
        """The highest generation in the history (a new muxd's generations start above
        it, so that entries keep their order), None when it is empty."""
        with self._lock:
            names = self._generation_names()
            return max(names) if names else None

    def read(self, generation: int) -> Session:
        """The snapshot of entry `generation`; InvalidArgument when there is none,
        Unavailable when it is damaged."""
        with self._lock:
            session, problem = load_entry(self._entry_path(generation), generation)
            if session is None:
                raise Unavailable(f"snapshot {generation} in the history is damaged: {problem}")
            return session

    def contents_of(self, generation: int) -> dict[str, Path]:
        """The contents files kept with entry `generation`, by their names."""
        with self._lock:
            return contents_files(self._entry_path(generation))

    def _entry_path(self, generation: object) -> Path:
        if isinstance(generation, bool) or not isinstance(generation, int):
            raise InvalidArgument(f"a snapshot generation is a number, not {generation!r}")
        path = self.directory / str(generation)
        try:
            if 0 <= generation <= MAX_GENERATION and stat.S_ISDIR(os.lstat(path).st_mode):
                return path
        except OSError:
            pass
        raise InvalidArgument(f"there is no snapshot {generation} in the history")

    def _generation_names(self) -> set[int]:
        try:
            items = list(os.scandir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            return set()
        return {
            int(item.name)
            for item in items
            if _GENERATION_NAME.fullmatch(item.name)
            and int(item.name) <= MAX_GENERATION
            and item.is_dir(follow_symlinks=False)
        }

    def _scan_all(self) -> list[ScannedEntry]:
        """Newest first. What was read before is used again while its files (inode,
        size, time) are unchanged: entries are never rewritten."""
        scanned: dict[int, ScannedEntry] = {}
        for generation in sorted(self._generation_names(), reverse=True):
            path = self.directory / str(generation)
            try:
                scanned[generation] = scan_entry(
                    path, generation, self._scanned.get(generation), self._home
                )
            except FileNotFoundError:  # removed meanwhile
                pass
            except OSError as e:
                log.warning("snapshot %d in the history cannot be read: %s", generation, e.strerror)
        self._scanned = scanned
        return list(scanned.values())
