"""The one-line status a person sees in `systemctl --user status mux`."""

from collections.abc import Sequence

from mux.panes.pane import Pane


def status_line(panes: Sequence[Pane], bus_kind: str, not_restored: int = 0) -> str:
    running = sum(1 for pane in panes if pane.is_running)
    exited = len(panes) - running
    noun = "pane" if len(panes) == 1 else "panes"
    detail = f" ({running} running, {exited} exited)" if exited else ""
    problems = f"; {not_restored} could not be restored" if not_restored else ""
    return f"{len(panes)} {noun}{detail}{problems}; {bus_kind} bus"
