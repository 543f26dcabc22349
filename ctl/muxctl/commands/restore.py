"""muxctl restore GENERATION [--pane ID...] [--dry-run]: start the panes of a snapshot of
the history beside what runs (SPEC §13, RestoreSnapshot).

New panes get new ids; a pane still running from the same launch is not started twice,
and mux archives the current session first, so a restore can be undone.
"""

import argparse
import shlex
from typing import TYPE_CHECKING, Any

from muxctl.arguments import UINT64_MAX, pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json, print_table, unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient

SIGNATURE = "ta{sv}"  # RestoreSnapshot(t generation, a{sv} options) -> aa{sv}


def generation(text: str) -> int:
    """A snapshot's generation, as `muxctl snapshots` lists it: a whole number (D-Bus t)."""
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a generation is a whole number (muxctl snapshots lists them), got {text!r}"
        ) from None
    if not 0 <= value <= UINT64_MAX:
        raise argparse.ArgumentTypeError(f"a generation is between 0 and {UINT64_MAX}, got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("generation", type=generation, help="the snapshot (muxctl snapshots)")
    parser.add_argument(
        "--pane",
        dest="panes",
        metavar="ID",
        type=pane_id,
        nargs="+",
        action="extend",
        help="restore only these panes (their ids in that snapshot); default: all",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="say what would start; change nothing"
    )


def options(args: argparse.Namespace) -> dict[str, Any]:
    """RestoreSnapshot's options: `panes at` only when a subset was asked for."""
    from muxctl.wire import Variant

    chosen: dict[str, Any] = {"dry_run": Variant("b", bool(args.dry_run))}
    if args.panes:
        chosen["panes"] = Variant("at", list(dict.fromkeys(args.panes)))
    return chosen


def lines(gen: int, dry_run: bool, started: list[dict[str, Any]]) -> tuple[str, list[list[str]]]:
    """What a person reads: a first line, then one row per pane (PANE `-` in a dry run)."""
    noun = "pane" if len(started) == 1 else "panes"
    if not started:
        head = f"generation {gen}: nothing to start (what it holds runs already)"
    elif dry_run:
        head = f"generation {gen} would start {len(started)} {noun} (dry run: nothing started)"
    else:
        head = f"started {len(started)} {noun} from generation {gen}"
    rows = [
        [
            "-" if dry_run else str(entry["pane"]),
            str(entry["window"]),
            entry["cwd"],
            shlex.join(entry["argv"]),
        ]
        for entry in started
    ]
    return head, rows


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    (entries,) = client.call("RestoreSnapshot", SIGNATURE, [args.generation, options(args)])
    started = [unwrap(entry) for entry in entries]
    if args.json:
        print_json({"generation": args.generation, "dry_run": args.dry_run, "panes": started})
        return 0
    head, rows = lines(args.generation, args.dry_run, started)
    print(head)
    if rows:
        print_table(["PANE", "WINDOW", "CWD", "COMMAND"], rows)
    return 0


COMMAND = ServiceCommand(
    name="restore",
    help="start the panes of a snapshot from the history beside what runs",
    add_arguments=add_arguments,
    run=run,
)
