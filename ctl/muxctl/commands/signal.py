"""muxctl signal ID SIG: send a signal to the pane's foreground process group."""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import add_pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_pane_id(parser)
    parser.add_argument("signal", help="signal name, e.g. TERM or INT")


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    client.call("Signal", body=[args.id, args.signal])
    if args.json:
        print_json({"id": args.id, "signal": args.signal})
    return 0


COMMAND = ServiceCommand(
    name="signal",
    help="send a signal (TERM, HUP, INT, KILL, ...) to the pane's foreground job",
    add_arguments=add_arguments,
    run=run,
)
