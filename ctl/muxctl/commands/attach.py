"""muxctl attach [ID]: this terminal shows the pane and types into it, until detached."""

import argparse
import os
import socket
import sys
from typing import TYPE_CHECKING

from muxctl.arguments import pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.completing import PANE_IDS, complete_with
from muxctl.errors import EXIT_USAGE, CtlError

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_detach_key(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--detach-key",
        metavar="KEY",
        default=os.environ.get("MUXCTL_DETACH_KEY", "^\\"),
        help="the key that detaches: ^X, one character, or none "
        "(default: $MUXCTL_DETACH_KEY, else ^\\)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pane = parser.add_argument(
        "id", nargs="?", type=pane_id, default=0, help="pane id (default: the last one used)"
    )
    complete_with(pane, PANE_IDS)
    add_detach_key(parser)


def check_terminal(args: argparse.Namespace) -> None:
    from muxctl.attaching import parse_detach_key

    args.detach_bytes = parse_detach_key(args.detach_key)
    if not (os.isatty(0) and os.isatty(1)):
        raise CtlError(
            f"muxctl {args.verb} needs a terminal: its input and output must be one", EXIT_USAGE
        )


def attach(pane: int, args: argparse.Namespace, opened: socket.socket | None = None) -> int:
    """Attach this terminal to `pane` (0: the last used), or run it on `opened`, a
    connection OpenAttach made (a host's pane); returns muxctl's exit status."""
    from mux.system.paths import resolve_paths
    from muxctl.attaching import AttachClient

    client = AttachClient(resolve_paths().attach_socket, pane, args.detach_bytes)
    client.connect(opened)
    outcome = client.run()
    # On a line of its own, below whatever the pane left on the screen.
    print("\n" + outcome.message, file=sys.stderr if outcome.to_stderr else sys.stdout)
    return outcome.exit_status


def open_attached(client: "MuxClient", pane: int) -> socket.socket:
    """A host's pane (muxctl --host): OpenAttach on the host's object, through the hub."""
    if pane == 0:
        raise CtlError("attach --host needs a pane id", EXIT_USAGE)
    return socket.socket(fileno=client.open_attach(pane))


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    # The D-Bus connection made sure mux runs (starting it if need be); the
    # terminal's traffic goes over the attach socket.
    opened = open_attached(client, args.id) if args.host is not None else None
    client.close()
    return attach(args.id, args, opened)


COMMAND = ServiceCommand(
    name="attach",
    help="show a pane in this terminal and type into it (Ctrl-\\ detaches)",
    add_arguments=add_arguments,
    check=check_terminal,
    run=run,
)
