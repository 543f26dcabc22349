"""The upgrade's state machine, without a muxd: stand-ins for the parts it drives,
a real ExitWatcher and real child processes for the new program's check."""

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mux.federation.ledger import HubLedger
from mux.lifecycle import upgrader as upgrader_module
from mux.lifecycle.upgrade import CHECK_HANDOVER_FLAG
from mux.lifecycle.upgrader import Upgrader, UpgradeState
from mux.panes.exits import ExitWatcher
from mux.panes.ids import IdSpace
from mux.protocol.errors import Unavailable
from mux.system.notify import Supervisor


class Recorder:
    """Records every call made to it, by name."""

    def __init__(self, calls: list[str], name: str) -> None:
        self._calls = calls
        self._name = name

    def _record(self, what: str) -> None:
        self._calls.append(f"{self._name}.{what}")


class FakeTable(Recorder):
    def __init__(self, calls: list[str], loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(calls, "table")
        self.exits = ExitWatcher(loop)
        # What mux.panes.table_resume.handover_record reads of a table with no panes.
        self.ids = IdSpace()
        self.closing = SimpleNamespace(unreaped=lambda: [])
        self.windows = SimpleNamespace(records=lambda: [])
        self.held: list[int] = []  # no pane waits to be started

    def __iter__(self) -> Any:
        return iter([])

    def end_closing_sessions(self) -> None:
        self._record("end_closing_sessions")


class FakeKeeper(Recorder):
    generation = 7
    problems: tuple[Any, ...] = ()
    session_problem = ""
    saving_disabled = False

    async def hold_for_upgrade(self) -> None:
        self._record("hold_for_upgrade")

    def release(self) -> None:
        self._record("release")


class FakeControl(Recorder):
    private_bus_pid = None
    hub = SimpleNamespace(hub_id=bytes(16), ledger=HubLedger())

    def __init__(self, calls: list[str], flushed: asyncio.Event) -> None:
        super().__init__(calls, "control")
        self._flushed = flushed

    async def flush(self) -> None:
        self._record("flush")
        await self._flushed.wait()

    async def close_for_upgrade(self) -> None:
        self._record("close_for_upgrade")

    async def reopen_after_failed_upgrade(self) -> None:
        self._record("reopen_after_failed_upgrade")


class FakeAttach(Recorder):
    inherited = None

    async def end_sessions_for_upgrade(self) -> None:
        self._record("end_sessions_for_upgrade")

    def resume(self) -> None:
        self._record("resume")


class FakeStatus:
    def line(self) -> str:
        return "0 panes; test bus"


class FakePaths:
    def __init__(self, root: Path) -> None:
        self.upgrade_outcome = root / "upgrade.json"


def make_upgrader(
    tmp_path: Path, calls: list[str], flushed: asyncio.Event, stopping: asyncio.Event
) -> Upgrader:
    loop = asyncio.get_running_loop()
    locks = (open(tmp_path / "lock", "ab"), open(tmp_path / "state-lock", "ab"))  # noqa: SIM115
    return Upgrader(
        paths=FakePaths(tmp_path),  # type: ignore[arg-type]
        locks=locks,
        generation=0,
        table=FakeTable(calls, loop),  # type: ignore[arg-type]
        keeper=FakeKeeper(calls, "keeper"),  # type: ignore[arg-type]
        control=FakeControl(calls, flushed),  # type: ignore[arg-type]
        attach=FakeAttach(calls, "attach"),  # type: ignore[arg-type]
        supervisor=Supervisor({}),
        status=FakeStatus(),  # type: ignore[arg-type]
        stopping=stopping,
        fail=lambda: calls.append("fail"),
    )


def new_program(monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """The program the upgrade would exec: a shell running `script` on the check."""
    monkeypatch.setattr(upgrader_module, "muxd_argv", lambda: ["/bin/sh", "-c", script, "sh"])


def test_a_program_that_fails_its_check_refuses_the_upgrade_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_program(monkeypatch, "cat >/dev/null; exit 1")

    async def scenario() -> list[str]:
        calls: list[str] = []
        upgrader = make_upgrader(tmp_path, calls, asyncio.Event(), asyncio.Event())
        with pytest.raises(Unavailable, match="upgrade refused, mux keeps running"):
            await upgrader.upgrade()
        assert upgrader.state is UpgradeState.IDLE
        assert upgrader.in_progress is None
        return calls

    assert asyncio.run(scenario()) == []  # nothing drained, nothing closed


def test_the_check_is_given_the_state_the_new_program_would_resume_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = tmp_path / "given.json"
    new_program(monkeypatch, f'[ "$1" = {CHECK_HANDOVER_FLAG} ] && cat > {given}; exit 1')

    async def scenario() -> None:
        upgrader = make_upgrader(tmp_path, [], asyncio.Event(), asyncio.Event())
        with pytest.raises(Unavailable):
            await upgrader.upgrade()

    asyncio.run(scenario())
    handover = json.loads(given.read_text())
    assert handover["generation"] == 1  # the next one
    assert handover["snapshot_generation"] == FakeKeeper.generation


def test_a_second_upgrade_while_one_is_under_way_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_program(monkeypatch, "cat >/dev/null; exit 0")

    async def scenario() -> None:
        flushed, stopping = asyncio.Event(), asyncio.Event()
        upgrader = make_upgrader(tmp_path, [], flushed, stopping)
        await upgrader.upgrade()
        assert upgrader.state is UpgradeState.DRAINING
        with pytest.raises(Unavailable, match="already under way"):
            await upgrader.upgrade()
        stopping.set()
        flushed.set()
        await asyncio.sleep(0)  # the drain starts on the next turn
        task = upgrader.in_progress
        assert task is not None
        await task

    asyncio.run(scenario())


def test_a_stop_during_the_drain_recovers_and_serves_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_program(monkeypatch, "cat >/dev/null; exit 0")

    async def scenario() -> tuple[Upgrader, list[str]]:
        calls: list[str] = []
        flushed, stopping = asyncio.Event(), asyncio.Event()
        upgrader = make_upgrader(tmp_path, calls, flushed, stopping)
        await upgrader.upgrade()
        for _ in range(100):  # the drain starts once the reply is on its way
            if calls:
                break
            await asyncio.sleep(0)
        task = upgrader.in_progress
        assert task is not None  # kept referenced while it waits
        assert calls == ["control.flush"]
        exits = upgrader._table.exits  # (the real ExitWatcher of the stand-in table)
        assert exits.paused, "exits are the next muxd's to report from before the bus is left"
        stopping.set()  # the service is asked to stop before the exec
        flushed.set()
        await task
        assert not exits.paused, "this muxd reports them again"
        return upgrader, calls

    upgrader, calls = asyncio.run(scenario())
    assert upgrader.state is UpgradeState.IDLE
    # Saving held, attach closed and the bus left come undone; nothing was exec'd.
    assert calls == [
        "control.flush",
        "keeper.hold_for_upgrade",
        "attach.end_sessions_for_upgrade",
        "control.close_for_upgrade",
        "keeper.release",
        "attach.resume",
        "control.reopen_after_failed_upgrade",
    ]
    outcome = json.loads((tmp_path / "upgrade.json").read_text())
    assert outcome["error"] == "upgrade failed: the service is stopping"
