"""The desktop's word on panes restored held (docs/desktop.md#panes-waiting-to-start).

With `restore = "ask"` or `"lazy"` (or programs in `restore_ask_programs`), a
start brings saved panes back held: nothing runs in them until they are started.
Once the restore at start is done, one notification says how many wait and
which programs, with two actions: "Restore all" starts every held pane, and
"Review" (also the default action) opens a terminal on the first one, where
Enter starts it. It is sent once, not again for each pane that starts or is
dismissed; when no pane waits any more it is withdrawn.
"""

import logging
import os

from mux.config import Settings
from mux.desktop.notifier import Notifier
from mux.desktop.terminal import TerminalOpener
from mux.panes.pane import Pane
from mux.panes.table import PaneTable

log = logging.getLogger(__name__)

RESTORE_ALL = "restore-all"
REVIEW = "review"
ACTIONS = (("default", "Review"), (RESTORE_ALL, "Restore all"), (REVIEW, "Review"))
NAMED = 5  # panes named in the body; the rest are counted


class HeldNotice:
    def __init__(
        self, settings: Settings, table: PaneTable, notifier: Notifier, opener: TerminalOpener
    ) -> None:
        self._settings = settings
        self._table = table
        self._notifier = notifier
        self._opener = opener
        self._id: int | None = None  # the notification shown, while it is
        self._sent = False

    def restored(self) -> None:
        """The restore at start is done and muxd is on the bus: tell of the panes that
        wait, if any (once: a second call sends nothing)."""
        waiting = self.waiting()
        if self._sent or not waiting or not self._settings.notifications:
            return
        self._sent = True
        self._notifier.send(_summary(len(waiting)), _body(waiting), ACTIONS, self)

    def waiting(self) -> list[Pane]:
        """The held panes, by id."""
        held = self._table.held
        return sorted((pane for pane in self._table if pane.id in held), key=lambda p: p.id)

    def held_changed(self) -> None:
        """`table.held`'s listener: withdrawn once no pane waits."""
        if self._id is not None and len(self._table.held) == 0:
            notification_id, self._id = self._id, None
            log.info("no pane waits to start any more: notification withdrawn")
            self._notifier.withdraw(notification_id)

    # -- the notifier's answers (mux.desktop.notifier.Answer) -------------------------

    def shown(self, notification_id: int) -> None:
        self._id = notification_id
        self.held_changed()  # every pane may have started while it was being sent

    def action(self, key: str) -> None:
        if key == RESTORE_ALL:
            self.start_all()
        elif key in (REVIEW, "default"):
            self.review()

    def closed(self) -> None:
        self._id = None

    # -- the actions --------------------------------------------------------------------

    def start_all(self) -> None:
        """Start every held pane; one that cannot start stays held, saying why (on
        its screen and in the log, by mux.panes.held)."""
        waiting = self.waiting()
        log.info("starting the %d panes that wait, as asked from the desktop", len(waiting))
        failed = []
        for pane in waiting:
            if pane.id not in self._table.held:
                continue  # started or closed by an earlier one's start
            try:
                self._table.held.start(pane)
            except Exception:  # the reason is told by HeldPanes.start; the others still start
                failed.append(pane.id)
        if failed:
            log.warning("panes that did not start and still wait: %s", failed)

    def review(self) -> None:
        waiting = self.waiting()
        if not waiting:
            log.info("no pane waits to start: nothing to review")
            return
        self._opener.open_attached(waiting[0].id)


def _summary(count: int) -> str:
    return "1 pane is waiting" if count == 1 else f"{count} panes are waiting"


def _body(waiting: list[Pane]) -> str:
    """One line per pane: its program and id (the notifier escapes and bounds them)."""
    lines = [f"{_program(pane)} (pane {pane.id})" for pane in waiting[:NAMED]]
    if len(waiting) > NAMED:
        lines.append(f"and {len(waiting) - NAMED} more (muxctl status)")
    return "\n".join(lines)


def _program(pane: Pane) -> str:
    return os.path.basename(pane.argv[0]) if pane.argv else "a pane"
