"""Restore at login: N panes with their old contents, `restore = "always"` against `"lazy"`.

One session is made once: N panes (--panes, 500) on a fresh muxd (its own private bus and
XDG directories, tests/harness.py's Service), each printing --lines (2,000) numbered lines
and then `end PID` (its own pid: a line no other pane and no later run prints), then
sleeping. Once every pane shows its `end` line, `Snapshot()` (which saves every pane's
contents, sealed, beside the snapshot) and a stop. The state directory is kept aside, so
that every run starts from the same files: the same snapshot, contents and key.

Each run copies those files back, writes `restore = MODE` in the configuration and starts
muxd, timed from its start (the Popen) to:
- listed: the first `ListPanes` answered with all N panes (the client connects to muxd's
  private bus as soon as it is there and asks `NameHasOwner` first: nothing is activated);
- contents visible: every pane's `GetScreen` shows its old `end PID` line (the last line
  it printed before the stop). The screens are asked for together, and asked again for
  the panes that do not show it yet;
- running ("always" only): the first `ListPanes` with every pane's state "running".
A restarted program finds a file the bench left and prints only `end PID` (its new pid):
like a shell, it says little when it starts again, so the old `end` line stays on its
screen, above the restored marker. In "lazy" mode the panes come back held (no process)
and must still be held after the bench has read their screens (a screen read is no
attach and no input). muxd's log gives two more times: its first line (the interpreter
and the imports) and its `ready` line (after the restore). Beside them, a start with
nothing to restore (an empty state directory): the baseline. Then muxd is stopped
(SIGTERM until it has exited) and the next start begins. Medians of --runs (3) each, the
kinds alternating.

Printed: the session's figures (spawn, Snapshot() with contents, contents on disk per
pane), a table empty / "always" / "lazy" with lazy's ratio to always, the same less the
empty start, one pass of N screen reads (the check's own cost, in every "visible"
figure), and the goal: lazy <= 0.5 s to every pane listed and its contents visible, from
muxd's start and beyond an empty start. Nothing is asserted.

Run from the repository root: python3 bench/restore_login.py [--panes 500] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbus_fast.aio import MessageBus
from tests.harness import Service, temp_root

from common import TIMEOUT, call, connect, median, name_has_owner, print_table, spawn, wait_for

GOAL_SECONDS = 0.5
MODES = ("always", "lazy")
KINDS = ("empty", *MODES)  # "empty": a start with nothing to restore, for the baseline
CONFIG = 'kill_grace_seconds = 1\nrestore = "{mode}"\n'
# Read together: a bounded number of calls in flight keeps the bus's queue short.
SCREENS_AT_ONCE = 100
CONTENTS_NAME = re.compile(r"[0-9a-f]{32}")


def program(lines: int, restarted: Path) -> list[str]:
    """Its old output, then `end PID`; started again (the file is there), only `end PID`."""
    script = (
        f'[ -e {restarted} ] || seq -f "%05g the old output of this pane, from before the stop"'
        f' 1 {lines}; echo "end $$"; exec sleep 100000'
    )
    return ["sh", "-c", script]


@dataclass
class Session:
    panes: int
    spawn_s: float = 0.0
    shown_s: float = 0.0  # from the last Spawn to every pane showing its `end` line
    snapshot_s: float = 0.0
    contents_files: int = 0
    contents_bytes: int = 0
    ends: dict[int, str] = field(default_factory=dict)  # pane id -> its `end PID` line
    all_contents_s: float = 0.0  # Snapshot() asked until every pane's contents are saved


@dataclass
class Run:
    mode: str
    listed_s: float = 0.0
    visible_s: float = 0.0
    running_s: float = 0.0  # "always": every program running (0: not asked)
    held_after: int = 0  # panes still held once their screens were read
    check_pass_s: float = 0.0  # one more pass of N screen reads, once all were seen
    logging_s: float = 0.0  # start -> muxd's first log line (the interpreter, imports)
    ready_s: float = 0.0  # start -> muxd's log says ready (after the restore)


async def screens_showing(bus: MessageBus, wanted: dict[int, str]) -> set[int]:
    """The panes whose screen shows their wanted line, asked SCREENS_AT_ONCE at a time."""
    shown: set[int] = set()
    ids = list(wanted)
    for start in range(0, len(ids), SCREENS_AT_ONCE):
        chunk = ids[start : start + SCREENS_AT_ONCE]
        replies = await asyncio.gather(*(call(bus, "GetScreen", "t", [p]) for p in chunk))
        for pane, (lines,) in zip(chunk, replies, strict=True):
            if any(line.rstrip() == wanted[pane] for line in lines):
                shown.add(pane)
    return shown


async def make_session(svc: Service, session: Session, lines: int, restarted: Path) -> None:
    bus = await connect(svc.bus_address)
    try:
        argv = program(lines, restarted)
        began = time.perf_counter()
        ids = [await spawn(bus, argv) for _ in range(session.panes)]
        session.spawn_s = time.perf_counter() - began
        began = time.perf_counter()
        (entries,) = await call(bus, "ListPanes")
        pids = {int(e["id"].value): int(e["pid"].value) for e in entries}
        session.ends = {pane: f"end {pids[pane]}" for pane in ids}
        waiting = dict(session.ends)
        deadline = time.monotonic() + 10 * TIMEOUT
        while waiting:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(waiting)} panes never showed their `end` line")
            for pane in await screens_showing(bus, waiting):
                del waiting[pane]
            await asyncio.sleep(0.05)
        session.shown_s = time.perf_counter() - began
        # A Snapshot saves contents for at most 5 s (the rest at the next periodic save):
        # asked again until every pane's contents are on disk.
        contents = svc.state / "mux" / "contents"
        began = time.perf_counter()
        await call(bus, "Snapshot")
        session.snapshot_s = time.perf_counter() - began
        while len([f for f in contents.iterdir() if not f.name.startswith(".")]) < len(ids):
            await call(bus, "Snapshot")
        session.all_contents_s = time.perf_counter() - began
    finally:
        bus.disconnect()


async def _connected(address: str, deadline: float) -> MessageBus:
    """muxd's private bus, as soon as muxd has started it."""
    while True:
        try:
            return await connect(address)
        except (OSError, EOFError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.002)


