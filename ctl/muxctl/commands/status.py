"""muxctl status: is the service running, on which bus, with how many panes."""

import argparse
import sys
from typing import TYPE_CHECKING

from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json, unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient
    from muxctl.errors import NotRunning


def report_not_running(args: argparse.Namespace, error: "NotRunning") -> int:
    if args.json:
        print_json({"active": False})
    else:
        print(f"muxctl: {error}", file=sys.stderr)
    return 1


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    version = client.get_property("Version")
    features = client.get_property("Features")
    (panes,) = client.call("ListPanes")
    states = [unwrap(p)["state"] for p in panes]
    running = states.count("running")
    if args.json:
        print_json(
            {
                "active": True,
                "version": version,
                "features": features,
                "bus": client.choice.kind.value,
                "bus_address": client.choice.address,
                "panes": len(states),
                "running": running,
            }
        )
    else:
        print(f"mux {version} is running on the {client.choice.kind} bus ({client.choice.address})")
        print(f"panes: {len(states)} ({running} running, {len(states) - running} exited)")
        print(f"features: {features:#x}")
    return 0


COMMAND = ServiceCommand(
    name="status",
    help="show whether mux runs, its version, bus and pane count",
    run=run,
    starts_service=False,  # asking whether it runs must not start it
    report_not_running=report_not_running,
)
