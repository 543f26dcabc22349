"""The pane table without muxd: real programs (sleep, sh) on real PTYs and a real event
loop. The conditional kill and the spawn ledger (docs/dbus-api.md#conditional-kill), the
timers driven through an injected clock, and a restored pane's title."""

import asyncio
import os
import shutil
import threading
import time
from collections.abc import Callable, Coroutine, Generator, Sequence
from pathlib import Path
from typing import Any

import pytest

from mux.config import RestoreMode, Settings
from mux.panes import closing, cwd_sampler
from mux.panes.handover import TableRecord
from mux.panes.ledger import UNATTACHED_SINCE_SPAWN
from mux.panes.pane import Pane, PaneState
from mux.panes.table import PaneTable
from mux.panes.table_resume import handover_record, resume_into
from mux.protocol.errors import NoSuchPane, PreconditionFailed
from mux.protocol.spawn_options import LaunchKind, SpawnRequest
from mux.state.restore import RestoreChoices, restore_session
from mux.state.schema import CwdRecord, LayoutNode, PaneSnapshot, Session, WindowSnapshot
from mux.system.proctree import ProcessTree, working_directory
from tests.loop_support import settled, until

SPAWNER = ":1.5"


class SteeredLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock a test can move forward: monotonic time plus `ahead`."""

    def __init__(self) -> None:
        super().__init__()
        self.ahead = 0.0

    def time(self) -> float:
        return time.monotonic() + self.ahead


class Recorder:
    """A table observer that keeps what it heard."""

    def __init__(self) -> None:
        self.changes: list[tuple[int, tuple[str, ...]]] = []

    def pane_added(self, pane: Pane) -> None:
        pass

    def pane_removed(self, pane: Pane) -> None:
        pass

    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None:
        self.changes.append((pane.id, tuple(properties)))

    def pane_exited(self, pane: Pane) -> None:
        pass


TableTest = Callable[[PaneTable, SteeredLoop], Coroutine[Any, Any, None]]


def with_table(home: Path, test: TableTest, **settings: Any) -> None:
    """Run `test` with a table on a steered loop; every program is gone afterwards."""
    loop = SteeredLoop()

    async def main() -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
        table = PaneTable(Settings(kill_grace_seconds=0, **settings), env, loop, clock=loop.time)
        try:
            await test(table, loop)
        finally:
            table.close_all()
            table.end_closing_sessions()
            await until(lambda: table.lingering_processes() == 0, "every program to end")
            table.exits.close()

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


def one_pane_session(
    directory: Path, pane_id: int, argv: list[str], *, window: int = 1, **fields: Any
) -> Session:
    """A snapshot of one window holding one pane running `argv` in `directory`."""
    program = shutil.which(argv[0]) or str(directory / argv[0])
    pane = PaneSnapshot(
        id=pane_id,
        kind=LaunchKind.EXPLICIT,
        argv=argv,
        program=program,
        cwd=CwdRecord(path=str(directory), source="launch", captured_at=0.0),
        title=fields.pop("title", ""),
        rows=fields.pop("rows", 24),
        cols=fields.pop("cols", 80),
        invocation="0" * 32,
        **fields,
    )
    node = LayoutNode(id=1, kind="pane", pane=pane_id)
    snapshot = WindowSnapshot(id=window, nodes=[node], root=1, focused_pane=pane_id)
    return Session(version=1, generation=1, saved_at=0.0, windows=[snapshot], panes=[pane])


def sleeper(table: PaneTable, spawner: str | None = SPAWNER) -> Pane:
    return table.spawn(
        SpawnRequest(kind=LaunchKind.EXPLICIT, argv=("sleep", "60")), spawner=spawner
    )


def assert_refused(
    table: PaneTable,
    pane: Pane,
    instance: bytes,
    conditions: list[str],
    *,
    match: str,
    clients: int = 0,
) -> None:
    with pytest.raises(PreconditionFailed, match=match):
        table.kill_if(pane.id, instance, conditions, clients)
    assert table.get(pane.id) is pane  # nothing was killed
    assert pane.is_running and pane.process.poll() is None


# -- closed panes ----------------------------------------------------------------------


def test_panes_closed_together_have_their_sessions_ended_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read of the process table per closed pane made a stop of 2000 panes last
    longer than 20 s: panes whose grace ends on one turn of the loop are ended with
    one read, and so are all of them at a stop."""
    ended: list[list[int]] = []
    real = closing.kill_sessions

    def kill_sessions(session_ids: Sequence[int]) -> dict[int, int]:
        ended.append(sorted(session_ids))
        return real(session_ids)

    monkeypatch.setattr(closing, "kill_sessions", kill_sessions)

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        panes = [sleeper(table) for _ in range(12)]
        for pane in panes[:8]:
            table.close(pane.id)
        await until(lambda: ended, "the grace to be over")
        assert ended == [sorted(pane.pid for pane in panes[:8])]
        for pane in panes[8:]:
            table.close(pane.id)
        table.end_closing_sessions()  # a stop: at once, the rest in one go
        assert ended[1:] == [sorted(pane.pid for pane in panes[8:])]
        await until(lambda: table.lingering_processes() == 0, "every program to be reaped")
        assert len(ended) == 2, "nothing ended twice"

    with_table(tmp_path, test)


