"""The snapshots kept in the history (mux.state.history): each one written, the one a
start with `restore = "never"` does not restore, and the generation the next starts
above (generations only grow, even past a session.json removed by hand)."""

import logging
import os
from pathlib import Path

from mux.config import Settings
from mux.lifecycle.contents_keeper import ContentsKeeper
from mux.state.history import HistoryWriteError, SnapshotHistory
from mux.state.schema import Session
from mux.state.session_file import session_bytes
from mux.system.durable import DurableWriteError, durable_write
from mux.system.paths import Paths

log = logging.getLogger(__name__)


class SessionArchive:
    def __init__(self, paths: Paths, settings: Settings, contents: ContentsKeeper | None) -> None:
        home = os.environ.get("HOME") or os.path.expanduser("~")
        self.history = SnapshotHistory(paths.history, settings, home=home)
        self._session_file = paths.session_file
        self._contents = contents

    def keep(self, session: Session, data: bytes) -> None:
        """Keep a snapshot written (`data`) in the history with its panes' contents files,
        unless it would restore what the last one kept would. Blocking: the autosaver's
        writer thread, or the start."""
        files = _contents_files(self._contents, session)
        try:
            if self.history.archive(session, data, files):
                log.info("snapshot %d is kept in the history", session.generation)
        except (HistoryWriteError, OSError) as e:  # the snapshot itself is safe
            log.error("%s", e)

    def keep_unrestored(self, saved: Session) -> None:
        """restore = "never": the last session is not relaunched, but not thrown away
        either: it stays as session.previous.json and in the history."""
        previous = self._session_file.with_name("session.previous.json")
        data = session_bytes(saved)
        try:
            durable_write(previous, data)
        except DurableWriteError as e:
            log.error("the unrestored session could not be kept: %s", e)
        else:
            log.info("restore is off; the last session is kept as %s", previous)
        self.keep(saved, data)

    def newest_generation(self) -> int:
        try:
            return self.history.newest_generation() or 0
        except OSError as e:
            log.error("the history of snapshots cannot be read: %s", e.strerror)
            return 0


def _contents_files(keeper: ContentsKeeper | None, session: Session) -> dict[str, Path]:
    """The contents files a snapshot's panes have (blocking)."""
    if keeper is None or not keeper.enabled:
        return {}
    sizes = keeper.store.sizes()
    names = [pane.invocation for pane in session.panes if pane.invocation in sizes]
    return {name: keeper.store.path(name) for name in names}