async def measure_start(svc: Service, run: Run, ends: dict[int, str]) -> None:
    """muxd started here, timed from its start to each figure of `run`; `ends`: each
    pane's old `end PID` line (empty: a start with nothing to restore)."""
    deadline = time.monotonic() + 10 * TIMEOUT
    log_from = svc.log_path.stat().st_size if svc.log_path.exists() else 0
    began, began_wall = time.perf_counter(), time.time()
    svc.start(wait=False)
    bus = await _connected(svc.bus_address, deadline)
    try:
        while True:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{run.mode}: the panes were never all listed")
            if await name_has_owner(bus):
                (entries,) = await call(bus, "ListPanes")
                if len(entries) == len(ends):
                    run.listed_s = time.perf_counter() - began
                    break
            await asyncio.sleep(0.002)
        waiting = dict(ends)
        while waiting:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{run.mode}: {len(waiting)} panes never showed old contents")
            for pane in await screens_showing(bus, waiting):
                del waiting[pane]
        run.visible_s = time.perf_counter() - began
        while run.mode != "lazy":
            if time.monotonic() > deadline:
                raise RuntimeError("always: the programs were never all running")
            (entries,) = await call(bus, "ListPanes")
            if all(e["state"].value == "running" for e in entries):
                run.running_s = time.perf_counter() - began
                break
            await asyncio.sleep(0.005)
        started = time.perf_counter()
        await screens_showing(bus, ends)
        run.check_pass_s = time.perf_counter() - started
        (entries,) = await call(bus, "ListPanes")
        run.held_after = sum(e["state"].value == "held" for e in entries)
    finally:
        bus.disconnect()
    svc.wait_ready()  # its log says so too (the harness's own check), before the stop
    stamps = log_times(svc.log_path.read_bytes()[log_from:].decode(errors="replace"))
    run.logging_s = stamps[0] - began_wall
    run.ready_s = stamps[1] - began_wall


def log_times(text: str) -> tuple[float, float]:
    """The times of muxd's first log line and of its `ready:` line (epoch seconds; the
    log has milliseconds)."""
    stamps: list[float] = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            stamp = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            if not stamps or " ready: " in line:
                stamps.append(stamp)
        if len(stamps) == 2:
            return stamps[0], stamps[1]
    raise RuntimeError("muxd's log has no ready line")


def one_run(root: Path, saved: Path, session: Session, mode: str) -> Run:
    """A start of muxd on a copy of the saved state directory with `restore = mode`, or
    ("empty") on an empty state directory: the start with nothing to restore."""
    state = root / "state"
    shutil.rmtree(state, ignore_errors=True)
    if mode == "empty":
        state.mkdir(mode=0o700)
    else:
        shutil.copytree(saved, state, symlinks=True)
    config = CONFIG.format(mode="always" if mode == "empty" else mode)
    svc = Service(root, bus_address=None, config=config)
    run = Run(mode)
    try:
        asyncio.run(measure_start(svc, run, {} if mode == "empty" else session.ends))
    finally:
        stop(svc)
    return run


def stop(svc: Service) -> None:
    """SIGTERM until muxd has exited; anything of its environment left is ended."""
    svc.stop()
    for pid in svc.own_processes():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(AssertionError):
        wait_for(lambda: not svc.own_processes(), TIMEOUT, what="muxd's processes to end")


