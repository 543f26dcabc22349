"""muxctl kill ID: close a pane (its processes get SIGHUP, like a closed terminal)."""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import pane_id
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient

NAME = "kill"
HELP = "close a pane unconditionally"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=pane_id, help="pane id")


async def run(args: argparse.Namespace, client: "MuxClient") -> int:
    await client.call("Kill", "t", [args.id])
    if args.json:
        print_json({"id": args.id, "killed": True})
    return 0
