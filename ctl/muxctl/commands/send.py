"""muxctl send ID TEXT: type text into a pane; with --keys, keys by name (tmux's)."""

import argparse
import os
import sys
from typing import TYPE_CHECKING

from muxctl.arguments import add_pane_id, rest_as_typed
from muxctl.commands.command import ServiceCommand
from muxctl.errors import EXIT_USAGE, CtlError
from muxctl.key_names import key_bytes
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser)
    add_pane_id(parser)
    # TEXT and the options in any order after the pane id (`send 3 --enter ls`, as
    # tmux's send-keys takes them): argparse cannot take an optional positional after
    # an option, so the rest is parsed again in `check`.
    parser.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="TEXT",
        help="the text (UTF-8); with --keys, key names such as C-c, Enter, Up, F1 "
        "(one or more; a word that names no key is typed as it is); the options may "
        "follow it",
    )


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--enter", action="store_true", help="press Enter after the text")
    parser.add_argument("--stdin", action="store_true", help="send what standard input holds")
    parser.add_argument(
        "--keys", action="store_true", help="TEXT is key names, as tmux's send-keys takes them"
    )


# One D-Bus message carries at most 64 MiB of array data (the spec's limit).
MAX_BYTES = (64 << 20) - 4096


def _text_and_options(args: argparse.Namespace) -> None:
    """args.text, and --enter/--stdin wherever they were given."""
    rest = rest_as_typed(args)
    after: list[str] = []
    if "--" in rest:  # the text after `--`, even if it starts with a dash
        at = rest.index("--")
        rest, after = rest[:at], rest[at + 1 :]
    from muxctl.parser import Parser

    again = Parser(prog="muxctl send ID", add_help=False)
    add_options(again)
    again.add_argument("words", nargs="*", metavar="TEXT")
    again.parse_intermixed_args(rest, namespace=args)
    words = [*args.words, *after]
    if len(words) > 1 and not args.keys:
        raise CtlError(
            "send takes one TEXT (quote it if it has spaces), or key names with --keys",
            EXIT_USAGE,
        )
    args.text = words[0] if words and not args.keys else None
    args.key_names = words if args.keys else []


def check(args: argparse.Namespace) -> None:
    _text_and_options(args)
    given = args.text is not None or bool(args.key_names)
    if args.stdin == given:
        raise CtlError("give either TEXT or --stdin (or --keys and key names)", EXIT_USAGE)
    if args.stdin:
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    elif args.keys:
        data = b"".join(_key_or_text(name) for name in args.key_names)
    else:
        data = os.fsencode(args.text)  # (keeps bytes that are not UTF-8 as they were given)
    if args.enter:
        data += b"\r"
    if len(data) > MAX_BYTES:
        raise CtlError(f"send takes at most {MAX_BYTES} bytes at once; split the input", EXIT_USAGE)
    args.data = data


def _key_or_text(name: str) -> bytes:
    """A key's bytes; a word that names no key typed as it is (as tmux does)."""
    key = key_bytes(name)
    return key if key is not None else os.fsencode(name)


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    data = args.data
    client.call("SendInput", body=[args.id, data])
    if args.json:
        print_json({"id": args.id, "bytes": len(data)})
    return 0


COMMAND = ServiceCommand(
    name="send",
    help="send text to a pane's terminal, as if typed",
    add_arguments=add_arguments,
    check=check,
    run=run,
)
