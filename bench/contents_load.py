"""Saving pane contents against keystroke echo: busy panes, with and without contents saves.

The same load in two configurations, --runs (2) times each, alternating, each on a fresh
muxd (its own private bus and XDG directories): M busy panes (--busy, 100) run load.py's
writer (numbered 80-column lines, --rate bytes a second each, 20 KB/s, for --seconds,
20), all starting together; one more pane runs echo_probe.py's answering program, and a
terminal attached to it through `muxctl attach` types a key every 50 ms and times its
echo (a probe in a process of its own, as load.py's; here it also notes when each key
was typed, on the machine's monotonic clock). The two differ only in the configuration:
- off: `restore_scrollback_lines = 0` (no contents saved);
- on: `restore_scrollback_lines = 2000` (the default) and `contents_save_seconds = 1`, so
  the panes' contents are saved over and over while the keys are typed.
Meanwhile the bench watches `<state>/mux/contents/` (every 20 ms): each file replaced is
one pane's save; saves less than 0.5 s apart are one round. Each key of the "on" case is
counted as typed during a round (from 0.15 s before its first save to its last) or
between rounds.

What holds the loop: a save copies the pane's history ring and its screen's dump on the
loop and makes the text on a worker thread, which holds the GIL while it runs Python (a
thread waiting for the GIL gets it after the switch interval, 5 ms); so the bench also
measures, in this process and without muxd, the lag of an asyncio loop (a 1 ms sleep,
over and over) while a worker thread makes one 2,000-line pane's contents again and again
(contents_save.py's coloured output and its `save`), against the same loop idle.

Printed: echo p50/p99/max for off and on, their ratio, and on's split during and between
rounds; the saves (files written, rounds, seconds a pane on the worker, median), muxd's
CPU (% of a core) over the load; the loop's lag with and without a worker making
contents, and the loop's own part of one save. Goal (issue #31): no echo p99 change.
Nothing is asserted.

Run from the repository root:
python3 bench/contents_load.py [--busy M] [--seconds S] [--rate B] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import REAL_PYTHON, TIMEOUT, Muxd, connect, cpu_seconds, percentile, print_table, spawn
from contents_save import fed_view, pane_output, save
from echo_probe import ANSWER_SECONDS, ECHO_PROGRAM, Terminal
from load import LoadStart, writer

CASES = (
    ("off", "restore_scrollback_lines = 0\n"),
    ("on", "restore_scrollback_lines = 2000\ncontents_save_seconds = 1\n"),
)
CONTENTS_NAME = re.compile(r"[0-9a-f]{32}")
WATCH_SECONDS = 0.02
ROUND_GAP_SECONDS = 0.5  # saves closer than this are one round
BEFORE_FIRST_SAVE = 0.15  # a round starts with a pane's text being made, before its file
KEY_INTERVAL = 0.05


@dataclass
class Case:
    name: str
    keys: list[tuple[float, float]] = field(default_factory=list)  # (typed at, echo ms)
    lost: int = 0
    saves: list[float] = field(default_factory=list)  # when each file was replaced
    cpu_percent: list[float] = field(default_factory=list)  # each run's
    spawn_s: list[float] = field(default_factory=list)  # each run's, all its panes
    p99s: list[float] = field(default_factory=list)  # each run's echo p99, ms

    def rounds(self) -> list[tuple[float, float, int]]:
        """(first save, last save, files) of each round."""
        found: list[tuple[float, float, int]] = []
        for at in sorted(self.saves):
            if found and at - found[-1][1] < ROUND_GAP_SECONDS:
                first, _, files = found[-1]
                found[-1] = (first, at, files + 1)
            else:
                found.append((at, at, 1))
        return found

    def echo(self, during: bool | None = None) -> list[float]:
        """The echo times: all, or those typed during (True) or between (False) rounds."""
        if during is None:
            return [ms for _, ms in self.keys]
        spans = [(first - BEFORE_FIRST_SAVE, last) for first, last, _ in self.rounds()]
        return [
            ms for at, ms in self.keys if any(start <= at <= end for start, end in spans) == during
        ]


class SaveWatcher:
    """A thread noting the moments files in the contents directory are replaced."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._stop = threading.Event()
        self.saves: list[float] = []
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> SaveWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        seen: dict[str, tuple[int, int]] = {}
        while not self._stop.wait(WATCH_SECONDS):
            now = time.monotonic()
            with contextlib.suppress(FileNotFoundError):
                for entry in list(self._directory.iterdir()):
                    if not CONTENTS_NAME.fullmatch(entry.name):
                        continue
                    with contextlib.suppress(FileNotFoundError):
                        info = entry.stat()
                        stamp = (info.st_ino, info.st_mtime_ns)
                        if seen.get(entry.name) != stamp:
                            seen[entry.name] = stamp
                            self.saves.append(now)


