"""Snapshots and restore of 512 panes, beside spawning 512 fresh panes, in one run.

- Snapshot(): milliseconds until durable (median of 5) and bytes on disk.
- Restore: muxd's start-up to READY with 512 panes to relaunch, minus its
  start-up with nothing to restore (both measured here), beside the time 512
  Spawn calls from a warm client take.
Goals (issue #4): a 512-pane snapshot <= 50 ms; restore <= 1.5x fresh spawn.

Run from the repository root: python3 bench/snapshot.py [--panes N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.harness import Service, temp_root

from common import call, connect, print_table, spawn


def started_in(svc: Service) -> float:
    """Seconds from starting muxd to its READY (the restore happens before it)."""
    begin = time.perf_counter()
    svc.start()
    return time.perf_counter() - begin


async def spawn_many(address: str, count: int) -> float:
    bus = await connect(address)
    try:
        begin = time.perf_counter()
        for n in range(count):
            await spawn(bus, ["sleep", str(10_000 + n)])
        return time.perf_counter() - begin
    finally:
        bus.disconnect()


async def snapshot_times(address: str, rounds: int) -> list[float]:
    bus = await connect(address)
    try:
        times = []
        for _ in range(rounds):
            begin = time.perf_counter()
            await call(bus, "Snapshot")
            times.append(time.perf_counter() - begin)
        return times
    finally:
        bus.disconnect()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--panes", type=int, default=512)
    args = parser.parse_args()
    count = args.panes
    with temp_root() as root:
        svc = Service(root, bus_address=None, config="kill_grace_seconds = 1\n")
        empty_start = started_in(svc)
        spawn_seconds = asyncio.run(spawn_many(svc.bus_address, count))
        snapshots = asyncio.run(snapshot_times(svc.bus_address, 5))
        size = (svc.state / "mux" / "session.json").stat().st_size
        assert svc.stop() == 0
        restore_start = started_in(svc)
        restored = len(svc.panes())
        svc.stop()
        # A start with nothing to restore, for the baseline (same machine, same moment).
        os.unlink(svc.state / "mux" / "session.json")
        empty_again = started_in(svc)
        svc.stop()
    baseline = min(empty_start, empty_again)
    restore_seconds = restore_start - baseline
    print(f"snapshot and restore of {count} panes ({restored} restored)\n")
    print_table(
        ["measure", "value"],
        [
            [
                "Snapshot() until durable, median of 5",
                f"{statistics.median(snapshots) * 1000:.1f} ms",
            ],
            ["session.json on disk", f"{size / 1024:.0f} KiB ({size / count:.0f} B per pane)"],
            [f"spawn {count} fresh panes (warm client)", f"{spawn_seconds * 1000:.0f} ms"],
            [
                f"restore {count} panes (start to READY minus an empty start)",
                f"{restore_seconds * 1000:.0f} ms",
            ],
            ["muxd start with nothing to restore", f"{baseline * 1000:.0f} ms"],
        ],
    )
    snap_ms = statistics.median(snapshots) * 1000
    ratio = restore_seconds / spawn_seconds
    print(f"\nsnapshot: {snap_ms:.1f} ms (goal <= 50 ms): {'met' if snap_ms <= 50 else 'missed'}")
    print(
        f"restore / fresh spawn: {ratio:.2f}x (goal <= 1.5x): {'met' if ratio <= 1.5 else 'missed'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
