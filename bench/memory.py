"""Memory per pane: muxd against a tmux server holding the same panes.

Both servers get the same panes, 80x24, added in three batches of `--panes`:

1. idle: `sleep 1000`, which prints nothing;
2. full screen: 24 lines of 80 characters (the last without a newline),
   then `sleep`;
3. history: 2000 lines of 80 characters (tmux's default history-limit is
   2000 lines; muxd keeps raw output in a ring of `scrollback_bytes`), then
   `sleep`.

A batch counts only once every pane's output has been consumed: its last
line is on the screen as `GetScreen` (which also makes muxd emulate it) or
`tmux capture-pane` shows it; idle panes are never looked at. Then the
server's VmRSS and Pss (smaps_rollup) are read. Last, muxd (configured with
`screen_idle_seconds = 1`) is given time to hibernate the emulators nobody
uses any more, and measured again ("hibernated"): the emulator is replaced by
its dump and the freed heap is given back to the OS. The baseline: a fresh muxd
with no pane (after a ListPanes) beside the tmux server with its one window, and
the floor under muxd's figure: the same interpreter, started as muxd is, having
loaded what muxd is built on (asyncio, dbus-fast's client, pydantic with a model
validated, the avt emulator), step by step. muxd's private
dbus-daemon is reported on its own line and not counted as muxd; the tmux
figure is the server process (tmux's first window, needed to have a session,
is part of its baseline).

Run from the repository root: python3 bench/memory.py [--panes N]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from dbus_fast.aio import MessageBus

from common import (
    REAL_PYTHON,
    Muxd,
    Tmux,
    call,
    connect,
    print_table,
    pss_kib,
    rss_kib,
    screen,
    spawn,
    wait_for,
)

GOAL = 2.0  # muxd per pane ≤ 2x tmux per pane
BASELINE_GOAL_MIB = 25.0  # muxd with no pane
# What muxd is built on, loaded one after another in one interpreter (the floor).
FLOOR_STEPS = (
    ("the interpreter (python3 -P, site)", "pass"),
    ("+ asyncio", "import asyncio"),
    ("+ dbus-fast's asyncio client", "import dbus_fast.aio"),
    (
        "+ pydantic, a model validated",
        "import pydantic\nclass M(pydantic.BaseModel):\n    x: int = 1\nM.model_validate({})",
    ),
    ("+ avt, one screen", "import avt\navt.Vt(80, 24)"),
)
HIBERNATE_AFTER = 1.0  # muxd's screen_idle_seconds for this run

COLS = 80
HISTORY_LINES = 2000


def numbered(n: int) -> str:
    """Line n as `seq -f %080g` prints it: exactly 80 characters."""
    return f"{n:080d}"


@dataclass(frozen=True)
class Batch:
    name: str
    argv: tuple[str, ...]
    last_line: str  # on the screen once the output has all been consumed


FULL_SCREEN = Batch(
    "full 80x24 screen",
    ("/bin/sh", "-c", "seq -f %080g 1 23; printf %080d 24; exec sleep 1000"),
    numbered(24),
)


def batches() -> list[Batch]:
    sleep = shutil.which("sleep") or "/bin/sleep"
    sh = shutil.which("sh") or "/bin/sh"
    return [
        Batch("idle (sleep)", (sleep, "1000"), ""),
        Batch(
            "full 80x24 screen",
            (sh, "-c", "seq -f %080g 1 23; printf %080d 24; exec sleep 1000"),
            numbered(24),
        ),
        Batch(
            f"{HISTORY_LINES} lines of 80 chars",
            (sh, "-c", f"seq -f %080g 1 {HISTORY_LINES}; exec sleep 1000"),
            numbered(HISTORY_LINES),
        ),
    ]


@dataclass(frozen=True)
class Sample:
    rss: int
    pss: int


def sample(pid: int) -> Sample:
    return Sample(rss_kib(pid), pss_kib(pid))


# -- mux ---------------------------------------------------------------------------


async def mux_batch(bus: MessageBus, batch: Batch, count: int) -> None:
    ids = [await spawn(bus, batch.argv) for _ in range(count)]
    for pane_id in ids:
        if batch.last_line:
            await wait_screen(bus, pane_id, batch.last_line)


async def wait_screen(bus: MessageBus, pane_id: int, needle: str, timeout: float = 20) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = 0.001
    while needle not in await screen(bus, pane_id):
        if loop.time() > deadline:
            raise TimeoutError(f"pane {pane_id} never showed {needle!r}")
        await asyncio.sleep(delay)  # poll interval, not a guess at how long output takes
        delay = min(delay * 2, 0.05)


async def measure_mux(muxd: Muxd, batch: Batch, count: int) -> list[Sample]:
    """[before, after the batch, after its screens hibernated] for one fresh muxd."""
    bus = await connect(muxd.bus_address)
    try:
        # Warm up the code paths (lazy imports, first allocations) outside the figures.
        warm = await spawn(bus, FULL_SCREEN.argv)
        await wait_screen(bus, warm, FULL_SCREEN.last_line)
        await call(bus, "Kill", "t", [warm])
        await call(bus, "ListPanes")
        samples = [sample(muxd.pid)]
        await mux_batch(bus, batch, count)
        await call(bus, "ListPanes")
        samples.append(sample(muxd.pid))
        # The idle sweep runs every screen_idle_seconds (1 s here); give it two
        # full periods past the last use, then measure what is left.
        await asyncio.sleep(2 * HIBERNATE_AFTER + 1.0)
        samples.append(sample(muxd.pid))
        return samples
    finally:
        bus.disconnect()


# -- tmux --------------------------------------------------------------------------


def tmux_batch(tmux: Tmux, batch: Batch, count: int) -> None:
    panes = [
        tmux.run("new-window", "-d", "-P", "-F", "#{pane_id}", *batch.argv).strip()
        for _ in range(count)
    ]

    def shown(pane: str) -> bool:
        return batch.last_line in tmux.run("capture-pane", "-p", "-t", pane)

    for pane in panes:
        wait_for(functools.partial(shown, pane), what=f"tmux pane {pane} to show its output")


def measure_tmux(tmux: Tmux, plan: Sequence[Batch], count: int) -> list[Sample]:
    size = tmux.run("display-message", "-p", "#{window_width}x#{window_height}").strip()
    if size != f"{COLS}x24":
        raise RuntimeError(f"tmux windows are {size}, not {COLS}x24")
    samples = [sample(tmux.pid)]
    for batch in plan:
        tmux_batch(tmux, batch, count)
        samples.append(sample(tmux.pid))
    return samples


# -- the run -----------------------------------------------------------------------


def per_pane(after: int, before: int, count: int) -> float:
    return (after - before) / count


def emulator_kib(count: int) -> float:
    """What one 80x24 `avt.Vt` (muxd's screen emulator) costs, measured in this process."""
    import gc

    from avt._avt import Vt  # what mux.terminal.screen uses

    gc.collect()
    before = rss_kib(os.getpid())
    screens = [Vt(COLS, 24, scrollback_limit=0) for _ in range(count)]
    after = rss_kib(os.getpid())
    del screens
    return (after - before) / count


READ_RSS = "open('/proc/self/status').read().split('VmRSS:')[1].split()[0]"


def floor_kib() -> list[tuple[str, int]]:
    """RSS after each step of FLOOR_STEPS, each run cumulatively in a fresh process."""
    found = []
    for n, (label, _) in enumerate(FLOOR_STEPS):
        code = "\n".join(step for _, step in FLOOR_STEPS[: n + 1])
        code += f"\nprint({READ_RSS})"
        out = subprocess.run(
            [REAL_PYTHON, "-P", "-c", code], capture_output=True, text=True, check=True
        )
        found.append((label, int(out.stdout)))
    return found


def baselines() -> tuple[Sample, Sample]:
    """(muxd with no pane, the tmux server with its one window)."""
    with Muxd() as muxd:

        async def settle() -> None:
            bus = await connect(muxd.bus_address)
            await call(bus, "ListPanes")
            bus.disconnect()

        asyncio.run(settle())
        mux = sample(muxd.pid)
    with Tmux(f"bench-base-{os.getpid()}") as tmux:
        tmux_sample = sample(tmux.pid)
    return mux, tmux_sample


def verdict(ratio: float) -> str:
    return "met" if ratio <= GOAL else "missed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--panes", type=int, default=50, help="panes in each batch")
    args = parser.parse_args()
    count = args.panes
    plan = batches()

    mux: list[list[Sample]] = []
    bus_rss: list[int] = []
    for batch in plan:  # a fresh muxd for each batch, so each figure stands alone
        with Muxd(config=f"screen_idle_seconds = {HIBERNATE_AFTER}\n") as muxd:
            mux.append(asyncio.run(measure_mux(muxd, batch, count)))
            if muxd.bus_pid is not None:
                bus_rss.append(rss_kib(muxd.bus_pid))
    with Tmux(f"bench-mem-{os.getpid()}") as tmux:
        tm = measure_tmux(tmux, plan, count)
    vt = emulator_kib(max(count, 200))
    base_mux, base_tmux = baselines()
    floor = floor_kib()

    print(f"memory: batches of {count} panes, 80x24, each batch in a fresh muxd; RSS in KiB\n")
    print_table(
        ["batch", "muxd before", "muxd after", "muxd hibernated", "tmux before", "tmux after"],
        [
            [
                batch.name,
                str(m[0].rss),
                str(m[1].rss),
                str(m[2].rss),
                str(tm[i].rss),
                str(tm[i + 1].rss),
            ]
            for i, (batch, m) in enumerate(zip(plan, mux, strict=True))
        ],
    )
    print()
    rows = []
    for i, (batch, m) in enumerate(zip(plan, mux, strict=True)):
        tmux_rss = per_pane(tm[i + 1].rss, tm[i].rss, count)
        for label, after in (("", m[1]), (", screens hibernated", m[2])):
            mux_rss = per_pane(after.rss, m[0].rss, count)
            ratio = mux_rss / tmux_rss if tmux_rss > 0 else float("inf")
            rows.append(
                [
                    batch.name + label,
                    f"{mux_rss:.1f}",
                    f"{per_pane(after.pss, m[0].pss, count):.1f}",
                    f"{tmux_rss:.1f}",
                    f"{per_pane(tm[i + 1].pss, tm[i].pss, count):.1f}",
                    f"{ratio:.2f}",
                    verdict(ratio),
                ]
            )
    print_table(
        [
            "KiB per pane",
            "muxd RSS",
            "muxd Pss",
            "tmux RSS",
            "tmux Pss",
            "x tmux (RSS)",
            f"goal <= {GOAL:.0f}x",
        ],
        rows,
    )
    print(
        f"\nfor reference: one avt.Vt({COLS}, 24) screen emulator alone, in this process: "
        f"{vt:.1f} KiB"
    )
    if bus_rss:
        print(
            f"muxd's private dbus-daemon with {count} panes (not counted above): "
            f"RSS {max(bus_rss)} KiB"
        )
    print("\nbaseline: no pane (KiB)\n")
    print_table(
        ["server", "RSS", "Pss"],
        [
            ["muxd", str(base_mux.rss), str(base_mux.pss)],
            ["tmux server (its one window)", str(base_tmux.rss), str(base_tmux.pss)],
            *([f"floor: {label}", str(rss), "-"] for label, rss in floor),
        ],
    )
    over = base_mux.rss - floor[-1][1]
    goal_met = "met" if base_mux.rss / 1024 <= BASELINE_GOAL_MIB else "missed"
    print(
        f"\nmuxd with no pane: {base_mux.rss / 1024:.1f} MiB (goal <= {BASELINE_GOAL_MIB:.0f} MiB, "
        f"{goal_met}); the floor of what it is built on: {floor[-1][1] / 1024:.1f} MiB; "
        f"muxd's own code and state above it: {over / 1024:.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
