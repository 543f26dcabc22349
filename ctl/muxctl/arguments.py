"""Argument types shared by the verbs: checked before muxctl connects or starts anything."""

import argparse

from muxctl.completing import PANE_IDS, complete_with

UINT64_MAX = (1 << 64) - 1


def pane_id(text: str) -> int:
    """A pane id: a whole number that fits D-Bus type `t`."""
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a pane id is a whole number, got {text!r}") from None
    if not 0 <= value <= UINT64_MAX:
        raise argparse.ArgumentTypeError(f"a pane id is between 0 and {UINT64_MAX}, got {text}")
    return value


def window_id(text: str) -> int:
    try:
        return pane_id(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"a window id is a whole number, got {text!r}") from None


def add_pane_id(parser: argparse.ArgumentParser) -> None:
    """The ID argument of the verbs that act on one pane."""
    complete_with(parser.add_argument("id", type=pane_id, help="pane id"), PANE_IDS)


def rest_as_typed(args: argparse.Namespace) -> list[str]:
    """A verb's REMAINDER words (`args.rest`) as typed: argparse drops a `--` that comes
    right before them (`split 3 -- -prog`), which says that all of them are the program
    or text; it is put back. (main keeps the command line as typed in `args.words`.)"""
    rest: list[str] = list(args.rest)
    if "--" in getattr(args, "words", ()) and "--" not in rest:
        return ["--", *rest]
    return rest