class Probe:
    """This file run with --probe: a terminal typing into `muxctl attach ID`."""

    def __init__(self, client: list[str], env: dict[str, str], seconds: float) -> None:
        self._process = subprocess.Popen(
            [REAL_PYTHON, __file__, "--probe", "--seconds", str(seconds), "--", *client],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )

    def wait_ready(self) -> None:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if line.strip() != "ready":
            self._process.kill()
            raise RuntimeError(f"the echo probe did not start: {line.strip()}")

    def collect(self, case: Case) -> None:
        out, _ = self._process.communicate(timeout=TIMEOUT + ANSWER_SECONDS)
        result = json.loads(out.strip().splitlines()[-1])
        keys = [(at, ms) for at, ms in result["keys"]]
        case.keys += keys
        case.p99s.append(percentile([ms for _, ms in keys], 0.99))
        case.lost += result["lost"]


def probe_main(seconds: float, argv: list[str]) -> int:
    """echo_probe.py's loop, each key's time noted (monotonic: the same clock as the
    bench's watcher, in another process)."""
    terminal = Terminal(argv)
    terminal.start()
    keys: list[tuple[float, float]] = []
    lost = count = 0
    try:
        if not terminal.take(b"ready", 30):
            print(json.dumps({"error": "the client never showed the pane"}), flush=True)
            return 1
        terminal.read_for(0.2)
        print("ready", flush=True)
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            count += 1
            at, started = time.monotonic(), time.perf_counter()
            terminal.type(b"k")
            if terminal.take(b"@%d@" % count, ANSWER_SECONDS):
                keys.append((at, (time.perf_counter() - started) * 1000))
            else:
                lost += 1
            terminal.read_for(max(0.0, started + KEY_INTERVAL - time.perf_counter()))
    finally:
        terminal.stop()
    print(json.dumps({"keys": keys, "lost": lost}), flush=True)
    return 0


async def run_case(case: Case, config: str, busy: int, seconds: float, script: Path) -> None:
    start = LoadStart(script, f"{case.name}-{len(case.spawn_s)}")  # a FIFO of its own
    with Muxd(config=config) as muxd:
        bus = await connect(muxd.bus_address)
        try:
            began = time.perf_counter()
            for _ in range(busy):
                await spawn(bus, start.argv)
            case.spawn_s.append(time.perf_counter() - began)
            attached = await spawn(bus, ECHO_PROGRAM)
        finally:
            bus.disconnect()
        client = [REAL_PYTHON, "-m", "muxctl", "attach", str(attached)]
        probe = Probe(client, muxd.env, seconds)
        probe.wait_ready()
        with SaveWatcher(muxd.root / "state" / "mux" / "contents") as watcher:
            start.begin()
            cpu_before, load_started = cpu_seconds(muxd.pid), time.perf_counter()
            probe.collect(case)
            case.cpu_percent.append(
                100 * (cpu_seconds(muxd.pid) - cpu_before) / (time.perf_counter() - load_started)
            )
            start.end()
        case.saves += watcher.saves


# -- the loop's lag beside a worker making contents, in this process --------------------


async def loop_lags(seconds: float, stop: threading.Event | None = None) -> list[float]:
    """How late a 1 ms sleep wakes, in ms, over and over for `seconds`."""
    lags = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        began = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append((time.perf_counter() - began) * 1000 - 1.0)
    if stop is not None:
        stop.set()
    return lags


@dataclass
class Lags:
    idle: list[float] = field(default_factory=list)  # ms late, the loop alone
    beside: list[float] = field(default_factory=list)  # beside a worker making contents
    short_switch: list[float] = field(default_factory=list)  # the same, SHORT_SWITCH
    on_loop: list[float] = field(default_factory=list)  # ms, the loop's part of a save
    made: list[float] = field(default_factory=list)  # s, the worker's part of a save


SHORT_SWITCH = 0.0005  # a switch interval a tenth of the default, for comparison


async def lag_beside_saves(seconds: float) -> Lags:
    view = fed_view(pane_output(0, 2000))
    lags = Lags(idle=await loop_lags(seconds))
    loop = asyncio.get_running_loop()
    default_switch = sys.getswitchinterval()
    for figure, switch in (("beside", default_switch), ("short_switch", SHORT_SWITCH)):
        stop = threading.Event()

        def make_again_and_again(stop: threading.Event = stop) -> None:
            while not stop.is_set():
                _, loop_part, worker_part = save(view, 2000)
                lags.on_loop.append(loop_part * 1000)
                lags.made.append(worker_part)

        sys.setswitchinterval(switch)
        try:
            worker = loop.run_in_executor(None, make_again_and_again)
            setattr(lags, figure, await loop_lags(seconds, stop))
            await worker
        finally:
            sys.setswitchinterval(default_switch)
    return lags


