"""Spawn latency: mux `Spawn` from a warm D-Bus client, side by side with `tmux new-window`.

Every launch runs the same tiny program, `dd` writing one byte into a FIFO the
benchmark holds open, so "running" means the same on both sides: the program
was exec'd, loaded and reached its first write. Two moments are taken per
launch, both from the moment the request leaves:

* mux: the `Spawn` reply (it comes after fork, exec and the pane's setup:
  subprocess waits for the exec to succeed) and the byte in the FIFO;
* tmux: the exit of a `tmux new-window -d` client process (the figure users
  see from a shell: it includes starting the client) and the byte;
* tmux control mode (`tmux -C`, a client that stays connected, so the fair
  "warm client" counterpart of a connected D-Bus client): the `%end` of the
  command and the byte.

Rounds are interleaved (mux, tmux, tmux -C) so drift hits all sides alike.
Each mux pane is closed with `Kill` once its `PaneExited` signal has arrived
(outside the timed part); tmux closes its windows itself when the program
exits.

Run from the repository root: python3 bench/spawn_latency.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import select
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from common import (
    MANAGER_INTERFACE,
    REAL_PYTHON,
    TIMEOUT,
    Muxd,
    Tmux,
    TmuxControl,
    call,
    connect,
    ends_own_block,
    median,
    percentile,
    print_table,
    spawn_body,
)
from mux.system.bus_daemon import bus_daemon_message

GOAL = 1.0  # mux Spawn ≤ 1.0x tmux new-window


@dataclass
class Series:
    reply: list[float] = field(default_factory=list)  # request → reply / client exit
    running: list[float] = field(default_factory=list)  # request → program's first write


class Fifo:
    """A FIFO the launched programs write one byte into.

    The benchmark keeps a reader and a writer open for the whole run, so a
    program's open never blocks and the reader never sees end-of-file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path, 0o600)
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._keepalive = os.open(path, os.O_WRONLY)

    def program(self) -> list[str]:
        dd = shutil.which("dd") or "/bin/dd"
        return [dd, "if=/dev/zero", f"of={self.path}", "bs=1", "count=1", "status=none"]

    def drain(self) -> int:
        try:
            return len(os.read(self.fd, 4096))
        except BlockingIOError:
            return 0

    def close(self) -> None:
        os.close(self.fd)
        os.close(self._keepalive)


# -- mux ---------------------------------------------------------------------------


class ExitSignals:
    """`PaneExited` signals, so a pane is closed only after muxd has seen its end."""

    def __init__(self, bus: MessageBus) -> None:
        self._bus = bus
        self._exited: dict[int, asyncio.Future[None]] = {}
        bus.add_message_handler(self._on_message)

    async def subscribe(self) -> None:
        rule = f"type='signal',interface='{MANAGER_INTERFACE}',member='PaneExited'"
        reply = await self._bus.call(bus_daemon_message("AddMatch", "s", [rule]))
        assert reply is not None and reply.message_type is MessageType.METHOD_RETURN

    def _future(self, pane_id: int) -> asyncio.Future[None]:
        if pane_id not in self._exited:
            self._exited[pane_id] = asyncio.get_running_loop().create_future()
        return self._exited[pane_id]

    def _on_message(self, message: Message) -> bool:
        if message.message_type is MessageType.SIGNAL and message.member == "PaneExited":
            future = self._future(int(message.body[0]))
            if not future.done():
                future.set_result(None)
        return False  # not a reply: let dbus-fast go on as usual

    async def wait(self, pane_id: int) -> None:
        await asyncio.wait_for(self._future(pane_id), TIMEOUT)
        del self._exited[pane_id]


async def mux_round(
    bus: MessageBus, exits: ExitSignals, fifo: Fifo, argv: Sequence[str], into: Series
) -> None:
    loop = asyncio.get_running_loop()
    arrived: asyncio.Future[float] = loop.create_future()

    def on_byte() -> None:
        if fifo.drain() and not arrived.done():
            arrived.set_result(time.perf_counter())

    loop.add_reader(fifo.fd, on_byte)
    try:
        start = time.perf_counter()
        pane_id, _instance, _path = await call(bus, "Spawn", "a{sv}", spawn_body(argv))
        replied = time.perf_counter()
        running = await asyncio.wait_for(arrived, TIMEOUT)
    finally:
        loop.remove_reader(fifo.fd)
    into.reply.append(replied - start)
    into.running.append(running - start)
    await exits.wait(pane_id)
    await call(bus, "Kill", "t", [pane_id])


# -- tmux: a new client process a launch -------------------------------------------


