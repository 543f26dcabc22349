"""muxctl rename-window WINDOW NAME: set a window's title (SetWindow `title`), as tmux's
rename-window; `muxctl windows` lists it."""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import window_id
from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("window", type=window_id, help="window id (muxctl windows lists them)")
    parser.add_argument("name", help="its new title (empty: none)")


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    from muxctl.wire import Variant

    client.call("SetWindow", body=[args.window, {"title": Variant("s", args.name)}])
    if args.json:
        print_json({"window": args.window, "title": args.name})
    return 0


COMMAND = ServiceCommand(
    name="rename-window",
    help="set a window's title",
    add_arguments=add_arguments,
    run=run,
)
