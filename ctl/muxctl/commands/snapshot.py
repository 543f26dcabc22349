"""muxctl snapshot: save the session durably now."""

import argparse
from typing import TYPE_CHECKING

from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    path, generation = client.call("Snapshot")
    if args.json:
        print_json({"path": path, "generation": generation})
    else:
        print(f"saved generation {generation} to {path}")
    return 0


COMMAND = ServiceCommand(name="snapshot", help="save the session to disk now", run=run)