def test_a_closed_pane_is_waited_for_until_its_program_is_reaped(tmp_path: Path) -> None:
    """Ending the sessions of closed panes (at stop, at upgrade) kills their programs;
    until each is reaped, a stop still waits for it and an upgrade hands it on."""

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        pane = sleeper(table)
        table.close(pane.id)
        table.end_closing_sessions()  # its exit is heard on a later turn of the loop
        assert table.lingering_processes() == 1
        assert handover_record(table).reap == [pane.pid]
        await until(lambda: table.lingering_processes() == 0, "the program to be reaped")
        assert handover_record(table).reap == []

    with_table(tmp_path, test)


# -- the conditional kill --------------------------------------------------------------


def test_kill_if_refuses_and_kills_nothing_unless_every_check_holds(tmp_path: Path) -> None:
    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        token = table.ids.token
        pane = sleeper(table)
        assert_refused(
            table, pane, token, ["NEVER_HEARD_OF"], match="unknown condition 'NEVER_HEARD_OF'"
        )
        assert_refused(table, pane, bytes(16), [], match="names another instance")
        assert_refused(
            table, pane, bytes(16), [UNATTACHED_SINCE_SPAWN], match="names another instance"
        )
        assert_refused(table, pane, b"", [UNATTACHED_SINCE_SPAWN], match="needs the instance token")
        assert_refused(
            table, pane, token, [UNATTACHED_SINCE_SPAWN], match="2 open connection", clients=2
        )
        unrecorded = sleeper(table, spawner=None)
        assert_refused(
            table, unrecorded, token, [UNATTACHED_SINCE_SPAWN], match="did not come from Spawn"
        )
        with pytest.raises(NoSuchPane):
            table.kill_if(999, token, [UNATTACHED_SINCE_SPAWN], 0)

    with_table(tmp_path, test)


def test_kill_if_kills_a_pane_only_its_spawner_used(tmp_path: Path) -> None:
    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        pane = sleeper(table)
        table.mark_use(pane, SPAWNER)  # the spawner's own use does not count
        table.kill_if(pane.id, table.ids.token, [UNATTACHED_SINCE_SPAWN], 0)
        with pytest.raises(NoSuchPane):
            table.get(pane.id)
        await until(lambda: pane.process.returncode is not None, "sleep to end")
        assert pane.process.returncode == -1  # the hang-up

    with_table(tmp_path, test)


@pytest.mark.parametrize("user", [":1.9", None], ids=["another-bus-client", "attach-socket"])
def test_a_use_by_anyone_but_the_spawner_keeps_the_pane(tmp_path: Path, user: str | None) -> None:
    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        pane = sleeper(table)
        table.mark_use(pane, user)
        assert pane.spawn_record is not None and pane.spawn_record.used_by_others
        assert_refused(
            table, pane, table.ids.token, [UNATTACHED_SINCE_SPAWN], match="used by another client"
        )
        table.kill_if(pane.id, table.ids.token, [], 0)  # no condition: the plain kill
        with pytest.raises(NoSuchPane):
            table.get(pane.id)

    with_table(tmp_path, test)


# -- timers ------------------------------------------------------------------------------


