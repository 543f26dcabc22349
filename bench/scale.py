"""The scale curve: spawning, memory, snapshot and restore at 100, 500 and 2000 panes.

For each count N (--counts), a fresh muxd on its own private bus gets N `sleep`
panes from a warm client (Spawn, one after another), then: its RSS over its RSS
with no pane (per pane), Snapshot() until durable (median of 3), and, after a stop
(which writes the snapshot; its time is the stop's: SIGTERM until muxd has exited,
every pane ended), the restore: its start to READY with N panes to relaunch, minus
its start with nothing to restore (medians of 3 of each: a start alone varies by
±100 ms here, as much as restoring 100 panes takes). Beside it, a tmux server gets
the same N panes (`new-window -d` from its own warm `tmux -C` client): spawn time
and RSS per pane, and the time its `kill-server` takes to end the server (tmux
hangs its panes up and exits without waiting for them). Tmux has no restore of its own.

Printed: per count, the totals and the cost per pane; then, for each figure, the
per-pane cost at the largest count over the smallest (above 1.0 the cost per pane
grows with the count, or a fixed cost is spread over fewer panes at the smallest);
then the slope -- the extra cost of each extra pane between two counts -- which
linear growth keeps constant (its last over its first: 1.0).

Run from the repository root: python3 bench/scale.py [--counts 100,500,2000]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.harness import Service, pid_alive, temp_root

from common import Tmux, TmuxControl, print_table, rss_kib
from snapshot import snapshot_times, spawn_many, started_in


@dataclass
class Point:
    panes: int
    spawn_s: float = 0.0
    rss_kib: float = 0.0  # over the server with no pane
    snapshot_s: float = 0.0
    restore_s: float = 0.0
    stop_s: float = 0.0  # SIGTERM until muxd has exited, every pane ended
    tmux_spawn_s: float = 0.0
    tmux_rss_kib: float = 0.0
    raw_spawn_s: float = 0.0
    tmux_stop_s: float = 0.0  # kill-server until the server has exited
    raw3_spawn_s: float = 0.0  # the raw limit holding 3 descriptors a pane, as muxd


ROUNDS = 3  # starts with and without panes to restore, each; the medians are compared


def measure_mux(point: Point) -> None:
    with temp_root() as root:
        svc = Service(root, bus_address=None, config="kill_grace_seconds = 1\n")
        empty_starts = []
        for _ in range(ROUNDS):
            empty_starts.append(started_in(svc))
            svc.stop()
        svc.start()
        assert svc.process is not None
        bare = rss_kib(svc.process.pid)
        point.spawn_s = asyncio.run(spawn_many(svc.bus_address, point.panes))
        point.rss_kib = rss_kib(svc.process.pid) - bare
        point.snapshot_s = statistics.median(asyncio.run(snapshot_times(svc.bus_address, 3)))
        stops, starts = [_stopped_in(svc, point)], []
        for _ in range(ROUNDS):  # each stop saves the same panes for the next restore
            starts.append(started_in(svc))
            restored = len(svc.panes())
            if restored != point.panes:
                raise RuntimeError(f"{restored} of {point.panes} panes restored")
            stops.append(_stopped_in(svc, point))
        point.stop_s = statistics.median(stops)
        point.restore_s = statistics.median(starts) - statistics.median(empty_starts)


def _stopped_in(svc: Service, point: Point) -> float:
    """SIGTERM until muxd has exited (its final snapshot taken, every pane ended)."""
    began = time.perf_counter()
    if svc.stop() != 0:
        raise RuntimeError(f"muxd did not stop by itself with {point.panes} panes")
    return time.perf_counter() - began


def measure_raw(point: Point, held: int = 1) -> float:
    """The raw limit of spawning panes: this process opens a terminal and starts the
    same `sleep` on it in a session of its own, N times, holding every terminal open
    as a server does, and `held` - 1 more descriptors a pane (muxd holds 3: the
    terminal, a pidfd for the exit, the resurrection endpoint's socket). Each start
    copies the table of open descriptors, and the exec walks it to close them: a
    start costs more the more panes are open. Returns the seconds."""
    held_fds: list[int] = []
    children: list[subprocess.Popen[bytes]] = []
    try:
        started = time.perf_counter()
        for _ in range(point.panes):
            master, slave = os.openpty()
            held_fds.append(master)
            child = subprocess.Popen(
                ["sleep", "100000"],
                stdin=slave,
                stdout=slave,
                stderr=slave,
                start_new_session=True,
            )
            children.append(child)
            os.close(slave)
            if held > 1:
                held_fds.append(os.pidfd_open(child.pid))
            held_fds.extend(socket.socket(socket.AF_UNIX).detach() for _ in range(held - 2))
        return time.perf_counter() - started
    finally:
        for child in children:
            child.kill()
            child.wait()
        for fd in held_fds:
            os.close(fd)


def measure_tmux(point: Point) -> None:
    with Tmux("scale") as tmux:
        bare = rss_kib(tmux.pid)
        control = TmuxControl(tmux, flags="no-output")
        try:
            started = time.perf_counter()
            for n in range(point.panes - 1):  # the session's first window is one
                control.command(f"new-window -d sleep {10_000 + n}")
            point.tmux_spawn_s = time.perf_counter() - started
            point.tmux_rss_kib = rss_kib(tmux.pid) - bare
        finally:
            control.close()
        began = time.perf_counter()
        tmux.run("kill-server")
        while pid_alive(tmux.pid):
            time.sleep(0.001)
        point.tmux_stop_s = time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--counts", default="100,500,2000", help="pane counts, comma-separated")
    args = parser.parse_args()
    points = [Point(int(n)) for n in args.counts.split(",")]
    for point in points:
        measure_mux(point)
        measure_tmux(point)
        point.raw_spawn_s = measure_raw(point)
        point.raw3_spawn_s = measure_raw(point, held=3)

    def per_pane(total: float, point: Point, scale: float) -> str:
        return f"{total * scale / point.panes:.2f}"

    rows = []
    for p in points:
        rows.append(
            [
                str(p.panes),
                f"{p.spawn_s * 1000:.0f} ({per_pane(p.spawn_s, p, 1000)})",
                f"{p.tmux_spawn_s * 1000:.0f} ({per_pane(p.tmux_spawn_s, p, 1000)})",
                f"{p.rss_kib / 1024:.1f} ({per_pane(p.rss_kib, p, 1)})",
                f"{p.tmux_rss_kib / 1024:.1f} ({per_pane(p.tmux_rss_kib, p, 1)})",
                f"{p.snapshot_s * 1000:.1f} ({per_pane(p.snapshot_s, p, 1e6)})",
                f"{p.restore_s * 1000:.0f} ({per_pane(p.restore_s, p, 1000)})",
                f"{p.stop_s * 1000:.0f} / {p.tmux_stop_s * 1000:.0f}",
            ]
        )
    print("the scale curve: totals, and per pane in parentheses\n")
    print_table(
        [
            "panes",
            "mux spawn ms (ms)",
            "tmux spawn ms (ms)",
            "mux RSS MiB (KiB)",
            "tmux RSS MiB (KiB)",
            "Snapshot ms (us)",
            "restore ms (ms)",
            "stop ms mux / tmux",
        ],
        rows,
    )
    small, large = points[0], points[-1]

    def growth(figure: str) -> str:
        a, b = getattr(small, figure), getattr(large, figure)
        return f"{(b / large.panes) / (a / small.panes):.2f}" if a > 0 else "-"

    print(f"\nper-pane cost at {large.panes} panes over that at {small.panes} (1.00: linear)\n")
    print_table(
        ["figure", "mux", "tmux"],
        [
            ["spawn", growth("spawn_s"), growth("tmux_spawn_s")],
            ["raw spawn (openpty + fork + exec)", growth("raw_spawn_s"), "-"],
            ["raw spawn, 3 fds a pane (as muxd)", growth("raw3_spawn_s"), "-"],
            ["memory", growth("rss_kib"), growth("tmux_rss_kib")],
            ["Snapshot", growth("snapshot_s"), "-"],
            ["restore", growth("restore_s"), "-"],
            ["stop", growth("stop_s"), growth("tmux_stop_s")],
        ],
    )
    print_slopes(points)
    return 0


def print_slopes(points: list[Point]) -> None:
    """The extra cost of each extra pane between two counts: linear growth (a fixed
    cost plus so much a pane) keeps it constant, whatever the fixed cost; the ratio
    above divides the fixed cost in too (a muxd's first panes fill memory its start
    had reserved)."""
    if len(points) < 2:
        return
    figures = (
        ("spawn ms", "spawn_s", 1000.0),
        ("tmux spawn ms", "tmux_spawn_s", 1000.0),
        ("raw spawn ms", "raw_spawn_s", 1000.0),
        ("raw spawn 3 fds ms", "raw3_spawn_s", 1000.0),
        ("RSS KiB", "rss_kib", 1.0),
        ("tmux RSS KiB", "tmux_rss_kib", 1.0),
        ("Snapshot us", "snapshot_s", 1e6),
        ("restore ms", "restore_s", 1000.0),
        ("stop ms", "stop_s", 1000.0),
        ("tmux stop ms", "tmux_stop_s", 1000.0),
    )
    pairs = list(itertools.pairwise(points))

    def slope(a: Point, b: Point, figure: str, scale: float) -> float:
        return (getattr(b, figure) - getattr(a, figure)) * scale / (b.panes - a.panes)

    rows = []
    for label, figure, scale in figures:
        slopes = [slope(a, b, figure, scale) for a, b in pairs]
        last_over_first = f"{slopes[-1] / slopes[0]:.2f}" if slopes[0] > 0 else "-"
        rows.append([label, *(f"{value:.2f}" for value in slopes), last_over_first])
    print("\nthe slope: extra cost per extra pane between two counts (constant: linear)\n")
    print_table(["figure", *(f"{a.panes}->{b.panes}" for a, b in pairs), "last / first"], rows)


if __name__ == "__main__":
    raise SystemExit(main())
