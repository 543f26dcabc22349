"""muxctl capture ID: print the pane's visible screen."""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import add_pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    (lines,) = client.call("GetScreen", body=[args.id])
    if args.json:
        print_json({"id": args.id, "lines": lines})
        return 0
    while lines and not lines[-1]:
        lines.pop()  # blank rows below the last output
    for line in lines:
        print(line)
    return 0


COMMAND = ServiceCommand(
    name="capture", help="print the visible screen of a pane", add_arguments=add_pane_id, run=run
)
