"""Every saved pane back in its own leaf (docs/windows.md#persistence): a pane that
cannot be started holds its place with a pane of no process, the next capture keeps
the saved pane in that place, and after a crash the restored panes go back into the
window their re-adopted siblings are in. A real pane table on a real loop."""

import asyncio
import shutil
from pathlib import Path

from mux.panes.table import PaneTable
from mux.protocol.layout import Leaf, Node, Split
from mux.protocol.names import EXIT_STATUS_NOT_STARTED
from mux.protocol.spawn_options import LaunchKind, SpawnRequest
from mux.protocol.window_options import WindowUpdate
from mux.state.capture import capture_session
from mux.state.restore import restore_session
from mux.state.restore_layout import restore_order, saved_layout
from mux.state.schema import Session
from mux.system.proctree import start_ticks
from tests.loop_support import until
from tests.unit.test_pane_table import SteeredLoop, with_table


def _request(*argv: str) -> SpawnRequest:
    return SpawnRequest(kind=LaunchKind.EXPLICIT, argv=argv)


def _named(node: Node, name: dict[int, str]) -> object:
    """The tree with each pane named by `name` (ids change at a restore)."""
    if isinstance(node, Leaf):
        return name[node.pane]
    assert isinstance(node, Split)
    return (node.direction, node.ratios, tuple(_named(child, name) for child in node.children))


def _live_shape(table: PaneTable) -> list[object]:
    argv = {pane.id: " ".join(pane.argv) for pane in table}
    return [_named(window.layout, argv) for window in table.windows]


def _saved_shape(session: Session) -> list[object]:
    argv = {pane.id: " ".join(pane.argv) for pane in session.panes}
    return [_named(saved_layout(window), argv) for window in session.windows]


async def _close_all(table: PaneTable) -> None:
    """As a stop does: every pane closed, every program gone."""
    table.close_all()
    table.end_closing_sessions()
    await until(lambda: table.lingering_processes() == 0, "the old programs to end")


def _three_in_a_window(table: PaneTable, middle: str) -> None:
    """`sleep 620` | (`middle` over `sleep 622`), with the middle one focused."""
    first = table.spawn(_request("sleep", "620"))
    second = table.split(first.id, "horizontal", 0.4, _request(middle, "621"))
    table.split(second.id, "vertical", 0.5, _request("sleep", "622"))
    table.windows.update(first.window, WindowUpdate(None, None, None, second.id))


def test_a_pane_not_restored_keeps_its_leaf_and_is_saved_there(tmp_path: Path) -> None:
    program = tmp_path / "vanishing"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        _three_in_a_window(table, str(program))
        session = capture_session(table, 1)
        shape = _live_shape(table)
        assert _saved_shape(session) == shape
        await _close_all(table)
        saved_copy = program.read_bytes()
        program.unlink()

        (problem,) = restore_session(table, session, str(tmp_path), None)
        assert _live_shape(table) == shape, "every pane in its leaf, one of them held"
        holder = table.get(problem.pane.id)
        assert (holder.pid, holder.exit_status) == (0, EXIT_STATUS_NOT_STARTED)
        (window,) = table.windows
        assert window.focused_pane == holder.id, "the focus where it was"
        # The next snapshot keeps the saved pane in that leaf, under the holder's id.
        again = capture_session(table, 2, [(problem.pane, problem.window)])
        assert _saved_shape(again) == shape
        assert (again.windows[0].focused_pane, len(again.windows)) == (holder.id, 1)

        # With the program back, the next start puts it there for real.
        await _close_all(table)
        program.write_bytes(saved_copy)
        program.chmod(0o755)
        assert restore_session(table, again, str(tmp_path), None) == []
        assert _live_shape(table) == shape
        assert all(pane.is_running for pane in table)

    with_table(tmp_path, test)


def test_a_window_none_of_whose_panes_start_comes_back_held(tmp_path: Path) -> None:
    program = tmp_path / "vanishing"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        first = table.spawn(_request(str(program), "630"))
        table.split(first.id, "vertical", 0.5, _request(str(program), "631"))
        table.spawn(_request("sleep", "632"))  # a window of its own
        session = capture_session(table, 1)
        shape = _live_shape(table)
        await _close_all(table)
        program.unlink()
        problems = restore_session(table, session, str(tmp_path), None)
        assert len(problems) == 2
        assert _live_shape(table) == shape, "its window too, with both places held"
        assert {problem.window for problem in problems} == {table.get(problems[0].pane.id).window}

    with_table(tmp_path, test)


def test_after_a_crash_a_restored_pane_goes_back_beside_the_readopted(tmp_path: Path) -> None:
    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        _three_in_a_window(table, "sleep")
        session = capture_session(table, 1)
        shape = _live_shape(table)
        (window,) = table.windows
        # The middle pane's program ended with the crashed muxd (it had no scope of its
        # own); the others were re-adopted under their ids.
        lost = window.panes[1]
        lost_pid = table.get(lost).pid
        table.close(lost)
        table.end_closing_sessions()
        await until(lambda: start_ticks(lost_pid) is None, "its program to end")
        assert restore_session(table, session, str(tmp_path), None, only={lost}) == []
        assert [w.id for w in table.windows] == [window.id], "no window of its own"
        assert _live_shape(table) == shape, "and in its own leaf"

    with_table(tmp_path, test)


def test_a_place_holder_never_lingers_and_leaves_nothing_to_wait_for(tmp_path: Path) -> None:
    program = tmp_path / "vanishing"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        table.spawn(_request(str(program), "640"))
        session = capture_session(table, 1)
        await _close_all(table)
        program.unlink()
        (problem,) = restore_session(table, session, str(tmp_path), None)
        loop.ahead += 10  # far past the linger of exited panes
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert problem.pane.id in [pane.id for pane in table], "it waits for a person"
        table.close(problem.pane.id)
        assert table.lingering_processes() == 0, "no process to wait for, none signalled"
        assert len(table.windows) == 0

    with_table(tmp_path, test, exited_pane_linger_seconds=0.5)


def test_the_restore_order_is_the_order_restore_takes_panes_in(tmp_path: Path) -> None:
    """Contents are read ahead in this order (mux.lifecycle.contents_keeper): window by
    window, each in its layout's order, whatever order the panes were saved in."""

    async def test(table: PaneTable, loop: SteeredLoop) -> None:
        lone = table.spawn(_request("sleep", "619"))
        _three_in_a_window(table, "sleep")
        session = capture_session(table, 1)
        session = session.model_copy(update={"panes": list(reversed(session.panes))})
        order = [pane.argv[-1] for pane in restore_order(session)]
        assert order == ["619", "620", "621", "622"]
        assert [p.id for p in restore_order(session, {lone.id})] == [lone.id]
        await _close_all(table)

    with_table(tmp_path, test)
