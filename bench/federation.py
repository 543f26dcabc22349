"""Federation: a hub muxd driving a satellite muxd over a real sshd in another network
namespace (tests/federation/conftest.py) — how long a dial takes, what a relayed call
costs beside the same call made directly, and how fast a link heals after a flap,
with the hub's netlink trigger and without it, all in one run.

Dial: the hub starts with no hosts; `AddHost` is sent from a warm client and timed
to the `HostStateChanged` signal saying "up". The hub's DEBUG log splits it:
AddHost to ssh started, ssh's login (until the master's control socket answers),
`muxctl where --json` on the satellite (a Python CLI start, through the master),
then the forwards, the D-Bus connection through them, Features and RegisterLink.
The hub's first dial is shown apart (its network watch imports pyroute2 on the
hub's loop as the dial starts), and a first dial of a hub without pyroute2 beside
it; the median is of `--runs` more, each after a RemoveHost. For scale, commands
run through the link's own master as the hub runs `muxctl where`: `true`, the
bare interpreter, `muxctl where --json`.

Relayed calls: `ListPanes` (3 panes on the satellite) and `GetScreen`, 500 of
each (`--calls`) after a warm-up, from one client process, interleaved over three
paths: straight to the satellite's bus; to the satellite's bus through the hub's
ssh forward (ssh without the hub's muxd); and to the hub's host object
/org/mux/Mux1/host/sat (the hub's bus, the hub muxd, the forward). Medians and p90
in µs, and the ratios.

Heal after a flap: the hub's end of the veth goes down; "down noticed" is until
the hub leaves "up"; then the link goes up again, at once and after 5 s more
(`--holds`: the backoff has grown by then), and "heal" is from `ip link set up`
to the hub's "up" (a whole dial included). (a) as the
service runs: a netlink change makes the hub check every link; (b) without that
trigger: a second hub whose PYTHONPATH holds a `pyroute2` that raises ImportError
(muxd runs `python -P -m mux`: -P drops only the script directory, PYTHONPATH
stays), so it heals by ssh's keepalives (ServerAliveInterval=10 x 3) and backoff
alone. (a) `--runs` times per hold, (b) once (`--no-netlink-runs`): its
"down noticed" alone is ~40 s, so the whole run takes about two minutes. Each
wait is capped at `--cap` seconds (60) and reported as ">60 s" when reached.

Needs root (network namespaces and a second sshd, as the federation tests).
Goals: a relayed call <= 3x the direct one; with netlink, healed within 1 s of the
link returning.

Run from the repository root:
python3 bench/federation.py [--runs N] [--calls N] [--holds 0,5] [--no-netlink-runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.auth import UID_NOT_SPECIFIED, AuthExternal
from tests.federation.conftest import TwoHosts, _why_not, two_hosts_session
from tests.harness import Service

from common import (
    MANAGER_INTERFACE,
    REAL_PYTHON,
    ROOT_PATH,
    call,
    connect,
    manager_message,
    median,
    percentile,
    print_table,
    spawn,
)
from mux.protocol.names import host_path
from mux.system.bus_daemon import bus_daemon_message

HOST = "sat"
RELAY_GOAL = 3.0  # relayed <= 3x direct
HEAL_GOAL = 1.0  # seconds from the link returning to "up", with netlink
PANES = 3
WARMUP_CALLS = 50
MASTER_COMMAND_RUNS = 5


# -- the hub ------------------------------------------------------------------------


def hub_service(net: TwoHosts, root: Path, extra_env: dict[str, str] | None = None) -> Service:
    """A hub muxd in the hub's namespace, no hosts configured, DEBUG log."""
    root.mkdir(mode=0o700, exist_ok=True)
    config = f"ssh_command = {json.dumps(net.ssh_command)}\nlog_level = 'DEBUG'\n"
    return Service(
        root,
        bus_address=None,
        config=config,
        extra_env=extra_env,
        argv_prefix=net.hub_prefix,
    )


def hide_pyroute2(directory: Path) -> dict[str, str]:
    """The environment that makes `import pyroute2` fail in the hub (and only there)."""
    package = directory / "pyroute2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        'raise ImportError("pyroute2 hidden by bench/federation.py")\n'
    )
    return {"PYTHONPATH": str(directory)}


