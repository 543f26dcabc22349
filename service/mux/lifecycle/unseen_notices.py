"""What a pane asked to tell while no one looked at it (docs/dbus-api.md, the Pane's
`Notice`): a program's notification (OSC 9, 777, 99) or an integrated shell's long
command ending, kept on the pane as a few words until someone attaches to it, reads it
or types into it (PaneTable.mark_use). The web view's overview shows it; desktop
notifications (mux.desktop.notifier) are sent beside it, under their own settings."""

from collections.abc import Callable

from mux.config import Settings
from mux.panes.pane import Pane
from mux.panes.table import PaneTable
from mux.protocol.notices import Notice, newsworthy, notice_summary


class UnseenNotices:
    def __init__(
        self, settings: Settings, table: PaneTable, attached: Callable[[Pane], int]
    ) -> None:
        """`attached(pane)`: how many terminals show the pane (glances are none)."""
        self._settings = settings
        self._table = table
        self._attached = attached

    def pane_notice(self, pane: Pane, notice: Notice) -> None:
        """The table's notice listener."""
        if self._attached(pane):
            return  # (someone saw it)
        if not newsworthy(notice, self._settings.notify_command_seconds):
            return
        summary = notice_summary(notice)
        if summary and summary != pane.unseen_notice:
            pane.unseen_notice = summary
            self._table.pane_changed(pane, ["Notice"])
