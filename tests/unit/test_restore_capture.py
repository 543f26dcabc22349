"""Capture and restore without muxd: a real pane table on a real loop, real programs.

What a snapshot keeps of the panes (docs/dbus-api.md#snapshots-and-upgrades) and
what a restore makes of it: the same programs, titles, windows, sizes and
directories; a program that is gone or still running, and a directory that is
gone, are reported or noted, never guessed around.
"""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from mux.panes.pane import Pane
from mux.panes.table import PaneTable
from mux.protocol.names import EXIT_STATUS_NOT_STARTED
from mux.protocol.spawn_options import LaunchKind, SpawnRequest
from mux.state import schema
from mux.state.capture import SnapshotCache, capture_session, capture_steps
from mux.state.restore import restore_session
from mux.state.schema import CwdRecord, LayoutNode, PaneSnapshot, WindowSnapshot
from mux.state.session_file import parse_session, session_bytes
from mux.system.steps import all_at_once
from tests.loop_support import until
from tests.unit.test_pane_table import SteeredLoop, with_table


def spawn(table: PaneTable, argv: tuple[str, ...], **options: object) -> int:
    request = SpawnRequest(kind=LaunchKind.EXPLICIT, argv=argv, **options)  # type: ignore[arg-type]
    return table.spawn(request).id


async def _close_every_pane(table: PaneTable) -> None:
    """Every pane closed and its program gone, as after a stop: a restore started while
    an old program still runs (SIGKILL is not instant) would not start it again."""
    for pane in list(table):
        table.close(pane.id)
    table.end_closing_sessions()
    await until(lambda: table.lingering_processes() == 0, "the old programs to end")