class HostStates:
    """Every HostStateChanged of the hub, stamped with time.monotonic() on arrival."""

    def __init__(self, bus: MessageBus) -> None:
        self.bus = bus
        self.events: list[tuple[float, str, str]] = []
        self._arrived = asyncio.Event()

    async def subscribe(self) -> HostStates:
        self.bus.add_message_handler(self._handle)
        rule = f"type='signal',interface='{MANAGER_INTERFACE}',member='HostStateChanged'"
        reply = await self.bus.call(bus_daemon_message("AddMatch", "s", [rule]))
        assert reply is not None and reply.message_type is MessageType.METHOD_RETURN, reply
        return self

    def _handle(self, message: Message) -> None:
        if message.message_type is MessageType.SIGNAL and message.member == "HostStateChanged":
            name, state = message.body
            self.events.append((time.monotonic(), name, state))
            self._arrived.set()

    def mark(self) -> int:
        return len(self.events)

    async def wait(self, wanted: Callable[[str], bool], since: int, timeout: float) -> float | None:
        """When the first state `wanted` accepts arrived after event `since`; None if
        none within `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            for stamp, name, state in self.events[since:]:
                if name == HOST and wanted(state):
                    return stamp
            self._arrived.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), left)


async def host_state(bus: MessageBus) -> str:
    (entries,) = await call(bus, "ListHosts")
    for entry in entries:
        if entry["name"].value == HOST:
            return str(entry["state"].value)
    return "absent"


async def last_error(bus: MessageBus) -> str:
    (entries,) = await call(bus, "ListHosts")
    return next((str(e["last_error"].value) for e in entries if e["name"].value == HOST), "")


# -- dials ---------------------------------------------------------------------------

# The hub's DEBUG/INFO lines that mark the steps of a dial (mux.federation.link,
# ssh_master, hub), in the order they come.
STEPS = (
    ("added", lambda line: f"host {HOST} added" in line),
    ("master", lambda line: f"host {HOST}: [" in line and "'-M'" in line),
    ("where", lambda line: f"host {HOST}: [" in line and "where --json" in line),
    ("forward", lambda line: f"host {HOST}: [" in line and "'forward'" in line),
    ("up", lambda line: f"host {HOST} is up" in line),
)


def log_steps(text: str) -> dict[str, float]:
    """Wall-clock seconds of each step's first line in `text` (the log's own stamps, ms)."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        for step, matches in STEPS:
            if step not in found and matches(line):
                stamp = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
                found[step] = stamp.timestamp()
    return found


def read_from(path: Path, offset: int) -> str:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


async def dial(
    bus: MessageBus, states: HostStates, hub: Service, timeout: float
) -> dict[str, float]:
    """AddHost, timed to "up"; with the steps from the hub's log (seconds)."""
    offset = hub.log_path.stat().st_size
    since = states.mark()
    start = time.monotonic()
    await call(bus, "AddHost", "sa{sv}", [HOST, {"destination": Variant("s", HOST)}])
    up = await states.wait(lambda s: s == "up", since, timeout)
    if up is None:
        raise RuntimeError(
            f"host {HOST} not up within {timeout:.0f} s: {await last_error(bus)}\n"
            f"{hub.log()[-3000:]}"
        )
    figures = {"total": up - start}
    # The last step is logged just before the signal is sent: wait for it to be written.
    for _ in range(200):
        steps = log_steps(read_from(hub.log_path, offset))
        if len(steps) == len(STEPS):
            break
        await asyncio.sleep(0.005)
    if len(steps) == len(STEPS):
        figures["to_ssh"] = steps["master"] - steps["added"]
        figures["login"] = steps["where"] - steps["master"]
        figures["where"] = steps["forward"] - steps["where"]
        figures["rest"] = steps["up"] - steps["forward"]
    return figures


async def remove(bus: MessageBus) -> None:
    await call(bus, "RemoveHost", "s", [HOST])


