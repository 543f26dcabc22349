"""muxctl status: is the service running, on which bus, with how many panes; and the
panes a person must know about by name: those of the last session that could not be
restored (ListRestoreProblems: why) and those held, waiting to start (`restore = "ask"`
or `"lazy"`: `muxctl start`)."""

import argparse
import shlex
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mux.protocol.names import EXIT_STATUS_NOT_STARTED
from mux.protocol.visible import visible
from muxctl.commands.command import ServiceCommand
from muxctl.errors import EXIT_NOT_RUNNING
from muxctl.not_running import not_running_message
from muxctl.output import print_json, unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient
    from muxctl.errors import NotRunning

HELD = "held"  # ListPanes `state` of a pane waiting for Start (SPEC §13)


def report_not_running(args: argparse.Namespace, error: "NotRunning") -> int:
    if args.json:
        print_json({"active": False})
    print(f"muxctl: {not_running_message(error)}", file=sys.stderr)
    return EXIT_NOT_RUNNING


def pane_counts(panes: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many panes run, have exited, wait to start, or hold the place of one that
    could not be restored (a place holder: exited with EXIT_STATUS_NOT_STARTED)."""
    counts = {"panes": 0, "running": 0, "exited": 0, "held": 0, "not_restored": 0}
    for pane in panes:
        counts["panes"] += 1
        if pane["state"] == "running":
            counts["running"] += 1
        elif pane["state"] == HELD:
            counts["held"] += 1
        elif pane.get("exit_status") == EXIT_STATUS_NOT_STARTED:
            counts["not_restored"] += 1
        else:
            counts["exited"] += 1
    return counts


def counts_line(counts: dict[str, int]) -> str:
    """`panes: 5 (2 running, 1 exited, 1 waiting to start, 1 not restored)`: the last
    two only when there are any."""
    parts = [f"{counts['running']} running", f"{counts['exited']} exited"]
    if counts["held"]:
        parts.append(f"{counts['held']} waiting to start")
    if counts["not_restored"]:
        parts.append(f"{counts['not_restored']} not restored")
    return f"panes: {counts['panes']} ({', '.join(parts)})"


def problem_line(problem: dict[str, Any]) -> str:
    """One not-restored pane by name — id, program, reason — escaped for a terminal
    (text from a saved session: any program's argv, title or directory)."""
    if problem["id"] == 0:  # the whole snapshot was refused (docs/dbus-api.md)
        return f"not restored: the saved session: {visible(problem['reason'])}"
    program = visible(shlex.join(problem["argv"])) or "(no program)"
    return f"not restored: pane {problem['id']} ({program}): {visible(problem['reason'])}"


def held_line(pane: dict[str, Any]) -> str:
    program = visible(shlex.join(pane["argv"])) or "(no program)"
    return f"waiting to start: pane {pane['id']} ({program}): muxctl start {pane['id']}"


def _problem_json(problem: dict[str, Any]) -> dict[str, Any]:
    return {key: problem[key] for key in ("id", "argv", "cwd", "title", "reason") if key in problem}


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    version = client.get_property("Version")
    features = client.get_property("Features")
    (entries,) = client.call("ListPanes")
    panes = sorted((unwrap(p) for p in entries), key=lambda p: p["id"])
    (problem_entries,) = client.call("ListRestoreProblems")
    problems = sorted((unwrap(p) for p in problem_entries), key=lambda p: p["id"])
    held = [pane for pane in panes if pane["state"] == HELD]
    counts = pane_counts(panes)
    if args.json:
        print_json(
            {
                "active": True,
                "version": version,
                "features": features,
                "bus": client.choice.kind.value,
                "bus_address": client.choice.address,
                **counts,
                "held_panes": [pane["id"] for pane in held],
                "not_restored_panes": [_problem_json(p) for p in problems],
            }
        )
        return 0
    print(f"mux {version} is running on the {client.choice.kind} bus ({client.choice.address})")
    print(counts_line(counts))
    print(f"features: {features:#x}")
    for problem in problems:
        print(problem_line(problem))
    for pane in held:
        print(held_line(pane))
    return 0


COMMAND = ServiceCommand(
    name="status",
    help="show whether mux runs, its version, bus and panes; name panes not restored or waiting",
    run=run,
    starts_service=False,  # asking whether it runs must not start it
    report_not_running=report_not_running,
)
