"""The session on disk: what the last muxd left, restoring it, and keeping it current.

At a cold start the keeper reads `session.json` (removing unfinished writes of a muxd
that died, quarantining what it must refuse), then either restores the panes or, with
`restore = "never"`, keeps the session aside as `session.previous.json` and in the
history. Every snapshot written that would restore something else than the last one
archived is kept in the history of snapshots (mux.state.history), on the writer's
thread. From then on it owns the autosaver: every change to the pane table marks the
session dirty, `Snapshot` saves at once, an upgrade holds saving across the exec, and
the stop takes the final snapshot. What could not be restored is kept and reported
(docs/dbus-api.md#snapshots-and-upgrades).
"""

import asyncio
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import replace

from mux.config import RestoreMode, Settings
from mux.lifecycle.contents_keeper import FINAL_SAVE_SECONDS, ContentsKeeper
from mux.lifecycle.session_archive import SessionArchive
from mux.panes.table import PaneTable
from mux.protocol.errors import Unavailable
from mux.protocol.restore_problems import UnrestoredPane
from mux.resurrection.checkpoints import CheckpointStore
from mux.state.autosaver import Autosaver, Stopped
from mux.state.capture import CaptureSteps, SnapshotCache, capture_steps
from mux.state.restore import RestoreChoices, RestoreProblem, restore_session
from mux.state.restore_layout import restore_order
from mux.state.schema import PaneSnapshot, Session
from mux.state.session_file import SnapshotRefused, read_session
from mux.system.durable import DurableWriteError, remove_stale_temporaries
from mux.system.notify import Supervisor
from mux.system.paths import Paths
from mux.system.quarantine import quarantine

log = logging.getLogger(__name__)

# How long the service manager may wait for many panes to start again.
RESTORE_TIMEOUT_SECONDS = 60