def through_master(net: TwoHosts, hub: Service, command: str) -> float:
    """One command run on the satellite through the hub's master, as the hub runs
    `muxctl where` (a session over the master's connection); seconds."""
    control = hub.runtime / "hosts" / HOST / "ssh"
    argv = [*net.ssh_command, "-S", str(control), "-o", "BatchMode=yes", "--", HOST, command]
    start = time.perf_counter()
    subprocess.run(
        argv,
        env=net.client_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=30,
        check=True,
    )
    return time.perf_counter() - start


def master_commands(net: TwoHosts) -> list[tuple[str, str]]:
    """(label, command) run through the master, for the split of `muxctl where`."""
    path = net.satellite_path()
    found = shutil.which("muxctl", path=path) or "muxctl"
    commands = [
        ("true", "true"),
        ("python3 -c pass (real interpreter)", f"{REAL_PYTHON} -c pass"),
        (f"muxctl where --json (PATH: {found})", "muxctl where --json"),
    ]
    real = Path(REAL_PYTHON).parent / "muxctl"
    if real.exists() and str(real) != found:
        commands.append((f"{real} where --json", f"{real} where --json"))
    return commands


# -- relayed calls -------------------------------------------------------------------


async def timed(bus: MessageBus, path: str, member: str, signature: str, body: list[Any]) -> float:
    """One Manager call, built and timed to its reply; µs."""
    message = manager_message(member, signature, body, path=path)
    start = time.perf_counter_ns()
    reply = await bus.call(message)
    elapsed = time.perf_counter_ns() - start
    assert reply is not None
    if reply.message_type is not MessageType.METHOD_RETURN:
        raise RuntimeError(f"{member} on {path}: {reply.error_name} {reply.body}")
    return elapsed / 1000


async def relayed_calls(
    net: TwoHosts, hub: Service, hub_bus: MessageBus, calls: int
) -> dict[str, dict[str, list[float]]]:
    """{method: {path: [µs]}} for direct, forward, hub."""
    satellite = await connect(net.satellite.bus_address)
    # The satellite's bus through the hub's own forward: what ssh costs, without the hub.
    forwarded = MessageBus(
        bus_address=f"unix:path={hub.runtime / 'hosts' / HOST / 'bus'}",
        negotiate_unix_fd=False,
        auth=AuthExternal(UID_NOT_SPECIFIED),
    )
    await forwarded.connect()
    try:
        panes = [
            await spawn(satellite, ["sh", "-c", f"seq 1 {10 * (n + 1)}; exec sleep 100000"])
            for n in range(PANES)
        ]
        pane = panes[-1]
        deadline = time.monotonic() + 10
        while "30" not in [
            line.strip() for line in (await call(satellite, "GetScreen", "t", [pane]))[0]
        ]:
            if time.monotonic() > deadline:
                raise RuntimeError("the satellite's pane never showed its output")
            await asyncio.sleep(0.01)
        routes = {
            "direct": (satellite, ROOT_PATH),
            "forward": (forwarded, ROOT_PATH),
            "hub": (hub_bus, host_path(HOST)),
        }
        methods: dict[str, tuple[str, list[Any]]] = {
            "ListPanes": ("", []),
            "GetScreen": ("t", [pane]),
        }
        results: dict[str, dict[str, list[float]]] = {}
        for member, (signature, body) in methods.items():
            results[member] = {route: [] for route in routes}
            for n in range(WARMUP_CALLS + calls):
                for route, (bus, path) in routes.items():
                    elapsed = await timed(bus, path, member, signature, body)
                    if n >= WARMUP_CALLS:
                        results[member][route].append(elapsed)
        reply = await hub_bus.call(manager_message("ListPanes", "", [], path=host_path(HOST)))
        assert reply is not None and len(reply.body[0]) == PANES, reply
        return results
    finally:
        forwarded.disconnect()
        satellite.disconnect()


# -- flaps ---------------------------------------------------------------------------


