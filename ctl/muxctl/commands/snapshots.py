"""muxctl snapshots: the snapshots in the history, newest first (SPEC §13, ListSnapshots).

Read-only: it never starts mux (docs/muxctl.md#starting-the-service). `muxctl restore
GENERATION` brings one back.
"""

import argparse
from typing import TYPE_CHECKING, Any

from muxctl.commands.command import ServiceCommand
from muxctl.not_running import report_not_running
from muxctl.output import print_json, print_table, unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient

HEADERS = ["GENERATION", "TIME", "PANES", "WINDOWS", "SIZE", "SUMMARY"]
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def local_time(seconds: int) -> str:
    """A snapshot's time (UNIX seconds) as this machine's local time, to the second."""
    import time

    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))
    except (OverflowError, OSError, ValueError):  # a time no calendar here can show
        return str(seconds)


def size(count: int) -> str:
    """Bytes for a person: `512 B`, `12.3 KiB`, `4.0 MiB`."""
    value = float(count)
    for unit in _UNITS:
        if value < 1024 or unit == _UNITS[-1]:
            return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # (the loop returns at its last unit)


def newest_first(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(records, key=lambda r: (r["time"], r["generation"]), reverse=True)


def rows(records: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            str(r["generation"]),
            local_time(r["time"]),
            str(r["panes"]),
            str(r["windows"]),
            size(r["bytes"]),
            r["summary"],
        ]
        for r in records
    ]


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    (entries,) = client.call("ListSnapshots")
    records = newest_first([unwrap(entry) for entry in entries])
    if args.json:
        print_json(records)
    elif not records:
        print("no snapshots in the history yet")
    else:
        print_table(HEADERS, rows(records))  # (cells escaped: a summary names programs)
    return 0


COMMAND = ServiceCommand(
    name="snapshots",
    help="list the snapshots in the history, newest first (never starts mux)",
    run=run,
    starts_service=False,  # a look must not start mux and re-run every saved program
    report_not_running=report_not_running,
)
