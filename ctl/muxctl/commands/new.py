"""muxctl new [options] [-- CMD...]: spawn a pane at this terminal's size and attach to it."""

import argparse
from typing import TYPE_CHECKING

from muxctl.commands import attach, spawn
from muxctl.commands.command import ServiceCommand

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    spawn.add_arguments(parser)
    attach.add_detach_key(parser)


def check(args: argparse.Namespace) -> None:
    from muxctl.rawterm import window_size
    from muxctl.view_settings import status_line
    from muxctl.wire import Variant

    attach.check_terminal(args)
    spawn.check(args)
    rows, cols = window_size(1)
    if status_line() and rows > 1:
        rows -= 1  # the last row: the status line's
    args.options.setdefault("rows", Variant("q", rows))
    args.options.setdefault("cols", Variant("q", cols))


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    pane_id, _instance, _path = client.call("Spawn", body=[args.options])
    if args.host is not None:
        return attach.attach(pane_id, args, attach.open_attached(client, pane_id), host=client)
    return attach.attach(pane_id, args, bus=client)


COMMAND = ServiceCommand(
    name="new",
    help="start a program (no command: your shell) in a new pane and attach to it",
    add_arguments=add_arguments,
    check=check,
    run=run,
)
