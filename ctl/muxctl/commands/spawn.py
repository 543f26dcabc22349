"""muxctl spawn [options] [-- CMD...]: start a program (or a shell) in a new pane."""

import argparse
import os
from typing import TYPE_CHECKING, Any

from muxctl.arguments import window_id
from muxctl.commands.command import ServiceCommand
from muxctl.errors import EXIT_USAGE, CtlError
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--window", metavar="W", type=window_id, default=0, help="add to window W")
    add_launch_arguments(parser)
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD", help="program")


def add_launch_arguments(parser: argparse.ArgumentParser) -> None:
    """What spawn and split take alike: how to start the pane's program (but the
    program itself: after spawn's options, after split's pane id)."""
    parser.add_argument(
        "--cwd",
        metavar="DIR",
        help="working directory (default: the current directory; with --host, the home there)",
    )
    parser.add_argument("--title", metavar="T", help="pane title")
    parser.add_argument("--rows", type=int, help="terminal rows")
    parser.add_argument("--cols", type=int, help="terminal columns")
    parser.add_argument(
        "--env", metavar="NAME=VALUE", action="append", default=[], help="set a variable"
    )
    parser.add_argument("--shell", metavar="SHELL", help="start this shell (with integration)")
    parser.add_argument(
        "--bind-instance", action="store_true", help="also print the service's instance token"
    )
    parser.add_argument(
        "--no-resurrection",
        action="store_true",
        help="give the program no application-resurrection endpoint",
    )


def _working_directory(cwd: str | None) -> str:
    try:
        return os.path.abspath(cwd) if cwd else os.getcwd()
    except FileNotFoundError:
        raise CtlError(
            "the current directory no longer exists; give the pane one with --cwd"
        ) from None


def check(args: argparse.Namespace) -> None:
    """Everything that can be wrong with the arguments, before connecting."""
    for value in [*args.command, args.cwd or "", args.title or "", *args.env, args.shell or ""]:
        try:
            value.encode()
        except UnicodeEncodeError:
            # D-Bus strings are UTF-8; the undecodable bytes came from the command line.
            raise CtlError(
                f"{os.fsencode(value)!r} is not valid UTF-8; D-Bus can only carry UTF-8 text",
                EXIT_USAGE,
            ) from None
    args.options = build_options(args)


def build_options(args: argparse.Namespace) -> dict[str, Any]:
    from muxctl.wire import Variant

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    options: dict[str, Variant] = {}
    if command:
        options["argv"] = Variant("as", command)
        if args.shell:
            raise CtlError("give either --shell or a command, not both", EXIT_USAGE)
    if args.shell:
        options["shell"] = Variant("s", args.shell)
    if getattr(args, "host", None) is None:
        options["cwd"] = Variant("s", _working_directory(args.cwd))
    elif args.cwd:  # this directory means nothing there: by default, the satellite's
        options["cwd"] = Variant("s", args.cwd)
    if args.title is not None:
        options["title"] = Variant("s", args.title)
    if getattr(args, "window", 0):
        options["window"] = Variant("t", args.window)
    for name in ("rows", "cols"):
        value = getattr(args, name)
        if value is not None:
            if not 1 <= value <= 0xFFFF:
                raise CtlError(f"--{name} must be between 1 and 65535", EXIT_USAGE)
            options[name] = Variant("q", value)
    env = {}
    for item in args.env:
        name, sep, value = item.partition("=")
        if not sep:
            raise CtlError(f"--env takes NAME=VALUE, got {item!r}", EXIT_USAGE)
        env[name] = value
    if env:
        options["env"] = Variant("a{ss}", env)
    if args.bind_instance:
        options["bind_instance"] = Variant("b", True)
    if args.no_resurrection:
        options["resurrection"] = Variant("b", False)
    return options


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    return print_started(args, *client.call("Spawn", body=[args.options]))


def print_started(args: argparse.Namespace, pane_id: int, instance: bytes, path: str) -> int:
    """The new pane's id (and its instance token when asked), as spawn and split say it."""
    if args.json:
        result: dict[str, Any] = {"id": pane_id, "path": path}
        if instance:
            result["instance"] = bytes(instance).hex()
        print_json(result)
    elif instance:
        print(f"{pane_id} {bytes(instance).hex()}")
    else:
        print(pane_id)
    return 0


COMMAND = ServiceCommand(
    name="spawn",
    help="start a program in a new pane (no command: your login shell)",
    add_arguments=add_arguments,
    check=check,
    run=run,
)
