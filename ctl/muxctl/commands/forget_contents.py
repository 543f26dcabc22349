"""muxctl forget-contents: wipe the saved pane contents and the key that encrypts them
(SPEC §13, ForgetContents; docs/muxctl.md#forget-contents)."""

import argparse
from typing import TYPE_CHECKING

from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    client.call("ForgetContents")
    if args.json:
        print_json({"forgotten": True})
    else:
        print("the saved pane contents and their key are wiped")
    return 0


COMMAND = ServiceCommand(
    name="forget-contents",
    help="wipe the saved pane contents and the key that encrypts them",
    run=run,
)
