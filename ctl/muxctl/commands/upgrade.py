"""muxctl upgrade: re-execute muxd in place; panes, ids and the instance token survive.

The service answers once the new program has shown that it starts, then
re-executes; this waits until the new program owns the bus name again.
"""

import argparse
import time
from typing import TYPE_CHECKING

from muxctl.commands.command import ServiceCommand
from muxctl.errors import CtlError
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient
    from muxctl.errors import NotRunning

BACK_WITHIN_SECONDS = 30.0


def report_not_running(args: argparse.Namespace, error: "NotRunning") -> int:
    raise CtlError(f"nothing to upgrade: {error}")


def _owner(client: "MuxClient") -> str:
    from mux.protocol.names import BUS_NAME

    try:
        return str(client.ask_bus("GetNameOwner", "s", [BUS_NAME]))
    except CtlError:
        return ""


def _outcome() -> dict[str, object]:
    """What muxd wrote about its last upgrade: {"generation": N, "error": "..."}; a file
    that is absent, unreadable or malformed is as if there were none."""
    from mux.system.json_file import KIB, JsonFileKind, read_json_object
    from mux.system.paths import resolve_paths

    none: dict[str, object] = {"generation": 0, "error": ""}
    try:
        value = read_json_object(
            resolve_paths().upgrade_outcome, JsonFileKind("the upgrade outcome", 64 * KIB, 2)
        )
    except (OSError, ValueError):  # MalformedJson is a ValueError
        return none
    if not isinstance(value.get("generation"), int) or not isinstance(value.get("error"), str):
        return none
    return value


def run(args: argparse.Namespace, client: "MuxClient") -> int:

    before = _owner(client)
    previous = _outcome()
    client.call("Upgrade")
    deadline = time.monotonic() + BACK_WITHIN_SECONDS
    # Back on the bus and the outcome written: by the new program (same pid, next
    # generation) or by the old one, when the exec failed and it goes on serving.
    while (owner := _owner(client)) in ("", before) or _outcome() == previous:
        if time.monotonic() > deadline:
            raise CtlError("mux did not come back on the bus within 30 seconds after the upgrade")
        time.sleep(0.02)
    outcome = _outcome()
    if outcome.get("error"):
        raise CtlError(f"{outcome['error']}; mux goes on serving as it was")
    version = client.get_property("Version")
    pid = client.ask_bus("GetConnectionUnixProcessID", "s", [owner])
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


COMMAND = ServiceCommand(
    name="upgrade",
    help="re-execute muxd in place, keeping panes",
    run=run,
    starts_service=False,  # upgrading a service that does not run makes no sense
    report_not_running=report_not_running,
)