def test_working_directories_are_sampled_every_interval_once_started(tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        pane = table.spawn(
            SpawnRequest(
                kind=LaunchKind.EXPLICIT,
                argv=("sh", "-c", 'cd "$1" && exec sleep 60', "sh", str(moved)),
                cwd=str(tmp_path),
            )
        )
        await until(lambda: working_directory(pane.pid) == str(moved), "the program to cd")
        loop.ahead += 3600  # not started: no timer to fire
        await settled("the timers due an hour on")
        assert (pane.cwd, pane.cwd_source) == (str(tmp_path), "launch")
        table.start()
        loop.ahead += 29  # before the interval
        await settled("the timers due 29 s on")
        assert pane.cwd == str(tmp_path)
        loop.ahead += 1
        await until(lambda: pane.cwd == str(moved), "the sample")
        assert pane.cwd_source == "process"

    with_table(tmp_path, test, cwd_sample_seconds=30)


def test_the_process_table_is_read_in_steps_with_the_loop_running_between(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hundreds of /proc files are read a few at a time, the loop running in between:
    not in one go, and not on a thread that would hold the interpreter's lock."""
    monkeypatch.setattr(cwd_sampler, "PROCESSES_A_STEP", 10)
    real_steps = ProcessTree.read_in_steps
    seen: list[tuple[int, int]] = []  # (loop turns so far, thread) at each step
    turns = [0]

    def read_in_steps(step: int) -> Generator[None, None, ProcessTree | None]:
        steps = real_steps(step)
        while True:
            seen.append((turns[0], threading.get_ident()))
            try:
                next(steps)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            yield

    monkeypatch.setattr(ProcessTree, "read_in_steps", staticmethod(read_in_steps))

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        def tick() -> None:
            turns[0] += 1
            if not done:
                asyncio.get_running_loop().call_soon(tick)

        done = False
        sleeper(table)
        tick()
        await table.cwd_sampler.sample()
        done = True
        assert len(seen) > 2, "/proc has more than 20 entries: several steps"
        assert {thread for _, thread in seen} == {threading.get_ident()}
        counts = [count for count, _ in seen]
        assert counts == sorted(set(counts)), "the loop ran between every two steps"

    with_table(tmp_path, test)


def test_an_idle_screen_is_swept_once_started(tmp_path: Path) -> None:
    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        pane = sleeper(table)
        assert pane.screen_lines()  # a look: the screen is used now
        table.start()
        loop.ahead += 10  # the first sweep: used 10 s ago, less than the idle time
        await settled("the first sweep")
        assert pane.view.screen.is_live
        loop.ahead += 60
        await until(lambda: not pane.view.screen.is_live, "the sweep")

    with_table(tmp_path, test, screen_idle_seconds=60, cwd_sample_seconds=3600)


# -- restore -----------------------------------------------------------------------------


def test_a_restored_title_reaches_the_observers(tmp_path: Path) -> None:
    session = one_pane_session(tmp_path, 4, ["sleep", "60"], title="vim notes.txt")

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        heard = Recorder()
        table.add_observer(heard)
        assert restore_session(table, session, str(tmp_path), None) == []
        (pane,) = table
        assert (pane.title, pane.title_explicit) == ("vim notes.txt", False)
        assert (pane.id, ("Title",)) in heard.changes

    with_table(tmp_path, test)


def test_the_cells_budget_keeps_the_sum_of_every_panes_size(tmp_path: Path) -> None:
    """The budget's running total is the sum over the table after every way a pane comes,
    changes size or goes: a spawn, a resize, a close, a restore that holds a place."""
    session = one_pane_session(tmp_path, 9, ["no-such-program-here"], rows=30, cols=100)

    def assert_counted(table: PaneTable) -> None:
        assert table.cells.in_use == sum(pane.rows * pane.cols for pane in table)

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        assert table.cells.in_use == 0
        panes = [sleeper(table) for _ in range(3)]
        assert_counted(table)
        panes[0].resize(50, 120)
        panes[1].resize(10, 20)
        assert_counted(table)
        table.close(panes[2].id)
        assert_counted(table)
        problems = restore_session(table, session, str(tmp_path), None)
        assert problems and len(table) == 3  # the missing program holds its place
        assert_counted(table)
        for pane in list(table):
            table.close(pane.id)
        assert table.cells.in_use == 0

    with_table(tmp_path, test)


def test_a_held_pane_is_restored_from_the_snapshot_after_a_crash(tmp_path: Path) -> None:
    """The fd store's record of a held pane says "running, no terminal": a muxd that
    follows a crash leaves it to the snapshot (which keeps held panes) to hold again."""
    session = one_pane_session(tmp_path, 6, ["sleep", "60"], window=3)

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        choices = RestoreChoices(mode=RestoreMode.ASK)
        assert restore_session(table, session, str(tmp_path), None, choices=choices) == []
        (held,) = table
        assert (held.id, held.window, held.state, held.pid) == (6, 3, PaneState.HELD, 0)
        (record,) = handover_record(table).panes
        assert (record.running, record.master_fd, record.pid) == (True, None, 0)

    with_table(tmp_path, test)


@pytest.mark.parametrize("after_crash", [False, True], ids=["upgrade", "crash"])
def test_a_held_pane_is_handed_over_through_the_snapshot(tmp_path: Path, after_crash: bool) -> None:
    """An upgrade (or a crash) leaves a held pane to the snapshot, listed as held: the
    next muxd holds it again in its place, whatever the mode says by then."""
    session = one_pane_session(tmp_path, 6, ["sleep", "60"], window=3)
    records: list[TableRecord] = []

    async def hold(table: PaneTable, loop: SteeredLoop) -> None:
        choices = RestoreChoices(mode=RestoreMode.ASK)
        assert restore_session(table, session, str(tmp_path), None, choices=choices) == []
        records.append(handover_record(table))

    async def resume(table: PaneTable, loop: SteeredLoop) -> None:
        unresumed = resume_into(table, records[0], after_crash=after_crash)
        assert (unresumed.held, unresumed.ended, len(table)) == ([6], [], 0)
        choices = RestoreChoices(mode=RestoreMode.ALWAYS, still_held=frozenset(unresumed.held))
        restored = restore_session(table, session, str(tmp_path), None, only={6}, choices=choices)
        assert restored == []
        (held,) = table
        assert (held.id, held.window, held.state, held.pid) == (6, 3, PaneState.HELD, 0)

    with_table(tmp_path, hold)
    with_table(tmp_path, resume)
