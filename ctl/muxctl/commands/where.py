"""muxctl where: the bus address and attach socket this user's mux serves on.

A hub runs it on a satellite over ssh (docs/federation.md#links) to learn what
to forward; it starts muxd there like any verb that needs the service.
"""

import argparse
from typing import TYPE_CHECKING

from muxctl.commands.command import ServiceCommand

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    from mux.protocol.hosts import Where
    from mux.system.paths import resolve_paths

    where = Where(bus=client.choice.address, attach=str(resolve_paths().attach_socket))
    if args.json:
        print(where.to_json())
    else:
        print(f"bus: {where.bus}")
        print(f"attach: {where.attach}")
    return 0


COMMAND = ServiceCommand(
    name="where", help="print the bus address and attach socket mux serves on", run=run
)
