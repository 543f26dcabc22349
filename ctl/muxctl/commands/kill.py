"""muxctl kill ID: close a pane (its processes get SIGHUP, like a closed terminal)."""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import add_pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    client.call("Kill", body=[args.id])
    if args.json:
        print_json({"id": args.id, "killed": True})
    return 0


COMMAND = ServiceCommand(
    name="kill", help="close a pane unconditionally", add_arguments=add_pane_id, run=run
)
