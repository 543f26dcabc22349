"""What a read-only verb says when mux is not running (docs/muxctl.md#starting-the-service).

`ls`, `status`, `windows`, `capture` and `snapshots` never start mux: after `muxctl
stop`, a look at what is there must not bring the session back and re-run every
program in it. They say that mux is not running and how to start it, and exit with
EXIT_NOT_RUNNING.
"""

import argparse
import sys
from typing import TYPE_CHECKING

from muxctl.errors import EXIT_NOT_RUNNING

if TYPE_CHECKING:
    from muxctl.errors import NotRunning

# The ways docs/systemd.md and docs/muxctl.md name to start it: the unit where systemd
# runs mux, else a verb that starts it (`where` does, and prints nothing of the panes).
HOW_TO_START_SYSTEMD = (
    "start it with 'systemctl --user start mux', or 'muxctl where' without systemd"
)
HOW_TO_START_ELSEWHERE = "start it with 'muxctl where'"


def how_to_start(platform: str = sys.platform) -> str:
    return HOW_TO_START_ELSEWHERE if platform == "darwin" else HOW_TO_START_SYSTEMD


def not_running_message(error: "NotRunning") -> str:
    """The error's own words (which bus was asked), then how to start mux."""
    return f"{error.message}; {how_to_start()}"


def report_not_running(args: argparse.Namespace, error: "NotRunning") -> int:
    """A read-only verb's answer when mux is not running: on standard error (nothing on
    standard output, --json or not: errors are never JSON), and EXIT_NOT_RUNNING."""
    print(f"muxctl: {not_running_message(error)}", file=sys.stderr)
    return EXIT_NOT_RUNNING