class SessionKeeper:
    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        table: PaneTable,
        checkpoints: CheckpointStore,
        *,
        contents: ContentsKeeper | None = None,
        resumed_generation: int | None,
        saved: Callable[[int], None],
        failed: Callable[[str], None],
    ) -> None:
        """`resumed_generation`: the last snapshot's generation, handed over by the muxd
        this one replaced in an upgrade (None: a cold start). `saved(generation)`: a
        snapshot is durable; `failed(reason)`: saving failed (the status should say so)."""
        self._settings = settings
        self._paths = paths
        self._table = table
        self._checkpoints = checkpoints
        self._resumed_generation = resumed_generation
        self._saved = saved
        self._failed = failed
        self._autosaver: Autosaver | None = None
        self._snapshot_models = SnapshotCache()  # each capture reuses what did not change
        self._problems: list[RestoreProblem] = []
        self.contents = contents
        self.archive = SessionArchive(paths, settings, contents)
        self.session_problem = ""  # the last session was refused or unreadable
        self._generation_floor = 0
        self._saving_disabled = False
        self._carried_over = False

    # -- start --------------------------------------------------------------------

    def resume(
        self, problems: list[RestoreProblem], session_problem: str, *, saving_disabled: bool
    ) -> None:
        """An upgrade: what the muxd before this one knew of the last session."""
        self._problems = list(problems)
        self.session_problem = session_problem
        self._saving_disabled = saving_disabled

    @property
    def problems(self) -> list[RestoreProblem]:
        return list(self._problems)

    def add_problems(self, problems: list[RestoreProblem]) -> None:
        """Panes of a restore from the history that could not start: kept, like these."""
        self._problems = [*self._problems, *problems]

    @property
    def saving_disabled(self) -> bool:
        return self._saving_disabled

    def load(self) -> Session | None:
        """The snapshot on disk: to restore, and so that generations only grow."""
        file = self._paths.session_file
        if stale := remove_stale_temporaries(file):
            log.info("removed %d unfinished snapshot write(s) of a muxd that died", len(stale))
        try:
            return read_session(file, self._paths.quarantine)
        except SnapshotRefused as e:
            log.error("%s; it was moved to %s", e, e.quarantined_as)
            self.session_problem = f"{e}; it was moved to {e.quarantined_as.name} in quarantine"
            self._generation_floor = e.generation
            return None
        except OSError as e:
            # Not readable now (EIO, EACCES) is not "absent": it must not be
            # replaced by the first autosave. Moved aside, or saving stays off.
            reason = f"the session snapshot cannot be read ({e.strerror})"
            log.error("%s", reason)
            try:
                moved = quarantine(file, self._paths.quarantine, reason)
            except OSError:
                self.session_problem = f"{reason}; saving is off until it is fixed"
                self._saving_disabled = True
                return None
            self.session_problem = f"{reason}; it was moved to {moved.name} in quarantine"
            return None

    def restore(
        self,
        saved: Session,
        supervisor: Supervisor,
        only: list[int] | None = None,
        held: Sequence[int] = (),
    ) -> None:
        """Start the saved panes again, or keep the session aside when restore is off.
        `only`: the ids of the panes to restore (after a crash: those not re-adopted);
        `held`: those that waited to be started, and wait again whatever the mode."""
        if self._settings.restore is RestoreMode.NEVER:
            if only is None:
                self.archive.keep_unrestored(saved)
                return
            only = list(held)  # (held ones were restored already: they are not lost)
            if not only:
                return
        supervisor.extend_timeout(RESTORE_TIMEOUT_SECONDS)
        home = os.environ.get("HOME") or os.path.expanduser("~")
        wanted = set(only) if only is not None else None
        choices = restore_choices(self._settings, self.contents)
        if self.contents is not None:
            self.contents.read_ahead(restore_order(saved, wanted))
        try:
            problems = restore_session(
                self._table,
                saved,
                home,
                self._checkpoints,
                only=wanted,
                choices=replace(choices, still_held=frozenset(held)),
            )
        finally:
            if self.contents is not None:
                self.contents.end_read_ahead()
        self._problems = [*self._problems, *problems] if only is not None else problems
        waiting = sorted(self._table.held.ids())
        log.info(
            "restored %d of %d panes from snapshot generation %d%s",
            len(wanted if wanted is not None else saved.panes) - len(problems),
            len(wanted if wanted is not None else saved.panes),
            saved.generation,
            f"; {len(waiting)} wait to be started: {_id_ranges(waiting)}" if waiting else "",
        )

    def start_saving(self, loop: asyncio.AbstractEventLoop, saved: Session | None) -> None:
        """Generations go on from the last snapshot (or a refused one's number)."""
        if self._resumed_generation is not None:
            generation = self._resumed_generation
        else:
            generation = saved.generation if saved is not None else self._generation_floor
            # Generations only grow, even past a session.json removed by hand.
            generation = max(generation, self.archive.newest_generation())
        self._autosaver = Autosaver(
            loop,
            self._paths.session_file,
            self._capture,
            generation=generation,
            saved=self._saved,
            failed=self._failed,
            refresh=self._sample_cwds,
            written=self.archive.keep,
        )
        if self.contents is not None:
            self.contents.start()
        self._carried_over = self._resumed_generation is not None or (
            saved is not None and self._settings.restore is not RestoreMode.NEVER
        )

    def save_carried_over_session(self) -> None:
        """Once serving: a resumed or restored session is saved by this muxd."""
        if self._autosaver is not None and self._carried_over:
            self._autosaver.mark_dirty()

    async def _sample_cwds(self) -> None:
        await self._table.cwd_sampler.sample()  # where each program is now, not up to 10 s ago

    def _capture(self, generation: int) -> CaptureSteps:
        kept = kept_panes(self._problems, self._table)
        return capture_steps(
            self._table,
            generation,
            kept,
            None,  # every running command: the restore decides (mux.panes.replay)
            cache=self._snapshot_models,
        )

    # -- serve --------------------------------------------------------------------

    def pane_removed(self, pane_id: int) -> None:
        """A pane closed: when it held the place of a pane not restored, that pane is
        given up (no longer kept in the snapshot nor listed)."""
        kept = [problem for problem in self._problems if problem.pane.id != pane_id]
        if len(kept) != len(self._problems):
            log.info("pane %d, not restored, was given up", pane_id)
            self._problems = kept

    def table_changed(self) -> None:
        if self._autosaver is not None and not self._saving_disabled:
            self._autosaver.mark_dirty()

    @property
    def generation(self) -> int:
        return self._autosaver.generation if self._autosaver is not None else 0

    @property
    def notes(self) -> list[str]:
        """What the status line should say before anything else."""
        error = self._autosaver.last_error if self._autosaver is not None else ""
        return [note for note in (error, self.session_problem) if note]

    @property
    def not_restored(self) -> int:
        return len(self._problems)

    async def snapshot(self) -> tuple[str, int]:
        if self._autosaver is None:
            raise Unavailable("mux is still starting; try again in a moment")
        if self.contents is not None:  # the panes' contents as they are now, with it
            await self.contents.save_changed(within=FINAL_SAVE_SECONDS)
        try:
            generation = await self._autosaver.save_now()
        except DurableWriteError as e:
            raise Unavailable(str(e)) from None
        except Stopped:
            raise Unavailable("mux is stopping or upgrading; that saves the session") from None
        return str(self._paths.session_file), generation

    def unrestored_panes(self) -> list[UnrestoredPane]:
        # The whole session refused (quarantined, unreadable): one entry with id 0.
        whole = [UnrestoredPane(0, (), "", "", self.session_problem)]
        return (whole if self.session_problem else []) + [
            UnrestoredPane(
                problem.pane.id,
                tuple(problem.pane.argv),
                problem.pane.cwd.path,
                problem.pane.title,
                problem.reason,
            )
            for problem in self._problems
        ]

    # -- upgrade and stop -----------------------------------------------------------

    async def hold_for_upgrade(self) -> None:
        """The session on disk is current, and no write is in flight across the exec."""
        assert self._autosaver is not None
        await self._autosaver.save_now()
        await self._autosaver.hold()

    def release(self) -> None:
        """The upgrade failed: saving goes on."""
        if self._autosaver is not None:
            self._autosaver.release()

    async def final(self) -> None:
        """The final snapshot, of one moment: first every acknowledged application
        checkpoint, then the panes frozen (no output read) while it is captured."""
        await self._table.quiesce_checkpoints()
        if self.contents is not None:
            self.contents.stop()
            await self.contents.save_changed(within=FINAL_SAVE_SECONDS)
        if self._autosaver is not None:
            await self._autosaver.final(participants=[self._table])


