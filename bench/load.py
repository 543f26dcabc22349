"""Load: many busy panes while a script polls the API, side by side with tmux.

N panes (--panes, 100 by default; 500 is the goal's) each run the same writer: bursts
of numbered 80-column lines (`seq 00000042 xxx…`) every 50 ms, --rate bytes a second
each (20 KB/s by default), for --seconds, then `done 00000042` (the last number) and
silence. Every writer waits until the load starts (a FIFO opened by the benchmark once
every pane is spawned): spawning 500 panes takes tmux several times as long as mux, and
writers that started on their own would have been half done, on the slower side only,
before its load began. The writer turns its terminal's echo off, so what the benchmark types is
never shown. While they write, one warm client calls, in a loop, the listing, the
screen of a random pane and typing one character into a random pane (mux: ListPanes,
GetScreen, SendInput from a connected dbus-fast client; tmux: list-panes,
capture-pane -p, send-keys through a `tmux -C` client attached with no-output, tmux's
own warm client), and mux saves a snapshot every 2 s (Snapshot(), until durable).
Each D-Bus call is followed by the same call to the floor (floor.py: a dbus-fast
service on the same bus answering with a copy of muxd's reply, doing nothing else),
so the D-Bus figures come with what the bus, dbus-fast and this load cost alone.
With --flood, one more pane `cat`s a 10 MB file over and over (fairness: the
flood must not hold up the others, the calls or the echo). Meanwhile a terminal
attached to one more pane (`muxctl attach`; `tmux attach`) types
a key every 50 ms and times its echo, from another process (echo_probe.py).
Then each pane must show its `done` line right below an unbroken run of `seq` lines
ending at the same number: nothing lost on screen. The server's CPU time over the
load and its RSS after it are read from /proc. mux runs first, then tmux, on the same
machine, one at a time.

Printed: p50 and p99 of each call and of the echo in ms, calls made, server CPU (% of
one core) and RSS, spawn time per pane, and how many panes passed the check. Goals at
500 panes: each D-Bus call's p99 ≤ 50 ms, echo p99 ≤ 1.0x tmux's, nothing lost. Not
measured here: the scrollback's continuity (the screen's is), the 100/500/2000 curve
(scale.py).

Run from the repository root:
python3 bench/load.py [--panes N] [--seconds S] [--rate B] [--flood] [--no-client]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import json
import os
import random
import re
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dbus_fast.aio import MessageBus

from common import (
    BUS_NAME,
    REAL_PYTHON,
    TIMEOUT,
    Muxd,
    Tmux,
    TmuxControl,
    call,
    connect,
    cpu_seconds,
    percentile,
    print_table,
    rss_kib,
    spawn,
    wait_for,
)
from echo_probe import ECHO_PROGRAM
from floor import FLOOR_NAME, FloorService

GOAL_P99_MS = 50.0
BURSTS_PER_SECOND = 20
LINE = re.compile(r"^(seq|done) (\d{8})")


def writer(rate: int, seconds: float, directory: Path) -> Path:
    """The program every pane runs (perl: light, and in every Debian), from a file so
    that no command parser (tmux's) has to quote it; its argument is the FIFO that
    says the load has started (`LoadStart`)."""
    lines = max(1, rate // 80 // BURSTS_PER_SECOND)
    script = directory / "writer.pl"
    script.write_text(
        "$| = 1; system('stty', '-echo'); my $i = 0; my $pad = 'x' x 66;\n"
        # Opening a FIFO to read waits until it is opened to write.
        "open(my $start, '<', $ARGV[0]) or die \"no start: $!\"; close($start);\n"
        f"my $end = time() + {seconds};\n"
        "while (time() < $end) {\n"
        f'    for (1 .. {lines}) {{ printf("seq %08d %s\\n", ++$i, $pad) }}\n'
        f"    select(undef, undef, undef, {1 / BURSTS_PER_SECOND});\n"
        "}\n"
        'printf("done %08d\\n", $i);\n'
        "sleep 100000;\n"
    )
    return script


class LoadStart:
    """The FIFO every writer of one side waits on: `begin` opens it to write, which
    lets every writer waiting to read it go at once; it stays open until `end`, so a
    writer that reaches it later does not wait."""

    def __init__(self, script: Path, side: str) -> None:
        self._path = script.with_name(f"start-{side}")
        os.mkfifo(self._path, 0o600)
        self.argv = ["perl", str(script), str(self._path)]
        self._fd: int | None = None

    def begin(self) -> None:
        # Non-blocking: ENXIO while no writer has opened it yet, instead of hanging.
        def opened() -> bool:
            try:
                self._fd = os.open(self._path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError as e:
                if e.errno != errno.ENXIO:
                    raise
                return False
            return True

        wait_for(opened, TIMEOUT, what="a writer waiting for the load to start")

    def end(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def flooder(directory: Path) -> list[str]:
    """A pane that writes as fast as its terminal takes it, until it is killed."""
    text = directory / "flood.txt"
    line = "flood " + "y" * 73 + "\n"
    text.write_text(line * (10_000_000 // len(line)))
    return ["sh", "-c", f"while :; do cat {text}; done"]


def intact(lines: list[str]) -> bool:
    """The screen ends with `done N` right below seq lines counting up to N."""
    numbered = [(m[1], int(m[2])) for line in lines if (m := LINE.match(line.strip()))]
    if not numbered or numbered[-1][0] != "done":
        return False
    last = numbered[-1][1]
    seqs = [n for kind, n in numbered[:-1] if kind == "seq"]
    return bool(seqs) and seqs == list(range(last - len(seqs) + 1, last + 1))


@dataclass
class Side:
    name: str
    calls: dict[str, list[float]] = field(default_factory=dict)
    spawn_seconds: float = 0.0
    cpu_percent: float = 0.0
    rss_mib: float = 0.0
    intact: int = 0
    echo_lost: int = 0

    def time(self, what: str, started: float) -> None:
        self.calls.setdefault(what, []).append((time.perf_counter() - started) * 1000)


class EchoProbe:
    """echo_probe.py in its own process, typing into `client` (an attaching command
    line) for `seconds` once started; its times land in `side.calls["echo"]`."""

    def __init__(self, client: list[str], env: dict[str, str], seconds: float) -> None:
        probe = Path(__file__).with_name("echo_probe.py")
        self._process = subprocess.Popen(
            [REAL_PYTHON, str(probe), "--seconds", str(seconds), "--", *client],
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

    def collect(self, side: Side) -> None:
        out, _ = self._process.communicate(timeout=TIMEOUT)
        result = json.loads(out.strip().splitlines()[-1])
        side.calls["echo"] = result["times"]
        side.echo_lost = result["lost"]


async def mux_side(
    panes: int, start: LoadStart, seconds: float, flood: list[str] | None, poll: bool
) -> tuple[Side, Side]:
    """mux's side, and the floor's (the same calls to floor.py, in the same load)."""
    side, floor_side = Side("mux"), Side("floor")
    argv = start.argv
    with Muxd() as muxd:
        bus = await connect(muxd.bus_address)
        floor = FloorService(muxd.bus_address, muxd.env)
        try:
            started = time.perf_counter()
            ids = [await spawn(bus, argv) for _ in range(panes)]
            side.spawn_seconds = time.perf_counter() - started
            if flood is not None:
                await spawn(bus, flood)
            attached = await spawn(bus, ECHO_PROGRAM)
            probe = EchoProbe(
                [REAL_PYTHON, "-m", "muxctl", "attach", str(attached)], muxd.env, seconds
            )
            probe.wait_ready()
            if poll:
                await floor.start(bus)
            start.begin()
            cpu_before, load_started = cpu_seconds(muxd.pid), time.perf_counter()
            if poll:
                await poll_mux(bus, ids, seconds, side, floor_side)
            else:
                await asyncio.sleep(seconds)  # the load alone, for so long
            start.end()
            side.cpu_percent = (
                100 * (cpu_seconds(muxd.pid) - cpu_before) / (time.perf_counter() - load_started)
            )
            side.rss_mib = rss_kib(muxd.pid) / 1024
            probe.collect(side)
            side.intact = await mux_intact(bus, ids)
        finally:
            bus.disconnect()
            floor.stop()
    return side, floor_side


async def poll_mux(
    bus: MessageBus, ids: list[int], seconds: float, side: Side, floor: Side
) -> None:
    """Each call to muxd, then the same to the floor."""
    end = time.perf_counter() + seconds
    next_snapshot = time.perf_counter() + 2
    while time.perf_counter() < end:
        for what, member, signature, body in (
            ("list", "ListPanes", "", []),
            ("screen", "GetScreen", "t", [random.choice(ids)]),
            ("input", "SendInput", "tay", [random.choice(ids), b"a"]),
        ):
            for timed, destination in ((side, BUS_NAME), (floor, FLOOR_NAME)):
                started = time.perf_counter()
                await call(bus, member, signature, body, destination)
                timed.time(what, started)
        if time.perf_counter() >= next_snapshot:
            started = time.perf_counter()
            await call(bus, "Snapshot")
            side.time("snapshot", started)
            next_snapshot += 2


async def mux_intact(bus: MessageBus, ids: list[int]) -> int:
    """Panes whose screen passes, once every writer has said `done` (or the deadline)."""
    deadline = time.monotonic() + TIMEOUT
    good: set[int] = set()
    while time.monotonic() < deadline and len(good) < len(ids):
        for pane in ids:
            if pane not in good:
                (lines,) = await call(bus, "GetScreen", "t", [pane])
                if intact(list(lines)):
                    good.add(pane)
        await asyncio.sleep(0.1)
    return len(good)


def tmux_side(
    panes: int, start: LoadStart, seconds: float, flood: list[str] | None, poll: bool
) -> Side:
    side = Side("tmux")
    argv = start.argv
    with Tmux("load", initial=argv) as tmux:
        control = TmuxControl(tmux, flags="no-output")
        try:
            started = time.perf_counter()
            for _ in range(panes - 1):
                control.command("new-window -d " + " ".join(argv))
            side.spawn_seconds = time.perf_counter() - started
            targets = [
                line.decode() for line in control.command("list-panes -s -t bench -F '#{pane_id}'")
            ]
            if flood is not None:
                tmux.run("new-window", "-d", *flood)
            tmux.run("new-session", "-d", "-s", "echo", "-x", "80", "-y", "24", *ECHO_PROGRAM)
            probe = EchoProbe(tmux.argv("attach", "-t", "echo"), tmux.env, seconds)
            probe.wait_ready()
            start.begin()
            cpu_before, load_started = cpu_seconds(tmux.pid), time.perf_counter()
            if poll:
                poll_tmux(control, targets, seconds, side)
            else:
                time.sleep(seconds)
            start.end()
            side.cpu_percent = (
                100 * (cpu_seconds(tmux.pid) - cpu_before) / (time.perf_counter() - load_started)
            )
            side.rss_mib = rss_kib(tmux.pid) / 1024
            probe.collect(side)
            side.intact = tmux_intact(control, targets)
        finally:
            control.close()
    return side


def poll_tmux(control: TmuxControl, targets: list[str], seconds: float, side: Side) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        started = time.perf_counter()
        control.command("list-panes -s -t bench")
        side.time("list", started)
        started = time.perf_counter()
        control.command(f"capture-pane -p -t {random.choice(targets)}")
        side.time("screen", started)
        started = time.perf_counter()
        control.command(f"send-keys -t {random.choice(targets)} -l a")
        side.time("input", started)


def tmux_intact(control: TmuxControl, targets: list[str]) -> int:
    good: set[str] = set()

    def all_good() -> bool:
        for target in targets:
            if target not in good:
                lines = control.command(f"capture-pane -p -t {target}")
                if intact([line.decode(errors="replace") for line in lines]):
                    good.add(target)
        return len(good) == len(targets)

    with contextlib.suppress(AssertionError):  # the table says how many passed
        wait_for(all_good, TIMEOUT, what="every tmux pane to say done")
    return len(good)


def cell(side: Side, what: str, pick: Callable[[list[float]], float]) -> str:
    values = side.calls.get(what)
    return f"{pick(values):.1f}" if values else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--panes", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the panes write")
    parser.add_argument("--rate", type=int, default=20_000, help="bytes a second per pane")
    parser.add_argument("--flood", action="store_true", help="one more pane cats a big file")
    parser.add_argument(
        "--no-client",
        dest="poll",
        action="store_false",
        help="no client calls the API (mux saves no snapshot): the echo under the panes alone",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mux-bench-load-") as scratch:
        script = writer(args.rate, args.seconds, Path(scratch))
        flood = flooder(Path(scratch)) if args.flood else None
        mux, floor = asyncio.run(
            mux_side(args.panes, LoadStart(script, "mux"), args.seconds, flood, args.poll)
        )
        tmux = tmux_side(args.panes, LoadStart(script, "tmux"), args.seconds, flood, args.poll)

    print(
        f"load: {args.panes} panes, {args.rate / 1000:.0f} KB/s each for {args.seconds:.0f} s "
        f"({args.panes * args.rate / 1e6:.1f} MB/s in all), "
        + ("one client polling" if args.poll else "no client calling the API")
        + (", one more pane flooding" if args.flood else "")
        + "\n"
    )
    rows = []
    for label, what in (
        ("listing (ListPanes | list-panes)", "list"),
        ("a screen (GetScreen | capture-pane)", "screen"),
        ("typing (SendInput | send-keys)", "input"),
        ("Snapshot() until durable (mux only)", "snapshot"),
        ("keystroke echo (muxctl attach | tmux attach)", "echo"),
    ):
        tail: tuple[Callable[[list[float]], float], str] = (
            (max, "max") if what == "snapshot" else (lambda v: percentile(v, 0.99), "p99")
        )
        for pick, name in ((lambda v: percentile(v, 0.5), "p50"), tail):
            rows.append([f"{label} {name} ms", *(cell(s, what, pick) for s in (mux, tmux, floor))])
        rows.append(
            [f"{label} calls", *(str(len(s.calls.get(what, []))) for s in (mux, tmux, floor))]
        )
    rows += [
        ["spawn per pane ms", *(f"{s.spawn_seconds / args.panes * 1000:.1f}" for s in (mux, tmux))],
        ["server CPU % of a core", *(f"{s.cpu_percent:.0f}" for s in (mux, tmux))],
        ["server RSS MiB after", *(f"{s.rss_mib:.1f}" for s in (mux, tmux))],
        ["panes intact (done, seq unbroken)", *(f"{s.intact}/{args.panes}" for s in (mux, tmux))],
        ["keys never echoed (5 s)", *(str(s.echo_lost) for s in (mux, tmux))],
    ]
    columns = ["figure", "mux", "tmux", "D-Bus floor"]
    print_table(columns, [row + ["-"] * (len(columns) - len(row)) for row in rows])
    if args.poll:
        worst = max(
            (
                percentile(mux.calls[w], 0.99)
                for w in ("list", "screen", "input")
                if mux.calls.get(w)
            ),
            default=float("nan"),
        )
        floor_worst = max(percentile(floor.calls[w], 0.99) for w in ("list", "screen", "input"))
        verdict = "met" if worst <= GOAL_P99_MS and mux.intact == args.panes else "missed"
        print(
            f"\ngoal: every D-Bus call p99 <= {GOAL_P99_MS:.0f} ms and nothing lost: "
            f"worst p99 {worst:.1f} ms (the floor's {floor_worst:.1f} ms), "
            f"{mux.intact}/{args.panes} intact, {verdict}"
        )
    if mux.calls.get("echo") and tmux.calls.get("echo"):
        ratio = percentile(mux.calls["echo"], 0.99) / percentile(tmux.calls["echo"], 0.99)
        echo_verdict = "met" if ratio <= 1.0 and not mux.echo_lost else "missed"
        print(f"goal: echo p99 <= 1.0x tmux's: {ratio:.2f}x, {echo_verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
