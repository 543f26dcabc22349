"""Call rate: how many GetScreen and KillIf calls a second one warm client gets from
muxd, beside the floor -- a dbus-fast echo service on the same bus, measured in the
same run, answering the same shapes (24 lines of 80 characters; an empty reply).

The client (dbus-fast, connected once) sends one call, waits for its reply, sends the
next, for --seconds each; the rounds alternate between mux and the echo service, which
runs in a process of its own, as muxd does.
KillIf is asked with a token that is not the pane's: muxd checks the pane, the caller
and the token and refuses (PreconditionFailed), which is the call's whole path but
the kill; the echo's KillIf answers an error too, so both sides pay for an error reply.

Goal: each ≥ 70 % of the floor.

Run from the repository root: python3 bench/call_rate.py [--seconds S] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import time
from collections.abc import Callable

from dbus_fast import DBusError, Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface

from common import (
    MANAGER_INTERFACE,
    REAL_PYTHON,
    ROOT_PATH,
    TIMEOUT,
    Muxd,
    connect,
    manager_message,
    median,
    name_has_owner,
    print_table,
    spawn,
)
from mux.dbus.manager_iface import manager_method

GOAL = 0.70
ECHO_NAME = "org.mux.Bench.Echo"
SCREEN = ["x" * 80] * 24


class Echo(ServiceInterface):
    """The floor: what dbus-fast itself costs for the same methods, declared the way
    muxd declares them (manager_method: the signatures of MANAGER_METHODS)."""

    def __init__(self) -> None:
        super().__init__(MANAGER_INTERFACE)

    @manager_method
    def GetScreen(self, pane_id: int) -> list[str]:
        return SCREEN

    @manager_method
    def KillIf(self, pane_id: int, instance: bytes, conditions: list[str]) -> None:
        raise DBusError("org.mux.Mux1.Error.PreconditionFailed", "not this instance")


async def rate(bus: MessageBus, make: Callable[[], Message], seconds: float) -> float:
    """Calls a second, one at a time."""
    calls = 0
    end = time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < end:
        reply = await bus.call(make())
        assert reply is not None and reply.message_type in (
            MessageType.METHOD_RETURN,
            MessageType.ERROR,
        )
        calls += 1
    return calls / (time.perf_counter() - started)


async def serve_echo(address: str) -> None:
    """The echo service, in a process of its own as muxd is (until killed)."""
    service = await connect(address)
    service.export(ROOT_PATH, Echo())
    await service.request_name(ECHO_NAME)
    await asyncio.Event().wait()


async def run(seconds: float, rounds: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {}
    with Muxd() as muxd:
        echo = subprocess.Popen(
            [REAL_PYTHON, __file__, "--serve-echo", muxd.bus_address], env=muxd.env
        )
        client = await connect(muxd.bus_address)
        try:
            deadline = time.monotonic() + TIMEOUT
            while not await name_has_owner(client, ECHO_NAME):
                if time.monotonic() > deadline or echo.poll() is not None:
                    raise RuntimeError("the echo service did not start")
                await asyncio.sleep(0.01)
            pane = await spawn(client, ["sleep", "100000"])
            cases = {
                "GetScreen mux": lambda: manager_message("GetScreen", "t", [pane]),
                "GetScreen floor": lambda: manager_message("GetScreen", "t", [pane], ECHO_NAME),
                "KillIf mux": lambda: manager_message("KillIf", "tayas", [pane, b"not-it", []]),
                "KillIf floor": lambda: manager_message(
                    "KillIf", "tayas", [pane, b"x", []], ECHO_NAME
                ),
            }
            for make in cases.values():  # warm-up
                await rate(client, make, 0.2)
            for _ in range(rounds):
                for name, make in cases.items():
                    rates.setdefault(name, []).append(await rate(client, make, seconds))
        finally:
            client.disconnect()
            echo.kill()
            echo.wait()
    return rates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve-echo", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        asyncio.run(serve_echo(args.serve_echo))
        return 0
    rates = asyncio.run(run(args.seconds, args.rounds))
    print(f"call rate: one warm client, one call at a time, median of {args.rounds} rounds\n")
    rows = []
    verdicts = []
    for call in ("GetScreen", "KillIf"):
        mux, floor = median(rates[f"{call} mux"]), median(rates[f"{call} floor"])
        verdicts.append(f"{call} {mux / floor:.0%}")
        rows.append([call, f"{mux:.0f}", f"{floor:.0f}", f"{mux / floor:.0%}"])
    print_table(["call", "mux calls/s", "dbus-fast echo calls/s (floor)", "mux / floor"], rows)
    met = all(
        median(rates[f"{c} mux"]) >= GOAL * median(rates[f"{c} floor"])
        for c in ("GetScreen", "KillIf")
    )
    print(
        f"\ngoal: >= {GOAL:.0%} of the floor: {', '.join(verdicts)}: {'met' if met else 'missed'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
