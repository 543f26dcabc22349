"""muxctl kill-if ID --instance HEX [--unattached-since-spawn]: a conditional kill.

A refusal exits 3 and names the failed condition; it never falls back to an
unconditional kill.
"""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import pane_id
from muxctl.errors import EXIT_USAGE, CtlError
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient

NAME = "kill-if"
HELP = "close a pane only if the instance token matches and the conditions hold"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=pane_id, help="pane id")
    parser.add_argument("--instance", metavar="HEX", default="", help="instance token, in hex")
    parser.add_argument(
        "--unattached-since-spawn",
        action="store_true",
        help="only if nobody but the spawner has used the pane",
    )


def check(args: argparse.Namespace) -> None:
    try:
        args.instance_bytes = bytes.fromhex(args.instance)
    except ValueError:
        message = f"--instance must be hexadecimal, got {args.instance!r}"
        raise CtlError(message, EXIT_USAGE) from None


async def run(args: argparse.Namespace, client: "MuxClient") -> int:
    conditions = ["UNATTACHED_SINCE_SPAWN"] if args.unattached_since_spawn else []
    await client.call("KillIf", "tayas", [args.id, args.instance_bytes, conditions])
    if args.json:
        print_json({"id": args.id, "killed": True})
    return 0
