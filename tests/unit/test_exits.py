"""Reaping children: through pidfds, and through SIGCHLD where pidfds are refused
(kernels before 5.3, seccomp filters, macOS)."""

import asyncio
import os
import subprocess

import pytest

from mux.panes import exits
from mux.panes.process import ChildProcess
from tests.loop_support import settled


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "sigchld"])
def test_exit_statuses_are_reported_and_children_reaped(
    pidfd: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not pidfd:
        monkeypatch.setattr(exits, "_pidfd_works", lambda: False)

    async def run() -> dict[str, int]:
        loop = asyncio.get_running_loop()
        watcher = exits.ExitWatcher(loop)
        results: dict[str, int] = {}
        done = asyncio.Event()
        children = {
            "code": subprocess.Popen(["sh", "-c", "exit 3"]),
            "signal": subprocess.Popen(["sh", "-c", "kill -TERM $$"]),
        }
        for name, process in children.items():

            def record(status: int, name: str = name) -> None:
                results[name] = status
                if len(results) == len(children):
                    done.set()

            watcher.watch(process, record)
        await asyncio.wait_for(done.wait(), timeout=10)
        for process in children.values():
            assert process.returncode is not None  # reaped: no zombie left
        watcher.close()
        return results

    assert asyncio.run(run()) == {"code": 3, "signal": -15}


def test_child_process_poll() -> None:
    process = subprocess.Popen(["sh", "-c", "exit 5"])
    process.returncode = 0  # keep subprocess from reaping it itself
    child = ChildProcess(process.pid)
    # Block until it has exited, without reaping it: poll() must do that.
    os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
    assert child.poll() == 5
    assert child.returncode == 5
    assert child.poll() == 5  # asking again is harmless


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "sigchld"])
def test_a_paused_watcher_reaps_and_reports_nothing_until_resumed(
    pidfd: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade pauses the watcher before it leaves the bus: a child that ends then
    stays unreaped (the next muxd reports it); resumed (a failed upgrade), it is
    reported at once."""
    if not pidfd:
        monkeypatch.setattr(exits, "_pidfd_works", lambda: False)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        watcher = exits.ExitWatcher(loop)
        reported: list[int] = []
        gone = asyncio.Event()
        child = subprocess.Popen(["sh", "-c", "exit 5"])
        watcher.pause()
        watcher.watch(child, lambda status: (reported.append(status), gone.set()))
        # A zombie, waited for without reaping it (WNOWAIT).
        await asyncio.to_thread(os.waitid, os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        await settled("the loop to have seen the exit (a reader, SIGCHLD)")
        assert reported == [] and child.returncode is None, "not reaped while paused"
        watcher.resume()
        await asyncio.wait_for(gone.wait(), timeout=10)
        assert reported == [5] and child.returncode == 5
        watcher.close()

    asyncio.run(run())