def test_a_captured_session_restores_the_same_panes_in_the_same_windows(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        first = spawn(table, ("sleep", "601"), title="first", cwd=str(work), rows=30, cols=100)
        window = table.get(first).window
        spawn(table, ("sleep", "602"), window=window, env={"MUX_TEST": "1"})
        spawn(table, ("sleep", "603"))
        exited = spawn(table, ("true",))
        await until(lambda: not table.get(exited).is_running, "true to exit")

        # Through the bytes on disk, as a restart reads them.
        session = parse_session(session_bytes(capture_session(table, 7)))
        assert session.generation == 7
        assert [p.argv for p in session.panes] == [
            ["sleep", "601"],
            ["sleep", "602"],
            ["sleep", "603"],
        ]  # exited: never again
        assert [len(w.nodes) > 1 for w in session.windows] == [True, False]

        await _close_every_pane(table)
        assert restore_session(table, session, str(tmp_path), None) == []
        restored = {pane.argv: pane for pane in table}
        assert set(restored) == {("sleep", "601"), ("sleep", "602"), ("sleep", "603")}
        one, two, three = (restored[("sleep", n)] for n in ("601", "602", "603"))
        assert one.window == two.window != three.window
        assert (one.title, one.rows, one.cols, one.cwd) == ("first", 30, 100, str(work))
        assert one.launch.invocation == session.panes[0].invocation
        assert two.launch.env_overrides == (("MUX_TEST", "1"),)
        await until(lambda: "a new process" in "\n".join(one.screen_lines()), "the notice")

    with_table(tmp_path, test)


def test_a_vanished_program_is_reported_and_a_vanished_directory_noted(tmp_path: Path) -> None:
    program = tmp_path / "vanishing"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    gone = tmp_path / "gone"
    gone.mkdir()

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        spawn(table, (str(program), "600"))
        moved = spawn(table, ("sleep", "604"), cwd=str(gone))
        session = capture_session(table, 1)
        await _close_every_pane(table)
        program.unlink()
        gone.rmdir()

        (problem,) = restore_session(table, session, str(tmp_path), None)
        assert problem.pane.argv == [str(program), "600"]
        assert "does not exist" in problem.reason
        # Its place is held, under the id it is kept with, by a pane with no process.
        holder = table.get(problem.pane.id)
        assert (holder.is_running, holder.has_process) == (False, False)
        assert (holder.exit_status, holder.argv) == (EXIT_STATUS_NOT_STARTED, (str(program), "600"))
        assert holder.window == problem.window
        assert "does not exist" in " ".join(holder.screen_lines())  # (wrapped at words)
        (pane,) = [pane for pane in table if pane.is_running]
        assert pane.argv == ("sleep", "604") and pane.id == moved  # its own id
        assert pane.cwd == str(tmp_path), "a directory that is gone falls back to home"
        await until(lambda: "no longer exists" in " ".join(pane.screen_lines()), "the note")
        # Kept for repair: the next capture still holds the pane that failed.
        again = capture_session(table, 2, [(problem.pane, problem.window)])
        assert [str(program), "600"] in [p.argv for p in again.panes]

    with_table(tmp_path, test)


def test_a_program_still_running_from_before_is_not_started_twice(tmp_path: Path) -> None:
    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        survivor = spawn(table, ("sleep", "605"))
        # Its pid and start time are in the snapshot; it is left running, as a program
        # that ignored the hangup of a muxd killed with SIGKILL.
        session = capture_session(table, 1)
        (problem,) = restore_session(table, session, str(tmp_path), None)
        assert "still runs" in problem.reason
        running = [pane.id for pane in table if pane.is_running]
        assert running == [survivor], "no second copy was started"
        os.kill(table.get(survivor).pid, 0)

    with_table(tmp_path, test)


class _Without:
    """The table without one pane (in a window of its own)."""

    def __init__(self, table: PaneTable, pane_id: int) -> None:
        self.windows = table.windows
        self._panes = [pane for pane in table if pane.id != pane_id]

    def __iter__(self) -> Iterator[Pane]:
        return iter(self._panes)


def test_a_capture_in_steps_saves_the_panes_of_its_start_as_they_are_at_their_step(
    tmp_path: Path,
) -> None:
    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        first = spawn(table, ("sleep", "606"), title="before")
        window = table.get(first).window
        for n in range(4):
            spawn(table, ("sleep", f"61{n}"), window=window if n % 2 else 0)
        steps = capture_steps(table, 3, step=2)
        next(steps)  # the windows and panes to save are settled by the first step
        late = spawn(table, ("sleep", "620"))  # between steps: not in this capture
        taken = 1
        try:
            while True:
                next(steps)
                taken += 1
        except StopIteration as done:
            session = done.value
        assert taken >= 3, "five panes two at a time, after the windows"
        assert late not in [p.id for p in session.panes]
        one_go = capture_session(_Without(table, late), 3)
        assert session.model_dump(exclude={"saved_at"}) == one_go.model_dump(exclude={"saved_at"})
        # Read through the bytes a restart reads: the session's own rules hold.
        assert parse_session(session_bytes(session)).generation == 3

    with_table(tmp_path, test)


def test_a_capture_gives_every_field_of_every_model_leaving_no_default_to_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """model_construct copies the default of each field left out: a fifth of a 512-pane
    snapshot's time went there. A field added to the schema must be given here too
    (the models share one set of field names, which must be true of each)."""
    given: dict[str, list[set[str]]] = {}

    def spy(model: type[BaseModel]) -> None:
        real = model.model_construct

        def construct(_fields_set: set[str] | None = None, **values: object) -> BaseModel:
            given.setdefault(model.__name__, []).append(set(values))
            return real(_fields_set, **values)

        monkeypatch.setattr(model, "model_construct", construct)

    for model in (PaneSnapshot, CwdRecord, WindowSnapshot, LayoutNode):
        spy(model)

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        first = spawn(table, ("sleep", "611"))
        spawn(table, ("sleep", "612"), window=table.get(first).window)
        spawn(table, ("sleep", "613"))
        session = capture_session(table, 1)
        assert len(given["PaneSnapshot"]) == 3 and len(given["LayoutNode"]) == 4
        for name, calls in given.items():
            fields = set(getattr(schema, name).model_fields)
            for values in calls:
                assert values == fields, f"{name} left {sorted(fields - values)} to defaults"
        for pane in session.panes:  # and what they share says so truly
            assert pane.model_fields_set == set(PaneSnapshot.model_fields)

    with_table(tmp_path, test)


def test_a_cached_capture_reuses_what_did_not_change_and_is_never_stale(tmp_path: Path) -> None:
    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        first = spawn(table, ("sleep", "631"))
        second = spawn(table, ("sleep", "632"), window=table.get(first).window)
        third = spawn(table, ("sleep", "633"))
        cache = SnapshotCache()

        def captured() -> dict[int, object]:
            session = all_at_once(capture_steps(table, 1, cache=cache))
            uncached = capture_session(table, 1)
            assert session.model_dump(exclude={"saved_at"}) == uncached.model_dump(
                exclude={"saved_at"}
            )
            models: dict[int, object] = {p.id: p for p in session.panes}
            models.update({-w.id: w for w in session.windows})
            return models

        before = captured()
        again = captured()
        assert all(again[key] is model for key, model in before.items())
        table.get(second).resize(30, 100)  # a value the pane's model is made of
        fourth = spawn(table, ("sleep", "634"), window=table.get(third).window)
        after = captured()  # (and equal to an uncached capture: checked in captured())
        assert after[second] is not before[second]
        assert after[first] is before[first] and after[third] is before[third]
        assert after[-table.get(first).window] is before[-table.get(first).window]
        assert after[-table.get(fourth).window] is not before[-table.get(third).window]

    with_table(tmp_path, test)