def contents_on_disk(state: Path) -> tuple[int, int]:
    directory = state / "mux" / "contents"
    # One file a pane, named by its launch's invocation (beside each, a lock file).
    files = [p for p in directory.glob("*") if CONTENTS_NAME.fullmatch(p.name)]
    return len(files), sum(p.stat().st_size for p in files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--panes", type=int, default=500)
    parser.add_argument("--lines", type=int, default=2000, help="lines each pane prints")
    parser.add_argument("--runs", type=int, default=3, help="starts of each mode")
    args = parser.parse_args()
    session = Session(args.panes)
    runs: dict[str, list[Run]] = {kind: [] for kind in KINDS}
    with temp_root() as root:
        restarted = root / "restarted"
        svc = Service(root, bus_address=None, config=CONFIG.format(mode="always"))
        try:
            svc.start()
            asyncio.run(make_session(svc, session, args.lines, restarted))
        finally:
            stop(svc)
        restarted.touch()
        saved = root / "saved-state"
        shutil.copytree(root / "state", saved, symlinks=True)
        session.contents_files, session.contents_bytes = contents_on_disk(saved)
        for _ in range(args.runs):
            for kind in KINDS:
                runs[kind].append(one_run(root, saved, session, kind))
    report(args, session, runs)
    return 0


def report(args: argparse.Namespace, session: Session, runs: dict[str, list[Run]]) -> None:
    n = session.panes
    per_pane = session.contents_bytes / max(session.contents_files, 1)
    print(f"restore at login: {n} panes x {args.lines} lines, median of {args.runs} starts\n")
    print_table(
        ["the session", "value"],
        [
            ["spawn (warm client), ms", f"{session.spawn_s * 1000:.0f}"],
            ["every pane's output on its screen, ms", f"{session.shown_s * 1000:.0f}"],
            [
                "one Snapshot() (contents saved for at most 5 s), ms",
                f"{session.snapshot_s * 1000:.0f}",
            ],
            [
                "Snapshot() until every pane's contents are saved, ms",
                f"{session.all_contents_s * 1000:.0f}",
            ],
            ["contents files on disk", f"{session.contents_files}/{n}"],
            ["contents on disk per pane, KiB", f"{per_pane / 1024:.1f}"],
        ],
    )

    def ms(kind: str, figure: str) -> float:
        return median([getattr(run, figure) for run in runs[kind]]) * 1000

    def cell(kind: str, figure: str) -> str:
        if kind == "lazy" and figure == "running_s":
            return "- (held)"
        return f"{ms(kind, figure):.0f}"

    rows = []
    for label, figure in (
        ("start -> muxd's first log line (interpreter, imports)", "logging_s"),
        ("start -> muxd's log says ready (restore done)", "ready_s"),
        ("start -> every pane listed (ListPanes)", "listed_s"),
        ("start -> every pane's old contents on its screen", "visible_s"),
        ("start -> every program running", "running_s"),
        ("one pass of the check (N GetScreen)", "check_pass_s"),
    ):
        always, lazy = ms("always", figure), ms("lazy", figure)
        ratio = f"{lazy / always:.2f}" if always > 0 and lazy > 0 else "-"
        rows.append(
            [label, cell("empty", figure), cell("always", figure), cell("lazy", figure), ratio]
        )
    for label, figure in (
        ("  the same less the empty start: listed", "listed_s"),
        ("  the same less the empty start: visible", "visible_s"),
    ):
        always, lazy = (ms(kind, figure) - ms("empty", figure) for kind in MODES)
        rows.append([label, "", f"{always:.0f}", f"{lazy:.0f}", f"{lazy / always:.2f}"])
    held = [run.held_after for run in runs["lazy"]]
    rows.append(["panes held after the check (lazy)", "", "", f"{min(held)}..{max(held)}/{n}", ""])
    print()
    print_table(["ms (median)", "empty", "always", "lazy", "lazy / always"], rows)
    print("\nevery start, ms (listed / visible):")
    for kind in KINDS:
        figures = ", ".join(
            f"{run.listed_s * 1000:.0f}/{run.visible_s * 1000:.0f}" for run in runs[kind]
        )
        print(f"  {kind}: {figures}")
    lazy_ms = ms("lazy", "visible_s")
    restore_ms = lazy_ms - ms("empty", "visible_s")
    held_ok = "" if min(held) == n else f" (but only {min(held)}/{n} panes stayed held)"
    print(
        f"\ngoal: lazy <= {GOAL_SECONDS * 1000:.0f} ms to every pane listed and its contents"
        f" visible: {lazy_ms:.0f} ms from muxd's start, {verdict(lazy_ms)};"
        f" {restore_ms:.0f} ms more than a start with nothing to restore,"
        f" {verdict(restore_ms)}{held_ok}"
    )


def verdict(milliseconds: float) -> str:
    return "met" if milliseconds <= GOAL_SECONDS * 1000 else "missed"


if __name__ == "__main__":
    raise SystemExit(main())