def process_round(command: Sequence[str], env: dict[str, str], fifo: Fifo, into: Series) -> None:
    """Start `command`; time its exit and the byte in the FIFO, whichever comes first."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    pidfd = os.pidfd_open(process.pid)
    exited = running = 0.0
    try:
        while not (exited and running):
            waiting = [fd for fd, seen in ((pidfd, exited), (fifo.fd, running)) if not seen]
            ready, _, _ = select.select(waiting, [], [], TIMEOUT)
            now = time.perf_counter()
            if not ready:
                raise TimeoutError(f"{command[0]}: no exit or no byte within {TIMEOUT}s")
            if pidfd in ready:
                exited = now
            if fifo.fd in ready and fifo.drain():
                running = now
    finally:
        os.close(pidfd)
        process.wait()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {process.returncode}")
    into.reply.append(exited - start)
    into.running.append(running - start)


# -- tmux control mode: one client kept connected ------------------------------------


class ControlClient(TmuxControl):
    """The control client, timing `new-window` to its %end and to the program's byte."""

    def round(self, argv: Sequence[str], fifo: Fifo, into: Series) -> None:
        start = time.perf_counter()
        self._send("new-window -d " + " ".join(argv))
        ended = running = 0.0
        while not (ended and running):
            if not ended and b"\n" in self._buffer:
                line = self._line()
                if ends_own_block(line):
                    if line.startswith(b"%error"):
                        raise RuntimeError(f"tmux new-window failed: {line!r}")
                    ended = time.perf_counter()
                continue
            waiting = [fd for fd, seen in ((self._out, ended), (fifo.fd, running)) if not seen]
            ready, _, _ = select.select(waiting, [], [], TIMEOUT)
            now = time.perf_counter()
            if not ready:
                raise TimeoutError("tmux -C new-window: no answer or no byte")
            if fifo.fd in ready and fifo.drain():
                running = now
            if self._out in ready:
                chunk = os.read(self._out, 65536)
                if not chunk:
                    raise RuntimeError("tmux control client exited")
                self._buffer += chunk
        into.reply.append(ended - start)
        into.running.append(running - start)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()


# -- the run -----------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def row(name: str, values: list[float]) -> list[str]:
    return [name, str(len(values)), ms(median(values)), ms(percentile(values, 0.9))]


async def measure(rounds: int, warmup: int, ctl_rounds: int) -> None:
    with Muxd() as muxd, Tmux(f"bench-spawn-{os.getpid()}") as tmux:
        fifo = Fifo(muxd.root / "ran")
        control = ControlClient(tmux)
        bus = await connect(muxd.bus_address)
        exits = ExitSignals(bus)
        try:
            await exits.subscribe()
            argv = fifo.program()
            mux, tmux_process, tmux_control, muxctl = Series(), Series(), Series(), Series()
            new_window = tmux.argv("new-window", "-d", *argv)
            for i in range(warmup + rounds):
                keep = i >= warmup
                await mux_round(bus, exits, fifo, argv, mux if keep else Series())
                process_round(new_window, tmux.env, fifo, tmux_process if keep else Series())
                control.round(argv, fifo, tmux_control if keep else Series())
            # The CLI as a user types it: a whole muxctl process per launch.
            ctl = [REAL_PYTHON, "-m", "muxctl", "--no-start", "spawn", "--", *argv]
            for _ in range(ctl_rounds):
                process_round(ctl, muxd.env, fifo, muxctl)
                (panes,) = await call(bus, "ListPanes")
                for pane in panes:
                    await exits.wait(pane["id"].value)
                    await call(bus, "Kill", "t", [pane["id"].value])
        finally:
            bus.disconnect()
            control.close()
            fifo.close()

    print(f"spawn latency: {rounds} launches each (after {warmup} warm-up), ms")
    print(f"program: {' '.join(argv)}\n")
    print_table(
        ["measure (from the request leaving)", "n", "median", "p90"],
        [
            row("mux Spawn reply (warm D-Bus client)", mux.reply),
            row("mux Spawn -> program running", mux.running),
            row("tmux new-window, whole client process", tmux_process.reply),
            row("tmux new-window -> program running", tmux_process.running),
            row("tmux -C new-window %end (warm client)", tmux_control.reply),
            row("tmux -C new-window -> program running", tmux_control.running),
            row("muxctl spawn, whole process (real python)", muxctl.reply),
            row("muxctl spawn -> program running", muxctl.running),
        ],
    )
    print()
    ratios = [
        ("mux Spawn reply / tmux new-window process", mux.reply, tmux_process.reply, True),
        ("mux running / tmux new-window running", mux.running, tmux_process.running, False),
        ("mux Spawn reply / tmux -C new-window", mux.reply, tmux_control.reply, False),
        ("mux running / tmux -C running", mux.running, tmux_control.running, False),
        ("muxctl spawn / tmux new-window process", muxctl.reply, tmux_process.reply, False),
    ]
    rows = []
    for name, ours, theirs, judged in ratios:
        ratio = median(ours) / median(theirs)
        verdict = ("met" if ratio <= GOAL else "missed") if judged else ""
        rows.append([name, f"{ratio:.2f}", verdict])
    print_table(["ratio (medians)", "x", f"goal <= {GOAL:.1f}x"], rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=200, help="launches per side")
    parser.add_argument("--warmup", type=int, default=10, help="launches per side not counted")
    parser.add_argument("--ctl-rounds", type=int, default=20, help="whole muxctl spawns")
    args = parser.parse_args()
    asyncio.run(measure(args.rounds, args.warmup, args.ctl_rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
