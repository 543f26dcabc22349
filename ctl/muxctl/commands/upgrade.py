"""muxctl upgrade: re-execute the service in place; panes survive."""

import argparse
from typing import TYPE_CHECKING

from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient

NAME = "upgrade"
HELP = "re-execute muxd in place, keeping panes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


async def run(args: argparse.Namespace, client: "MuxClient") -> int:
    await client.call("Upgrade")
    if args.json:
        print_json({"upgraded": True})
    return 0