# -- the report --------------------------------------------------------------------------


def figures(values: list[float]) -> list[str]:
    if not values:
        return ["-", "-", "-", "0"]
    return [
        f"{percentile(values, 0.5):.1f}",
        f"{percentile(values, 0.99):.1f}",
        f"{max(values):.1f}",
        str(len(values)),
    ]


def report(args: argparse.Namespace, cases: dict[str, Case]) -> None:
    off, on = cases["off"], cases["on"]
    print(
        f"contents saves against keystroke echo: {args.busy} busy panes, "
        f"{args.rate / 1000:.0f} KB/s each for {args.seconds:.0f} s, one attached pane typed"
        f" into every 50 ms; {args.runs} runs of each case, alternating, keys pooled\n"
    )
    rows = [
        ["off (restore_scrollback_lines = 0)", *figures(off.echo())],
        ["on (2000 lines, contents_save_seconds = 1)", *figures(on.echo())],
        ["  on, typed during a round of saves", *figures(on.echo(during=True))],
        ["  on, typed between rounds", *figures(on.echo(during=False))],
    ]
    print_table(["keystroke echo, ms", "p50", "p99", "max", "keys"], rows)
    p99_off, p99_on = (percentile(c.echo(), 0.99) for c in (off, on))
    p50_off, p50_on = (percentile(c.echo(), 0.5) for c in (off, on))
    print(
        f"\necho on / off: p99 {p99_on / p99_off:.2f}x (goal: no change, 1.00x),"
        f" p50 {p50_on / p50_off:.2f}x"
    )
    for case in (off, on):
        print(f"  {case.name}: p99 of each run, ms: " + ", ".join(f"{v:.1f}" for v in case.p99s))
    rounds = on.rounds()
    per_pane = [
        (last - first) / (files - 1) for first, last, files in rounds if files > 1
    ]  # the spacing of a round's files: one pane's save, made and written
    print()
    print_table(
        ["", "off", "on"],
        [
            ["contents files written", str(len(off.saves)), str(len(on.saves))],
            ["rounds of saves", str(len(off.rounds())), str(len(rounds))],
            [
                "panes saved per round (median)",
                "-",
                f"{statistics.median(f for *_, f in rounds):.0f}" if rounds else "-",
            ],
            [
                "one pane's save, ms (median spacing)",
                "-",
                f"{statistics.median(per_pane) * 1000:.0f}" if per_pane else "-",
            ],
            [
                "muxd CPU, % of a core (mean)",
                *(f"{statistics.mean(c.cpu_percent):.0f}" for c in (off, on)),
            ],
            ["keys never echoed", str(off.lost), str(on.lost)],
            [
                "spawn per pane, ms (median)",
                *(f"{statistics.median(c.spawn_s) / args.busy * 1000:.1f}" for c in (off, on)),
            ],
        ],
    )


def report_lag(lags: Lags) -> None:
    made = statistics.median(lags.made) * 1000
    print(
        "\nthe loop held by a save, in this process (no muxd): a 1 ms asyncio sleep's lag,"
        " ms; one 2,000-line pane's contents made on a worker thread over and over"
        f" ({made:.0f} ms each, median)\n"
    )
    switch = sys.getswitchinterval() * 1000
    print_table(
        ["", "p50", "p99", "max", "samples"],
        [
            ["loop idle", *figures(lags.idle)],
            [f"a worker making contents (switch interval {switch:g} ms)", *figures(lags.beside)],
            [
                f"the same, switch interval {SHORT_SWITCH * 1000:g} ms",
                *figures(lags.short_switch),
            ],
            ["the save's part on the loop (ring copy, dump)", *figures(lags.on_loop)],
        ],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--busy", type=int, default=100, help="panes printing all along")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long they print")
    parser.add_argument("--rate", type=int, default=20_000, help="bytes a second per pane")
    parser.add_argument("--runs", type=int, default=2, help="runs of each case, alternating")
    parser.add_argument("--lag-seconds", type=float, default=3.0)
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("argv", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        return probe_main(args.seconds, args.argv)
    cases = {name: Case(name) for name, _ in CASES}
    with tempfile.TemporaryDirectory(prefix="mux-bench-contents-") as scratch:
        script = writer(args.rate, args.seconds, Path(scratch))
        for _ in range(args.runs):
            for name, config in CASES:
                asyncio.run(run_case(cases[name], config, args.busy, args.seconds, script))
    lags = asyncio.run(lag_beside_saves(args.lag_seconds))
    report(args, cases)
    report_lag(lags)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
