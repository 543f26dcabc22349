"""Attach throughput: a pane `cat`s a ~30 MB text file to a terminal, through mux and tmux.

The "terminal" is an outer tmux server (a real terminal emulator, the same for
every case), each case in its own outer session of the same size:

* mux: the pane runs in muxd; the outer session runs `muxctl attach`;
* tmux: the pane runs in an inner tmux server; the outer session runs
  `tmux attach` to it (a tmux client, the way people use tmux);
* direct: the outer session runs the `cat` itself (this terminal's own limit);
* raw PTY: `cat` on a PTY whose master is drained by a plain read loop, no
  emulator at all (the raw limit).

Each run starts when Enter reaches the outer session (the pane is waiting in
`read`) and ends when the end marker the pane prints after the file is on the
outer screen (polled with capture-pane every 10 ms). Rounds interleave the
cases. Service CPU is muxd's (and the tmux server's) user+system time over the
run, per MB.

With --split, the pane shares its window with a second, idle pane beside it (a
split of the terminal in two halves side by side): mux shows the window in
`muxctl attach`'s window view (muxctl composes it), tmux with the same split;
the pane attached alone through mux is measured beside them. Goal: the mux split
>= 1.0x the tmux split.

With --busy, a CPU hog (a process spinning in a loop, `nice 0`) runs through the
whole measurement, as a build or a browser would on the other core of this
two-core machine; every case runs under the same hog.

Run from the repository root:
python3 bench/attach_throughput.py [--mb 30] [--rounds 3] [--busy] [--split]
"""

from __future__ import annotations

import argparse
import os
import pty
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import (
    REAL_PYTHON,
    Muxd,
    Tmux,
    child_pids,
    cpu_seconds,
    make_root,
    median,
    print_table,
    wait_for,
)

ROWS, COLS = 50, 160
POLL_SECONDS = 0.01
RUN_TIMEOUT = 300.0


def make_file(path: Path, megabytes: float) -> int:
    """Plain text lines of varying length, like a log or source being paged."""
    words = [
        "lorem",
        "ipsum",
        "dolor",
        "sit",
        "amet",
        "consectetur",
        "adipiscing",
        "elit",
        "sed",
        "do",
        "eiusmod",
    ]
    lines = []
    size = 0
    i = 0
    while size < megabytes * 1_000_000:
        line = f"{i:8d} " + " ".join(words[(i + k) % len(words)] for k in range(3 + i % 17)) + "\n"
        lines.append(line)
        size += len(line)
        i += 1
    path.write_text("".join(lines))
    return path.stat().st_size


def pane_command(file: Path, marker: str) -> str:
    # The marker is assembled by the shell, so the command line itself never shows it.
    a, b = marker[:4], marker[4:]
    return f"echo READY; read x; cat {shlex.quote(str(file))}; echo {a}''{b}; exec sleep 100000"


def descendants(pid: int) -> list[int]:
    found = []
    for child in child_pids(pid):
        found += [child, *descendants(child)]
    return found


class Outer:
    """The terminal: a tmux server whose sessions run each case's client."""

    def __init__(self, tmux: Tmux) -> None:
        self.tmux = tmux
        self.count = 0

    def open(self, command: str) -> str:
        self.count += 1
        name = f"case{self.count}"
        self.tmux.run("new-session", "-d", "-s", name, "-x", str(COLS), "-y", str(ROWS), command)
        return f"{name}:"

    def shows(self, target: str, needle: str) -> bool:
        return needle in self.tmux.run("capture-pane", "-p", "-t", target)

    def client_pids(self, target: str) -> list[int]:
        """The processes the outer session runs: the attaching client and its children."""
        pid = int(self.tmux.run("display-message", "-p", "-t", target, "#{pane_pid}"))
        return [pid, *descendants(pid)]

    def timed_run(self, target: str, marker: str) -> float:
        wait_for(lambda: self.shows(target, "READY"), 30, what="the case to be ready")
        start = time.perf_counter()
        self.tmux.run("send-keys", "-t", target, "Enter")
        deadline = start + RUN_TIMEOUT
        while not self.shows(target, marker):
            if time.perf_counter() > deadline:
                raise RuntimeError(f"no end marker after {RUN_TIMEOUT}s")
            time.sleep(POLL_SECONDS)
        return time.perf_counter() - start

    def close(self, target: str) -> None:
        self.tmux.run("kill-session", "-t", target)


def measured(outer: Outer, target: str, marker: str, server: int) -> tuple[float, float, float]:
    """(seconds, server CPU seconds, client CPU seconds) of one timed run."""
    wait_for(lambda: outer.shows(target, "READY"), 30, what="the case to be ready")
    clients = outer.client_pids(target)
    server_before = cpu_seconds(server)
    client_before = sum(cpu_seconds(p) for p in clients)
    seconds = outer.timed_run(target, marker)
    server_cpu = cpu_seconds(server) - server_before
    client_cpu = sum(cpu_seconds(p) for p in clients) - client_before
    outer.close(target)
    return seconds, server_cpu, client_cpu


IDLE = "read x"  # the other pane of a split: it waits, printing nothing


