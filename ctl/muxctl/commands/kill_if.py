"""muxctl kill-if ID --instance HEX [--unattached-since-spawn]: a conditional kill.

A refusal exits 3 and names the failed condition; it never falls back to an
unconditional kill.
"""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import add_pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.errors import EXIT_USAGE, CtlError
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_pane_id(parser)
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


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    conditions = ["UNATTACHED_SINCE_SPAWN"] if args.unattached_since_spawn else []
    client.call("KillIf", body=[args.id, args.instance_bytes, conditions])
    if args.json:
        print_json({"id": args.id, "killed": True})
    return 0


COMMAND = ServiceCommand(
    name="kill-if",
    help="close a pane only if the instance token matches and the conditions hold",
    add_arguments=add_arguments,
    check=check,
    run=run,
)
