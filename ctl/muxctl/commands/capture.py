"""muxctl capture ID: print the pane's visible screen."""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import pane_id
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient

NAME = "capture"
HELP = "print the visible screen of a pane"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=pane_id, help="pane id")


async def run(args: argparse.Namespace, client: "MuxClient") -> int:
    (lines,) = await client.call("GetScreen", "t", [args.id])
    if args.json:
        print_json({"id": args.id, "lines": lines})
        return 0
    while lines and not lines[-1]:
        lines.pop()  # blank rows below the last output
    for line in lines:
        print(line)
    return 0
