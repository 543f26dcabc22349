"""Keystroke echo while the pane floods: how long a key takes to show, through mux and tmux.

The pane runs a program that prints text as fast as its terminal takes it and, every
20 lines, a line `echo@N@` with N the number of bytes it has read from its terminal
(raw, no kernel echo): a key typed shows as the next N, in whatever screen the
terminal is shown. The terminal is an outer tmux server (as in attach_throughput.py),
the client `muxctl attach` or `tmux attach`; each key is typed with `send-keys` into
the outer session and timed until its N is on the outer screen (capture-pane polled
every 10 ms), one key every 0.1 s once the last has shown. Rounds interleave mux and
tmux; the figures are over all keys of all rounds.

Goal (issue #32): mux's p99 no worse than tmux's.

Run from the repository root:
python3 bench/flood_echo.py [--keys 30] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import shutil
import sys
import time
from pathlib import Path

from attach_throughput import COLS, ROWS, Outer
from common import (
    REAL_PYTHON,
    Muxd,
    Tmux,
    make_root,
    median,
    percentile,
    print_table,
    wait_for,
)

KEY_TIMEOUT = 10.0
POLL_SECONDS = 0.01
PAUSE_SECONDS = 0.1  # between one key shown and the next typed (a typist's pace)

PROGRAM = r"""
import os, select, tty
tty.setraw(0)
os.write(1, b"READY\r\n")
os.read(0, 1)  # Enter: start
line = b"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod " * 2
chunk = (line[:150] + b"\r\n") * 20
read = 0
while True:
    if select.select([0], [], [], 0)[0]:
        read += len(os.read(0, 1024))
    os.write(1, chunk + b"echo@%d@\r\n" % read)
"""


def echo_times(outer: Outer, target: str, keys: int) -> list[float]:
    wait_for(lambda: outer.shows(target, "READY"), 30, what="the pane to be ready")
    outer.tmux.run("send-keys", "-t", target, "Enter")
    wait_for(lambda: outer.shows(target, "echo@0@"), 30, what="the flood to start")
    times = []
    for n in range(1, keys + 1):
        start = time.perf_counter()
        outer.tmux.run("send-keys", "-t", target, "x")
        needle = f"echo@{n}@"
        while not outer.shows(target, needle):
            if time.perf_counter() - start > KEY_TIMEOUT:
                raise RuntimeError(f"key {n} not shown after {KEY_TIMEOUT}s")
            time.sleep(POLL_SECONDS)
        times.append(time.perf_counter() - start)
        time.sleep(PAUSE_SECONDS)
    outer.close(target)
    return times


def run_mux(outer: Outer, muxd: Muxd, program: Path, keys: int) -> list[float]:
    from dbus_fast import Variant

    from common import call, connect

    async def spawn() -> int:
        bus = await connect(muxd.bus_address)
        options = {
            "argv": Variant("as", [REAL_PYTHON, str(program)]),
            "rows": Variant("q", ROWS),
            "cols": Variant("q", COLS),
        }
        pane_id, _, _ = await call(bus, "Spawn", "a{sv}", [options])
        bus.disconnect()
        return int(pane_id)

    pane = asyncio.run(spawn())
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in muxd.env.items())
    target = outer.open(f"env -i {env} {shlex.quote(REAL_PYTHON)} -m muxctl attach {pane}")
    try:
        return echo_times(outer, target, keys)
    finally:
        asyncio.run(_close(muxd, pane))


async def _close(muxd: Muxd, pane: int) -> None:
    from common import call, connect

    bus = await connect(muxd.bus_address)
    await call(bus, "Kill", "t", [pane])
    bus.disconnect()


def run_tmux(outer: Outer, inner: Tmux, program: Path, keys: int, round_no: int) -> list[float]:
    name = f"echo{round_no}"
    command = f"{shlex.quote(REAL_PYTHON)} {shlex.quote(str(program))}"
    inner.run("new-session", "-d", "-s", name, "-x", str(COLS), "-y", str(ROWS), command)
    client = " ".join(shlex.quote(a) for a in inner.argv("attach", "-t", name))
    target = outer.open(f"env TMUX_TMPDIR={shlex.quote(inner.env['TMUX_TMPDIR'])} {client}")
    try:
        return echo_times(outer, target, keys)
    finally:
        inner.run("kill-session", "-t", name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=30, help="keys typed a round and case")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = make_root("flood-echo-")
    try:
        program = root / "flood_echo.py"
        program.write_text(PROGRAM)
        return measure(args, program)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def measure(args: argparse.Namespace, program: Path) -> int:
    results: dict[str, list[float]] = {"mux": [], "tmux": []}
    with Tmux("outer-echo") as outer_tmux, Tmux("inner-echo") as inner, Muxd() as muxd:
        outer = Outer(outer_tmux)
        for round_no in range(args.rounds):
            results["mux"] += run_mux(outer, muxd, program, args.keys)
            results["tmux"] += run_tmux(outer, inner, program, args.keys, round_no)
            print(f"round {round_no + 1} done", file=sys.stderr)
    print(
        f"\nkeystroke echo while the pane floods a {COLS}x{ROWS} terminal (an outer tmux), "
        f"{args.keys} keys x {args.rounds} rounds, ms\n"
    )
    rows = [
        [
            name,
            f"{median(times) * 1000:.0f}",
            f"{percentile(times, 0.9) * 1000:.0f}",
            f"{percentile(times, 0.99) * 1000:.0f}",
            f"{max(times) * 1000:.0f}",
        ]
        for name, times in results.items()
    ]
    print_table(["client", "p50", "p90", "p99", "max"], rows)
    ratio = percentile(results["mux"], 0.99) / percentile(results["tmux"], 0.99)
    print(f"\nmux p99 / tmux p99: {ratio:.2f}x  (goal <= 1.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
