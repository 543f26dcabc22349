"""The web overview under load: how often each of 200 busy panes' thumbnails is updated
on an open overview page, and what watching them costs muxd's event loop.

One muxd (bench/common.py) gets `--panes` panes (200), each printing a new line every
50 ms (perl, 20 Hz: four times the overview's frame rate). `muxctl web --no-open`
serves it; a WebSocket client logs in with the printed link and holds the overview
socket open for `--seconds`, counting each pane's screen updates. muxd's loop is
probed meanwhile by a D-Bus `Peer.Ping` every 20 ms (the round trip waits for the loop:
a long hold shows as a slow ping), first with no page open (the panes alone), then with
the overview open. CPU is read from /proc for muxd and for the web process.

Goal (issue #33): each pane's thumbnail updated at >= 5 Hz (the overview's cap: one
frame per 180 ms, 5.5 Hz) without holding muxd's loop: the longest ping with the overview open
no longer than with no page (p99 shown too: the loop is busier, relaying to 200 more
clients).

Run from the repository root:
python3 bench/web_overview.py [--panes 200] [--seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import time
from collections import Counter
from urllib.parse import urlsplit

import aiohttp
from dbus_fast import Message

from common import (
    REAL_PYTHON,
    Muxd,
    call,
    connect,
    cpu_seconds,
    median,
    percentile,
    print_table,
    spawn_body,
)

PING_EVERY = 0.02
PRINTER = ["perl", "-e", '$|=1; while (1) { print ++$i, " ", "x" x 60, "\\n"; '
           "select(undef, undef, undef, 0.05) }"]  # fmt: skip


async def ping_times(address: str, seconds: float) -> list[float]:
    """Round trips of Peer.Ping to muxd, one every PING_EVERY, in ms."""
    bus = await connect(address)
    times = []
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            message = Message(
                destination="org.mux.Mux1",
                path="/org/mux/Mux1",
                interface="org.freedesktop.DBus.Peer",
                member="Ping",
            )
            start = time.perf_counter()
            await bus.call(message)
            times.append((time.perf_counter() - start) * 1000)
            await asyncio.sleep(PING_EVERY)
    finally:
        bus.disconnect()
    return times


WARM_UP = 3.0  # after opening the page: every pane attached and repainted


async def watch_overview(
    link: str, seconds: float, warmed: asyncio.Event
) -> tuple[Counter[str], int, int]:
    """Per pane, how many screen updates the overview socket carried in `seconds`, after
    WARM_UP (then `warmed` is set); the messages and bytes it carried."""
    parts = urlsplit(link)
    origin = f"http://{parts.netloc}"
    updates: Counter[str] = Counter()
    messages = size = 0
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        async with session.get(link, allow_redirects=False) as login:
            assert login.status == 303, login.status
        socket = await session.ws_connect(f"{origin}/ws/overview", origin=origin)
        # The first screens (the watches attaching) are not counted.
        await asyncio.sleep(WARM_UP)
        warmed.set()
        while True:
            try:
                message = await asyncio.wait_for(socket.receive(), 0.01)
            except TimeoutError:
                break
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                message = await asyncio.wait_for(socket.receive(), left)
            except TimeoutError:
                break
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            messages += 1
            size += len(message.data)
            updates.update(json.loads(message.data)["screens"].keys())
        await socket.close()
    return updates, messages, size


async def phase(muxd: Muxd, web_pid: int, link: str | None, seconds: float) -> dict[str, object]:
    """Pings (and CPU) over `seconds`: the panes alone, or with the overview open and
    warmed up (the pings while it opened apart)."""
    warmed = asyncio.Event()
    overview = asyncio.create_task(watch_overview(link, seconds, warmed)) if link else None
    opening = await ping_times(muxd.bus_address, WARM_UP) if link else []
    await warmed.wait() if link else None
    cpu_mux, cpu_web, start = cpu_seconds(muxd.pid), cpu_seconds(web_pid), time.monotonic()
    times = await ping_times(muxd.bus_address, seconds)
    elapsed = time.monotonic() - start
    return {
        "pings": times,
        "opening": opening,
        "overview": await overview if overview else None,
        "mux_cpu": (cpu_seconds(muxd.pid) - cpu_mux) / elapsed,
        "web_cpu": (cpu_seconds(web_pid) - cpu_web) / elapsed,
    }


async def main_async(panes: int, seconds: float) -> None:
    with Muxd() as muxd:
        bus = await connect(muxd.bus_address)
        ids = [(await call(bus, "Spawn", "a{sv}", spawn_body(PRINTER)))[0] for _ in range(panes)]
        bus.disconnect()
        web = subprocess.Popen(
            [REAL_PYTHON, "-m", "muxctl", "web", "--no-open"],
            env=muxd.env,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            assert web.stdout is not None
            link = web.stdout.readline().strip()
            alone = await phase(muxd, web.pid, None, seconds)
            watched = await phase(muxd, web.pid, link, seconds)
        finally:
            os.killpg(web.pid, signal.SIGTERM)
            web.wait(timeout=20)
    assert watched["overview"] is not None
    updates, messages, size = watched["overview"]  # type: ignore[misc]
    rates = sorted(updates.get(str(pane), 0) / seconds for pane in ids)
    print(f"{panes} panes printing at 20 Hz; overview socket held {seconds:.0f} s")
    print_table(
        ["thumbnail updates per pane (Hz)", "min", "p10", "median", "goal"],
        [["", f"{rates[0]:.2f}", f"{percentile(rates, 0.1):.2f}", f"{median(rates):.2f}", ">= 5"]],
    )
    print(f"overview socket: {messages / seconds:.1f} messages/s, {size / seconds / 1e6:.2f} MB/s")
    rows = []
    for name, figures in (("panes alone", alone), ("overview open", watched)):
        pings: list[float] = figures["pings"]  # type: ignore[assignment]
        rows.append(
            [
                name,
                f"{median(pings):.2f}",
                f"{percentile(pings, 0.99):.2f}",
                f"{max(pings):.2f}",
                f"{figures['mux_cpu']:.0%}",
                f"{figures['web_cpu']:.0%}",
            ]
        )
    opening: list[float] = watched["opening"]  # type: ignore[assignment]
    rows.append(
        [
            "overview opening (3 s)",
            f"{median(opening):.2f}",
            f"{percentile(opening, 0.99):.2f}",
            f"{max(opening):.2f}",
            "",
            "",
        ]
    )
    print_table(["muxd loop (Peer.Ping ms)", "p50", "p99", "max", "muxd CPU", "web CPU"], rows)
    open_pings: list[float] = watched["pings"]  # type: ignore[assignment]
    alone_pings: list[float] = alone["pings"]  # type: ignore[assignment]
    print(
        f"overview open / panes alone: ping max {max(open_pings) / max(alone_pings):.2f}x "
        f"(goal <= 1.0), p99 "
        f"{percentile(open_pings, 0.99) / percentile(alone_pings, 0.99):.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--panes", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    asyncio.run(main_async(args.panes, args.seconds))


if __name__ == "__main__":
    main()
