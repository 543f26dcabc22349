"""Call rate: how many GetScreen and KillIf calls a second one warm client gets from
muxd, beside the floor -- a dbus-fast service on the same bus that answers with a
copy of muxd's own reply (floor.py), measured in the same run.

The client (dbus-fast, connected once) sends one call, waits for its reply, sends the
next, for --seconds each; the rounds alternate between mux and the floor, which
runs in a process of its own, as muxd does.
KillIf is asked with a token that is not the pane's: muxd checks the pane, the caller
and the token and refuses (PreconditionFailed), which is the call's whole path but
the kill; the floor's KillIf answers an error too, so both sides pay for an error reply.

Goal: each ≥ 70 % of the floor.

Run from the repository root: python3 bench/call_rate.py [--seconds S] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from common import Muxd, connect, manager_message, median, print_table, spawn
from floor import FLOOR_NAME, FloorService

GOAL = 0.70


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


async def run(seconds: float, rounds: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {}
    with Muxd() as muxd:
        floor = FloorService(muxd.bus_address, muxd.env)
        client = await connect(muxd.bus_address)
        try:
            pane = await spawn(client, ["sleep", "100000"])
            await floor.start(client)
            cases = {
                "GetScreen mux": lambda: manager_message("GetScreen", "t", [pane]),
                "GetScreen floor": lambda: manager_message("GetScreen", "t", [pane], FLOOR_NAME),
                "KillIf mux": lambda: manager_message("KillIf", "tayas", [pane, b"not-it", []]),
                "KillIf floor": lambda: manager_message(
                    "KillIf", "tayas", [pane, b"x", []], FLOOR_NAME
                ),
            }
            for make in cases.values():  # warm-up
                await rate(client, make, 0.2)
            for _ in range(rounds):
                for name, make in cases.items():
                    rates.setdefault(name, []).append(await rate(client, make, seconds))
        finally:
            client.disconnect()
            floor.stop()
    return rates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rates = asyncio.run(run(args.seconds, args.rounds))
    print(f"call rate: one warm client, one call at a time, median of {args.rounds} rounds\n")
    rows = []
    verdicts = []
    for call in ("GetScreen", "KillIf"):
        mux, floor = median(rates[f"{call} mux"]), median(rates[f"{call} floor"])
        verdicts.append(f"{call} {mux / floor:.0%}")
        rows.append([call, f"{mux:.0f}", f"{floor:.0f}", f"{mux / floor:.0%}"])
    print_table(["call", "mux calls/s", "dbus-fast floor calls/s", "mux / floor"], rows)
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
