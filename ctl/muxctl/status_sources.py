"""What the status line of a pane shown alone says (docs/windows.md#the-status-line),
asked once a second by muxctl.lone_status: a pane of this mux's, as the window view's
line says it; a host's pane (`muxctl --host`), as the host lists it."""

from typing import TYPE_CHECKING

from muxctl.errors import CtlError

if TYPE_CHECKING:
    from muxctl.client import MuxClient
    from muxctl.lone_status import StatusSource


def pane_status(bus: "MuxClient | None", read_only: bool) -> "StatusSource | None":
    """The status line of a pane shown alone (`status`, on by default), as the window
    view's: None for a host's pane (no bus to ask)."""
    from muxctl.view_settings import status_line

    if bus is None or not status_line():
        return None

    def text(pane: int, cols: int) -> str | None:
        from muxctl.status_line import fit
        from muxctl.window_commands import plain_entries, status_of

        try:
            windows, panes = plain_entries(bus, "ListWindows"), plain_entries(bus, "ListPanes")
        except CtlError:  # (muxd upgrading, or gone: the attach says so itself)
            return None
        entry = next((p for p in panes if int(p["id"]) == pane), None)
        if entry is None:
            return None
        shown = (int(entry.get("window") or 0), pane, False)
        return fit(status_of(windows, panes, shown, "read-only" if read_only else "")[0], cols)

    return text


def host_pane_status(client: "MuxClient", host: str) -> "StatusSource | None":
    """The status line of a host's pane (`muxctl --host`): the pane as the host lists
    it, and the host's name; whether the link to it is up."""
    from muxctl.view_settings import status_line

    if not status_line():
        return None

    def text(pane: int, cols: int) -> str | None:
        from mux.protocol.visible import visible
        from muxctl.status_line import fit, status_text
        from muxctl.window_commands import plain_entries

        try:
            panes = plain_entries(client, "ListPanes")
        except CtlError as e:  # (Unavailable: the link is down; the hub redials)
            return fit(f" {pane} @ {visible(host)}  │ {visible(str(e))}", cols)
        return fit(status_text([], 0, panes, pane, host=host), cols)

    return text
