"""Crash survival: from `kill -9` of muxd to the first answered `ListPanes` with every
pane re-adopted, beside a cold start that restores the same panes from the snapshot —
under a real systemd --user, the shipped mux.service (RestartSec=1), both in one run.

Two figures per case: from the kill (or from `systemctl start` for the cold
start), and from the moment systemd started the new muxd
(ExecMainStartTimestampMonotonic: the restart delay left out). Nothing here
activates mux while it is down: the client watches the bus name
(NameHasOwner) before it calls ListPanes.

Needs root (systemd --user in a private mount namespace, as in the tests).
Goal (issue #13): re-adoption of 200 panes answered within 1 s of systemd
restarting muxd, and faster than the restore.

Run from the repository root: python3 bench/crash_readoption.py [--runs N] [--panes 10,200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbus_fast.aio import MessageBus
from tests.harness import temp_root
from tests.systemd.conftest import UserSystemd, _why_not

from common import call, connect, median, name_has_owner, print_table, spawn

GOAL_SECONDS = 1.0


async def _answered(bus: MessageBus, panes: int, pids: set[int] | None) -> float:
    """Wait for the name, then for a ListPanes with every pane running; when."""
    while True:
        if await name_has_owner(bus):
            try:
                (entries,) = await call(bus, "ListPanes")
            except RuntimeError:  # the killed muxd's name, not yet released
                await asyncio.sleep(0.005)
                continue
            running = {int(e["pid"].value) for e in entries if e["state"].value == "running"}
            if len(running) == panes and (pids is None or running == pids):
                return time.monotonic()
        await asyncio.sleep(0.005)


def _started_at(sd: UserSystemd) -> float:
    """When systemd started the current muxd, on CLOCK_MONOTONIC (shared with us)."""
    return int(sd.show("mux.service", "ExecMainStartTimestampMonotonic")) / 1e6


async def one_case(sd: UserSystemd, panes: int, runs: int) -> dict[str, list[float]]:
    bus = await connect(sd.bus_address)
    figures: dict[str, list[float]] = {k: [] for k in ("kill", "kill_exec", "cold", "cold_exec")}
    try:
        for n in range(panes):
            await spawn(bus, ["sleep", str(10_000 + n)])
        for _ in range(runs):
            (entries,) = await call(bus, "ListPanes")
            pids = {int(e["pid"].value) for e in entries}
            # Each program is moved into its scope just after it starts, and its
            # terminal (and endpoint) kept then: a kill before that would take it
            # along with mux.service's cgroup. Two fds per pane, two record slots.
            while sd.show("mux.service", "NFileDescriptorStore") != str(2 * panes + 2):
                await asyncio.sleep(0.01)
            old = sd.main_pid()
            killed = time.monotonic()
            os.kill(old, signal.SIGKILL)
            answered = await _answered(bus, panes, pids)
            figures["kill"].append(answered - killed)
            figures["kill_exec"].append(answered - _started_at(sd))
            # The cold start: a stop writes the snapshot, the start restores it.
            sd.systemctl("stop", "mux.service")
            sd.systemctl("reset-failed", "mux.service", check=False)
            started = time.monotonic()
            sd.systemctl("start", "--no-block", "mux.service")
            answered = await _answered(bus, panes, None)
            figures["cold"].append(answered - started)
            figures["cold_exec"].append(answered - _started_at(sd))
    finally:
        bus.disconnect()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--panes", default="10,200")
    args = parser.parse_args()
    reason = _why_not()
    if reason is not None:
        print(f"crash re-adoption bench skipped: {reason}")
        return 0
    rows = []
    verdicts = []
    for panes in (int(p) for p in args.panes.split(",")):
        with temp_root() as root:
            sd = UserSystemd(root)
            try:
                install = sd.muxctl("install", "--now")
                if install.returncode != 0:
                    raise RuntimeError(install.stderr)
                dropin = sd.home / ".config/systemd/user/mux.service.d"
                dropin.mkdir(parents=True)
                # More starts than the default start limit allows in a few seconds.
                (dropin / "bench.conf").write_text("[Unit]\nStartLimitIntervalSec=0\n")
                sd.systemctl("daemon-reload")
                sd.systemctl("start", "mux.service")
                figures = asyncio.run(one_case(sd, panes, args.runs))
            finally:
                sd.stop()
        ms = {k: median(v) * 1000 for k, v in figures.items()}
        rows.append(
            [
                str(panes),
                f"{ms['kill']:.0f}",
                f"{ms['kill_exec']:.0f}",
                f"{ms['cold']:.0f}",
                f"{ms['cold_exec']:.0f}",
                f"{ms['cold_exec'] / ms['kill_exec']:.2f}",
            ]
        )
        if panes >= 200:
            met = ms["kill_exec"] <= GOAL_SECONDS * 1000 and ms["kill_exec"] < ms["cold_exec"]
            verdicts.append(f"{panes} panes: {'met' if met else 'missed'}")
    print(f"crash re-adoption vs cold restore under systemd --user, ms (median of {args.runs})\n")
    print_table(
        [
            "panes",
            "kill -> answer",
            "muxd exec -> answer",
            "start -> answer (restore)",
            "muxd exec -> answer (restore)",
            "restore / re-adopt",
        ],
        rows,
    )
    print(f"\ngoal: re-adopted within {GOAL_SECONDS:.0f} s of the restart, faster than a restore")
    for verdict in verdicts:
        print(verdict)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
