"""The autosaver's rules, on a real event loop and real files."""

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import mux.state.autosaver as autosaver_module
from mux.state.autosaver import Autosaver
from mux.state.capture import CaptureSteps, already_captured
from mux.state.schema import Session
from mux.state.session_file import parse_session
from tests.loop_support import settled, until


def _session(generation: int) -> Session:
    return Session(version=1, generation=generation, saved_at=0.0, windows=[], panes=[])


def _steps(generation: int) -> CaptureSteps:
    return already_captured(_session(generation))


def _untold(
    loop: asyncio.AbstractEventLoop,
    path: Path,
    capture: Callable[[int], CaptureSteps] = _steps,
    *,
    generation: int = 0,
    failed: Callable[[str], None] = lambda _r: None,
    debounce: float = autosaver_module.DEBOUNCE_SECONDS,
) -> Autosaver:
    """An autosaver whose saves nobody hears of."""
    return Autosaver(
        loop,
        path,
        capture,
        generation=generation,
        saved=lambda _g: None,
        failed=failed,
        debounce=debounce,
    )


def test_a_change_during_a_write_forces_one_more_write(tmp_path: Path) -> None:
    async def scenario() -> list[int]:
        loop = asyncio.get_running_loop()
        saved: list[int] = []
        done = asyncio.Event()
        autosaver: Autosaver

        def capture(generation: int) -> CaptureSteps:
            if generation == 1:
                autosaver.mark_dirty()  # a change while the first write is under way
            return _steps(generation)

        def on_saved(generation: int) -> None:
            saved.append(generation)
            if generation == 2:
                done.set()

        autosaver = Autosaver(
            loop,
            tmp_path / "s.json",
            capture,
            generation=0,
            saved=on_saved,
            failed=lambda _r: None,
            debounce=0.01,
        )
        autosaver.mark_dirty()
        autosaver.mark_dirty()  # debounced: one write for both
        await asyncio.wait_for(done.wait(), 10)
        return saved

    assert asyncio.run(scenario()) == [1, 2]
    assert parse_session((tmp_path / "s.json").read_bytes()).generation == 2


def test_final_saves_now_and_nothing_after(tmp_path: Path) -> None:
    async def scenario() -> tuple[int | None, list[int]]:
        loop = asyncio.get_running_loop()
        saved: list[int] = []
        autosaver = Autosaver(
            loop,
            tmp_path / "s.json",
            _steps,
            generation=41,
            saved=saved.append,
            failed=lambda _r: None,
            debounce=0.01,
        )
        autosaver.mark_dirty()
        final = await autosaver.final()
        autosaver.mark_dirty()  # the stop closing panes: not saved
        await settled("a write, if one were coming", within=1.0, tasks=True)
        return final, saved

    final, saved = asyncio.run(scenario())
    assert final == 42 and saved == [42]


def test_a_participant_that_cannot_come_to_rest_keeps_the_previous_snapshot(
    tmp_path: Path,
) -> None:
    from mux.state.autosaver import QuiesceError

    class Stuck:
        def prepare_final_snapshot(self) -> None:
            raise QuiesceError("a checkpoint writer did not drain")

    class Calm:
        prepared = False

        def prepare_final_snapshot(self) -> None:
            Calm.prepared = True

    async def scenario() -> tuple[int | None, int | None, list[str]]:
        loop = asyncio.get_running_loop()
        failures: list[str] = []
        autosaver = _untold(loop, tmp_path / "s.json", failed=failures.append)
        await autosaver.save_now()
        before = (tmp_path / "s.json").read_bytes()
        refused = await autosaver.final(participants=[Stuck()])
        assert (tmp_path / "s.json").read_bytes() == before
        again = _untold(loop, tmp_path / "s.json", generation=1, failed=failures.append)
        taken = await again.final(participants=[Calm()])
        return refused, taken, failures

    refused, taken, failures = asyncio.run(scenario())
    assert refused is None and "did not drain" in failures[0]
    assert taken == 2 and Calm.prepared


def test_the_loop_runs_between_capture_steps_except_in_the_final_snapshot(
    tmp_path: Path,
) -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        loop = asyncio.get_running_loop()
        seen: list[str] = []

        def capture(generation: int) -> CaptureSteps:
            for step in range(3):
                seen.append(f"step {step}")
                loop.call_soon(seen.append, "loop")  # runs at the loop's next turn
                if step < 2:
                    yield
            return _session(generation)

        autosaver = _untold(loop, tmp_path / "s.json", capture)
        await autosaver.save_now()
        stepped, seen[:] = list(seen), []
        await autosaver.final()
        return stepped, seen[:4]

    stepped, final = asyncio.run(scenario())
    assert stepped[:5] == ["step 0", "loop", "step 1", "loop", "step 2"]
    assert final == ["step 0", "step 1", "step 2", "loop"]


def test_freed_memory_is_released_after_a_save_at_most_once_an_interval_and_never_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save inside the interval since the last release gets one when it ends (muxd may
    save nothing more for hours); saves meanwhile add none."""
    releases: list[float] = []
    monkeypatch.setattr(autosaver_module, "RELEASE_INTERVAL_SECONDS", 0.3)
    monkeypatch.setattr(
        autosaver_module, "release_free_memory", lambda: releases.append(time.monotonic())
    )

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        autosaver = _untold(loop, tmp_path / "s.json")
        first = time.monotonic()
        await autosaver.save_now()
        await until(lambda: len(releases) == 1, "the first save's release")
        await autosaver.save_now()
        await autosaver.save_now()
        assert len(releases) == 1  # inside the interval: not now
        await until(lambda: len(releases) == 2, "the release the interval owed")
        assert releases[1] - first >= 0.3
        await settled("a third release, if one were coming", within=1.0, tasks=True)
        assert len(releases) == 2  # two saves, one release

    asyncio.run(scenario())


def test_writes_while_changes_keep_coming_take_at_most_their_share_of_the_time(
    tmp_path: Path,
) -> None:
    """A write that took 50 ms, with a change during it: the next one starts no sooner
    than 9 x 50 ms after it began (WRITING_SHARE), though the debounce is 10 ms."""
    write_seconds = 0.05

    async def scenario() -> list[float]:
        loop = asyncio.get_running_loop()
        began: list[float] = []
        done = asyncio.Event()
        autosaver: Autosaver

        def capture(generation: int) -> CaptureSteps:
            began.append(loop.time())
            time.sleep(write_seconds)  # a big session's capture, holding the loop
            if generation == 1:
                autosaver.mark_dirty()
            else:
                done.set()
            return _steps(generation)

        autosaver = _untold(loop, tmp_path / "s.json", capture, debounce=0.01)
        autosaver.mark_dirty()
        await asyncio.wait_for(done.wait(), 10)
        return began

    first, second = asyncio.run(scenario())
    assert second - first >= 9 * write_seconds  # (1 - WRITING_SHARE) / WRITING_SHARE = 9
