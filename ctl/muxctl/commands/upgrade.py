"""muxctl upgrade: re-execute muxd in place; panes, ids and the instance token survive.

The service answers once the new program has shown that it starts, then
re-executes; this waits until the new program owns the bus name again.
"""

import argparse
import asyncio
import json
import time
from typing import TYPE_CHECKING

from muxctl.errors import CtlError
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient

NAME = "upgrade"
HELP = "re-execute muxd in place, keeping panes"
STARTS_SERVICE = False  # upgrading a service that does not run makes no sense

BACK_WITHIN_SECONDS = 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def report_not_running(args: argparse.Namespace, error: Exception) -> int:
    raise CtlError(f"nothing to upgrade: {error}")


async def _owner(client: "MuxClient") -> str:
    from mux.protocol.names import BUS_NAME

    try:
        (owner,) = await client.call(
            "GetNameOwner",
            "s",
            [BUS_NAME],
            interface="org.freedesktop.DBus",
            path="/org/freedesktop/DBus",
            destination="org.freedesktop.DBus",
        )
    except CtlError:
        return ""
    return str(owner)


def _outcome() -> dict[str, object]:
    """What muxd wrote about its last upgrade: {"generation": N, "error": "..."}."""
    from mux.system.paths import resolve_paths

    try:
        value = json.loads(resolve_paths().upgrade_outcome.read_text())
    except (OSError, ValueError):
        return {"generation": 0, "error": ""}
    return value if isinstance(value, dict) else {"generation": 0, "error": ""}


async def run(args: argparse.Namespace, client: "MuxClient") -> int:
    before = await _owner(client)
    previous = _outcome()
    await client.call("Upgrade")
    deadline = time.monotonic() + BACK_WITHIN_SECONDS
    # Back on the bus and the outcome written: by the new program (same pid, next
    # generation) or by the old one, when the exec failed and it goes on serving.
    while (owner := await _owner(client)) in ("", before) or _outcome() == previous:
        if time.monotonic() > deadline:
            raise CtlError("mux did not come back on the bus within 30 seconds after the upgrade")
        await asyncio.sleep(0.02)
    outcome = _outcome()
    if outcome.get("error"):
        raise CtlError(f"{outcome['error']}; mux goes on serving as it was")
    version = await client.get_property("Version")
    (pid,) = await client.call(
        "GetConnectionUnixProcessID",
        "s",
        [owner],
        interface="org.freedesktop.DBus",
        path="/org/freedesktop/DBus",
        destination="org.freedesktop.DBus",
    )
    if args.json:
        print_json(
            {
                "upgraded": True,
                "version": version,
                "pid": pid,
                "generation": outcome.get("generation"),
            }
        )
    else:
        print(f"mux {version} upgraded in place (pid {pid})")
    return 0
