"""What becomes of a pane whose program ended: it closes, or stays for a while, or until
closed (docs/windows.md#how-the-tree-changes, docs/configuration.md)."""

import contextlib
from typing import TYPE_CHECKING

from mux.panes.pane import Pane
from mux.protocol.errors import NoSuchPane

if TYPE_CHECKING:
    from mux.panes.table import PaneTable


def close_when_exited(table: "PaneTable", pane: Pane, *, just_now: bool = True) -> None:
    """Once `pane`'s exit has been told: in a window it shares, it closes on the next
    turn (its sibling takes the space, as in tmux) unless `remain_on_exit`; otherwise
    after `exited_pane_linger_seconds`, or never (unset). A place holder (no process)
    waits for a person's decision, never for a timer. `just_now`: False for a pane
    handed over exited (an upgrade), which stays as it stayed before."""
    if not pane.has_process:
        return
    settings = table.settings
    window = table.windows.window_of(pane.id)
    shared = window is not None and len(table.windows.get(window).panes) > 1
    if just_now and shared and not settings.remain_on_exit:
        # On the next turn: PaneExited and its clients' EXITED are out by then.
        table.loop.call_soon(_close_if_still_there, table, pane)
    elif settings.exited_pane_linger_seconds is not None:
        table.loop.call_later(
            settings.exited_pane_linger_seconds, _close_if_still_there, table, pane
        )


def _close_if_still_there(table: "PaneTable", pane: Pane) -> None:
    with contextlib.suppress(NoSuchPane):
        if table.get(pane.id) is pane:
            table.close(pane.id)