async def flap(
    net: TwoHosts, bus: MessageBus, states: HostStates, hold: float, cap: float
) -> tuple[float | None, float | None]:
    """(down noticed, healed) in seconds, None where the cap was reached. The link is
    up again on return, or the hub gave up within the cap."""
    assert await host_state(bus) == "up"
    since = states.mark()
    down_at = time.monotonic()
    await asyncio.to_thread(net.link_down)
    left = await states.wait(lambda s: s != "up", since, cap)
    noticed = None if left is None else left - down_at
    await asyncio.sleep(hold)
    since = states.mark()
    up_at = time.monotonic()
    await asyncio.to_thread(net.link_up)
    if left is None:
        # Never noticed within the cap: no heal to time either (counted as not met).
        await states.wait(lambda s: s == "up", since, 60)
        return None, None
    back = await states.wait(lambda s: s == "up", since, cap)
    if back is None:
        # Leave the link up before the next run, however long that takes.
        await states.wait(lambda s: s == "up", since, 60)
        return noticed, None
    return noticed, back - up_at


# -- the run -------------------------------------------------------------------------


async def bench(net: TwoHosts, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    hub = hub_service(net, net.root / "hub")
    nonet: Service | None = None
    try:
        net.satellite.start()
        hub.start()
        bus = await connect(hub.bus_address)
        try:
            states = await HostStates(bus).subscribe()
            # 1. dials
            out["first"] = await dial(bus, states, hub, args.cap)
            out["dials"] = []
            for _ in range(args.runs):
                await remove(bus)
                out["dials"].append(await dial(bus, states, hub, args.cap))
            out["master"] = {}
            for _ in range(MASTER_COMMAND_RUNS):
                for label, command in master_commands(net):
                    elapsed = await asyncio.to_thread(through_master, net, hub, command)
                    out["master"].setdefault(label, []).append(elapsed)
            # 2. relayed calls
            out["calls"] = await relayed_calls(net, hub, bus, args.calls)
            # 3a. flaps, netlink trigger on
            out["netlink_log"] = "no netlink" not in hub.log()
            out["flaps"] = {}
            for hold in args.holds:
                out["flaps"][("netlink", hold)] = [
                    await flap(net, bus, states, hold, args.cap) for _ in range(args.runs)
                ]
        finally:
            bus.disconnect()
        hub.stop()

        # 3b. a hub without pyroute2: no netlink trigger
        env = hide_pyroute2(net.root / "nonetlink")
        nonet = hub_service(net, net.root / "hubb", extra_env=env)
        nonet.start()
        bus = await connect(nonet.bus_address)
        try:
            states = await HostStates(bus).subscribe()
            out["first_nonetlink"] = await dial(bus, states, nonet, args.cap)
            out["nonetlink_confirmed"] = "no netlink (pyroute2 hidden" in nonet.log()
            for hold in args.holds:
                out["flaps"][("keepalive", hold)] = [
                    await flap(net, bus, states, hold, args.cap)
                    for _ in range(args.no_netlink_runs)
                ]
        finally:
            bus.disconnect()
    finally:
        hub.stop()
        if nonet is not None:
            nonet.stop()
        net.satellite.stop()
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def seconds(values: Sequence[float | None], cap: float) -> str:
    """Median of the runs that finished; '>cap s' if any did not."""
    done = [v for v in values if v is not None]
    if len(done) < len(values):
        return f">{cap:.0f} s" + (f" ({len(done)}/{len(values)} done)" if done else "")
    return f"{median(done):.2f} s"


def report(out: dict[str, Any], args: argparse.Namespace) -> None:
    runs = args.runs
    print("federation: hub -> ssh -> satellite, one machine, two network namespaces\n")

    print(f"dial: AddHost -> HostStateChanged 'up', ms (later dials: median of {runs})\n")
    rows = []
    split = [d for d in out["dials"] if "where" in d]
    for label, figures in (
        ("hub's first dial (imports pyroute2)", [out["first"]]),
        ("first dial, hub without pyroute2", [out["first_nonetlink"]]),
        ("later dials (RemoveHost, AddHost)", split),
    ):
        if not figures or "where" not in figures[0]:
            continue
        value = {k: median([f[k] for f in figures]) for k in figures[0]}
        rows.append(
            [
                label,
                ms(value["total"]),
                ms(value["to_ssh"]),
                ms(value["login"]),
                ms(value["where"]),
                ms(value["rest"]),
                f"{value['where'] / value['total']:.0%}",
            ]
        )
    if len(split) < len(out["dials"]):
        totals = [d["total"] for d in out["dials"]]
        rows.append(["later dials (no log split)", ms(median(totals)), "", "", "", "", ""])
    print_table(
        [
            "",
            "total",
            "AddHost -> ssh",
            "ssh login",
            "muxctl where",
            "forwards+bus+RegisterLink",
            "where share",
        ],
        rows,
    )
    print(f"\nrun through the link's ssh master, ms (median of {MASTER_COMMAND_RUNS})\n")
    base = median(out["master"]["true"])
    print_table(
        ["command on the satellite", "ms", "minus `true`"],
        [
            [label, ms(median(values)), ms(median(values) - base)]
            for label, values in out["master"].items()
        ],
    )

    print(f"\nrelayed calls, µs (median and p90 of {args.calls}, interleaved)\n")
    rows = []
    for member, routes in out["calls"].items():
        med = {route: median(v) for route, v in routes.items()}
        p90 = {route: percentile(v, 0.9) for route, v in routes.items()}
        rows.append(
            [
                member,
                f"{med['direct']:.0f}",
                f"{p90['direct']:.0f}",
                f"{med['forward']:.0f}",
                f"{p90['forward']:.0f}",
                f"{med['hub']:.0f}",
                f"{p90['hub']:.0f}",
                f"{med['forward'] / med['direct']:.2f}",
                f"{med['hub'] / med['direct']:.2f}",
            ]
        )
    print_table(
        [
            "call",
            "direct",
            "p90",
            "ssh forward",
            "p90",
            "hub host object",
            "p90",
            "forward/direct",
            "hub/direct",
        ],
        rows,
    )

    cap = args.cap
    print("\nlink flap: down noticed (link down -> not 'up') and heal (link up -> 'up')\n")
    rows = []
    for (trigger, hold), results in out["flaps"].items():
        label = "netlink trigger" if trigger == "netlink" else "no netlink (keepalive, backoff)"
        rows.append(
            [
                label,
                f"{hold:g} s",
                str(len(results)),
                seconds([r[0] for r in results], cap),
                seconds([r[1] for r in results], cap),
            ]
        )
    print_table(["hub", "held down", "runs", "down noticed", "heal"], rows)
    if not out["nonetlink_confirmed"]:
        print("\nwarning: the hub without pyroute2 did not log 'no netlink (pyroute2 hidden'")
    if not out["netlink_log"]:
        print("\nwarning: the hub with pyroute2 logged 'no netlink': (a) had no trigger")

    print()
    ratios = {m: median(r["hub"]) / median(r["direct"]) for m, r in out["calls"].items()}
    relay_met = all(ratio <= RELAY_GOAL for ratio in ratios.values())
    shown = ", ".join(f"{m} {r:.2f}x" for m, r in ratios.items())
    print(f"goal: relayed call <= {RELAY_GOAL:g}x direct ({shown}): {verdict(relay_met)}")
    heals = [
        r[1]
        for (trigger, _), results in out["flaps"].items()
        if trigger == "netlink"
        for r in results
    ]
    done = [h for h in heals if h is not None]
    heal_met = len(done) == len(heals) and median(done) <= HEAL_GOAL
    worst = f", worst {max(done):.2f} s" if done else ""
    print(
        f"goal: with netlink, healed within {HEAL_GOAL:g} s of the link returning "
        f"(median of {len(heals)} flaps {seconds(heals, cap)}{worst}): {verdict(heal_met)}"
    )


def verdict(met: bool) -> str:
    return "met" if met else "not met"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3, help="dials, and flaps with netlink")
    parser.add_argument("--calls", type=int, default=500, help="timed calls per path")
    parser.add_argument(
        "--holds",
        type=lambda s: [float(x) for x in s.split(",")],
        default=[0.0, 5.0],
        help="seconds the link stays down once the hub noticed (comma-separated)",
    )
    parser.add_argument("--no-netlink-runs", type=int, default=1, help="flaps without netlink")
    parser.add_argument("--cap", type=float, default=60.0, help="longest wait, seconds")
    args = parser.parse_args()
    reason = _why_not()
    if reason is not None:
        print(f"federation bench skipped: {reason}")
        return 0
    with two_hosts_session() as net:
        out = asyncio.run(bench(net, args))
    report(out, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