def run_mux(
    outer: Outer, muxd: Muxd, file: Path, marker: str, split: bool = False
) -> tuple[float, float, float]:
    import asyncio

    from dbus_fast import Variant

    from common import call, connect

    async def spawn() -> int:
        bus = await connect(muxd.bus_address)
        options = {
            "argv": Variant("as", ["sh", "-c", pane_command(file, marker)]),
            "rows": Variant("q", ROWS),
            "cols": Variant("q", COLS),
        }
        pane_id, _, _ = await call(bus, "Spawn", "a{sv}", [options])
        if split:  # the idle pane on the right: the busy one keeps the focus
            idle = {"argv": Variant("as", ["sh", "-c", IDLE])}
            await call(bus, "SplitPane", "tsda{sv}", [pane_id, "horizontal", 0.5, idle])
            (panes,) = await call(bus, "ListPanes")
            window = next(p["window"].value for p in panes if p["id"].value == pane_id)
            focus = {"focused_pane": Variant("t", pane_id)}
            await call(bus, "SetWindow", "ta{sv}", [window, focus])
        bus.disconnect()
        return int(pane_id)

    pane = asyncio.run(spawn())
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in muxd.env.items())
    target = outer.open(f"env -i {env} {shlex.quote(REAL_PYTHON)} -m muxctl attach {pane}")
    return measured(outer, target, marker, muxd.pid)


def run_tmux(
    outer: Outer, inner: Tmux, file: Path, marker: str, split: bool = False
) -> tuple[float, float, float]:
    name = f"inner{marker}"
    inner.run(
        "new-session",
        "-d",
        "-s",
        name,
        "-x",
        str(COLS),
        "-y",
        str(ROWS),
        pane_command(file, marker),
    )
    if split:  # the idle pane on the right, the busy one (the first) keeps the focus
        inner.run("split-window", "-h", "-d", "-t", name, IDLE)
    client = " ".join(shlex.quote(a) for a in inner.argv("attach", "-t", name))
    target = outer.open(f"env TMUX_TMPDIR={shlex.quote(inner.env['TMUX_TMPDIR'])} {client}")
    result = measured(outer, target, marker, inner.pid)
    inner.run("kill-session", "-t", name)
    return result


def run_direct(outer: Outer, file: Path, marker: str) -> float:
    target = outer.open(pane_command(file, marker))
    seconds = outer.timed_run(target, marker)
    outer.close(target)
    return seconds


def run_raw_pty(file: Path) -> float:
    master, slave = pty.openpty()
    start = time.perf_counter()
    process = subprocess.Popen(["cat", str(file)], stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    while True:
        try:
            if not os.read(master, 65536):
                break
        except OSError:
            break  # EIO: cat is done and the slave closed
    elapsed = time.perf_counter() - start
    process.wait()
    os.close(master)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=30.0, help="size of the file in MB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--busy", action="store_true", help="a CPU hog runs beside")
    parser.add_argument("--split", action="store_true", help="an idle pane beside the busy one")
    args = parser.parse_args()
    hog = (
        subprocess.Popen([REAL_PYTHON, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        if args.busy
        else None
    )
    try:
        return measure(args)
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()


def measure(args: argparse.Namespace) -> int:
    root = make_root("attach-b-")
    try:
        return measure_in(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)  # (the text file is tens of MB)


def measure_in(args: argparse.Namespace, root: Path) -> int:

    file = root / "text.txt"
    size = make_file(file, args.mb)
    mb = size / 1e6
    cases = ("mux", "mux split", "tmux split") if args.split else ("mux", "tmux")
    results: dict[str, list[float]] = {name: [] for name in (*cases, "direct", "raw PTY")}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    client_cpu: dict[str, list[float]] = {name: [] for name in cases}
    with Tmux("outer-bench") as outer_tmux, Tmux("inner-bench") as inner, Muxd() as muxd:
        outer = Outer(outer_tmux)
        for round_no in range(args.rounds):
            marker = f"END{round_no}X{os.getpid()}"
            for index, name in enumerate(cases):
                case_marker = f"{marker}c{index}"
                if name.startswith("mux"):
                    outcome = run_mux(outer, muxd, file, case_marker, "split" in name)
                else:
                    outcome = run_tmux(outer, inner, file, case_marker, "split" in name)
                results[name].append(outcome[0])
                cpu[name].append(outcome[1])
                client_cpu[name].append(outcome[2])
            results["direct"].append(run_direct(outer, file, marker + "d"))
            results["raw PTY"].append(run_raw_pty(file))
            print(
                f"round {round_no + 1}: "
                + ", ".join(
                    f"{name} {mb / values[-1]:.1f} MB/s" for name, values in results.items()
                ),
                file=sys.stderr,
            )

    rate = {name: mb / median(values) for name, values in results.items()}
    print(
        f"\n{mb:.1f} MB of text to a {COLS}x{ROWS} terminal (an outer tmux), "
        f"median of {args.rounds} rounds" + (", a CPU hog beside" if args.busy else "") + "\n"
    )
    rows = []
    for name, seconds in results.items():
        server = f"{median(cpu[name]) / mb * 1000:.1f} ms" if name in cpu else "-"
        client = f"{median(client_cpu[name]) / mb * 1000:.1f} ms" if name in cpu else "-"
        rows.append([name, f"{rate[name]:.1f}", f"{median(seconds):.2f}", server, client])
    print_table(["path", "MB/s", "seconds", "service CPU/MB", "client CPU/MB"], rows)
    print()
    if args.split:
        split_ratio = rate["mux split"] / rate["tmux split"]
        print(f"mux split / tmux split: {split_ratio:.2f}x  (goal >= 1.0)")
        print(f"mux split / mux alone:  {rate['mux split'] / rate['mux']:.2f}x")
        return 0
    goal = "goal >= 1.0 with the hog" if args.busy else "goal >= 1.5"
    print(f"mux / tmux:    {rate['mux'] / rate['tmux']:.2f}x  ({goal})")
    print(f"mux / direct:  {rate['mux'] / rate['direct']:.2f}x  (this terminal's own limit)")
    print(f"mux / raw PTY: {rate['mux'] / rate['raw PTY']:.2f}x  (goal >= 0.75)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