def restore_choices(settings: Settings, contents: ContentsKeeper | None) -> RestoreChoices:
    """How a start brings the saved panes back: by the settings of now, with their old
    contents when there are any."""
    choices = RestoreChoices(
        mode=settings.restore,
        ask_programs=frozenset(settings.restore_ask_programs),
        replay_programs=tuple(settings.replay_commands),
    )
    if contents is None:
        return choices
    return replace(choices, contents=contents.contents_for, later=contents.show_when_ready)


def kept_panes(problems: list[RestoreProblem], table: PaneTable) -> list[tuple[PaneSnapshot, int]]:
    """Panes saved as they were: not restored, or held until started."""
    kept = [(problem.pane, problem.window) for problem in problems]
    for pane in table:
        pending = table.held.pending(pane.id)
        if pending is not None and isinstance(pending.saved, PaneSnapshot):
            kept.append((pending.saved.model_copy(update={"id": pane.id}), pane.window))
    return kept


def _id_ranges(ids: list[int]) -> str:
    """Sorted ids as runs, for one log line: [1, 2, 3, 7] -> "1-3, 7"."""
    runs: list[list[int]] = []
    for pane_id in ids:
        if runs and runs[-1][1] == pane_id - 1:
            runs[-1][1] = pane_id
        else:
            runs.append([pane_id, pane_id])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
