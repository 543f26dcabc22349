"""The history of snapshots on the Manager: `ListSnapshots` and `RestoreSnapshot`
(docs/dbus-api.md#restore-and-history).

A restore from the history starts the chosen panes of an older snapshot beside what
runs, with new ids, each window of theirs a new window; a pane whose launch still runs
here (the same invocation) is left out, never started twice. The current session is
saved (and so kept in the history) first: any restore can be undone by restoring the
snapshot before it. A dry run answers what would start and changes nothing. The
history's files are read on a worker thread, never on the event loop.
"""

import asyncio
import logging
import os
from pathlib import Path

from dbus_fast import Variant

from mux.lifecycle.contents_keeper import ContentsKeeper
from mux.lifecycle.session_keeper import SessionKeeper
from mux.panes.pane import Pane
from mux.panes.table import PaneTable
from mux.protocol.errors import InvalidArgument
from mux.protocol.restore_options import RestoreOptions
from mux.resurrection.checkpoints import CheckpointStore
from mux.state.history_records import snapshot_record
from mux.state.restore import RestoreChoices, restore_session
from mux.state.schema import PaneSnapshot, Session
from mux.system.worker_threads import off_the_loop

log = logging.getLogger(__name__)
MAX_DRY_RUN_CONTENTS = 8 << 20  # of saved contents in one dry run's answer


def _entry(pane_id: int, argv: list[str], cwd: str, window: int) -> dict[str, Variant]:
    return {
        "pane": Variant("t", pane_id),
        "argv": Variant("as", argv),
        "cwd": Variant("s", cwd),
        "window": Variant("t", window),
    }


def _planned(saved: PaneSnapshot, window: int, contents: bytes | None) -> dict[str, Variant]:
    """A dry run's entry: what would start, and where it was in the snapshot (its id
    there, for `panes`; its window, title and size), with the end of its saved contents
    when asked for."""
    entry = _entry(0, saved.argv, saved.cwd.path, 0) | {
        "snapshot_pane": Variant("t", saved.id),
        "snapshot_window": Variant("t", window),
        "title": Variant("s", saved.title),
        "rows": Variant("q", saved.rows),
        "cols": Variant("q", saved.cols),
    }
    if contents is not None:
        entry["contents"] = Variant("ay", contents)
    return entry


def _windows_of(session: Session) -> dict[int, int]:
    """pane id -> its window's id in the snapshot."""
    return {
        node.pane: window.id
        for window in session.windows
        for node in window.nodes
        if node.pane is not None
    }


class HistoryRestore:
    def __init__(
        self,
        table: PaneTable,
        keeper: SessionKeeper,
        checkpoints: CheckpointStore,
        loop: asyncio.AbstractEventLoop,
        contents: ContentsKeeper | None = None,
    ) -> None:
        self._table = table
        self._contents = contents
        self._keeper = keeper
        self._checkpoints = checkpoints
        self._loop = loop

    async def snapshots(self) -> list[dict[str, Variant]]:
        entries = await off_the_loop(self._loop, self._keeper.archive.history.entries)
        return [snapshot_record(entry) for entry in entries]

    async def restore(self, generation: int, options: RestoreOptions) -> list[dict[str, Variant]]:
        history = self._keeper.archive.history
        session = await off_the_loop(self._loop, lambda: history.read(generation))
        files = await off_the_loop(self._loop, lambda: history.contents_of(generation))
        chosen = self._chosen(session, generation, options)
        if options.dry_run:
            return await self._dry_run(session, chosen, files, options.contents)
        if not chosen:
            return []
        await self._keeper.snapshot()  # the session of now, kept first: the undo
        before = {pane.id for pane in self._table}
        home = os.environ.get("HOME") or os.path.expanduser("~")
        contents = self._contents

        def contents_of(saved: PaneSnapshot) -> bytes | None:
            """Its contents as that snapshot kept them (none: none)."""
            path = files.get(saved.invocation)
            return contents.contents_for(saved, path) if contents and path else b""

        choices = RestoreChoices(
            keep_ids=False,
            replay_programs=tuple(self._table.settings.replay_commands),
            contents=contents_of,
        )
        only = {pane.id for pane in chosen}
        problems = restore_session(
            self._table, session, home, self._checkpoints, only=only, choices=choices
        )
        self._keeper.add_problems(problems)
        started = [pane for pane in self._table if pane.id not in before and pane.has_process]
        log.info(
            "restored %d of %d panes from snapshot %d of the history",
            len(started),
            len(session.panes),
            generation,
        )
        return [_started(pane) for pane in sorted(started, key=lambda pane: pane.id)]

    async def _dry_run(
        self,
        session: Session,
        chosen: list[PaneSnapshot],
        files: dict[str, Path],
        with_contents: bool,
    ) -> list[dict[str, Variant]]:
        windows = _windows_of(session)
        keeper = self._contents
        if with_contents and keeper is not None:

            def peek_all() -> list[bytes | None]:
                """Each pane's, until the answer holds MAX_DRY_RUN_CONTENTS (then none:
                a reply of thousands of panes stays far below the bus's bound)."""
                seen: list[bytes | None] = []
                total = 0
                for pane in chosen:  # (past the bound, nothing more is read either)
                    full = total > MAX_DRY_RUN_CONTENTS
                    tail = b"" if full else keeper.peek(pane, files.get(pane.invocation), pane.rows)
                    total += len(tail)
                    seen.append(tail if total <= MAX_DRY_RUN_CONTENTS else b"")
                return seen

            contents = await off_the_loop(self._loop, peek_all)
        else:
            contents = [None] * len(chosen)
        return [
            _planned(pane, windows.get(pane.id, 0), seen)
            for pane, seen in zip(chosen, contents, strict=True)
        ]

    def _chosen(
        self, session: Session, generation: int, options: RestoreOptions
    ) -> list[PaneSnapshot]:
        """The panes to start: those asked for (all by default) whose launch does not
        run here already."""
        if options.panes is not None:
            unknown = sorted(options.panes - {pane.id for pane in session.panes})
            if unknown:
                names = ", ".join(str(pane) for pane in unknown[:10])
                raise InvalidArgument(f"snapshot {generation} has no pane {names}")
        running = {pane.launch.invocation for pane in self._table if pane.is_live}
        return [
            pane
            for pane in session.panes
            if (options.panes is None or pane.id in options.panes)
            and pane.invocation not in running
        ]


def _started(pane: Pane) -> dict[str, Variant]:
    return _entry(pane.id, list(pane.argv), pane.cwd, pane.window)
