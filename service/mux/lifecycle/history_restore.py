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


def _entry(pane_id: int, argv: list[str], cwd: str, window: int) -> dict[str, Variant]:
    return {
        "pane": Variant("t", pane_id),
        "argv": Variant("as", argv),
        "cwd": Variant("s", cwd),
        "window": Variant("t", window),
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
            return [_entry(0, pane.argv, pane.cwd.path, 0) for pane in chosen]
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
