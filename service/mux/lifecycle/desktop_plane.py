"""The desktop's parts, wired to the rest of muxd (docs/desktop.md): notifications
from panes nobody looks at, with the terminal their action opens."""

from collections.abc import Callable

from mux.attach.hub import AttachHub
from mux.config import Settings
from mux.desktop.notifier import Notifier
from mux.desktop.terminal import TerminalOpener
from mux.lifecycle.control_plane import ControlPlane
from mux.panes.table import PaneTable
from mux.protocol.restore_problems import UnrestoredPane


class DesktopPlane:
    def __init__(
        self,
        settings: Settings,
        attach: AttachHub | None,
        *,
        saved: Callable[[int], None],
        failed: Callable[[], None],
    ) -> None:
        """`saved(generation)`, `failed()`: who else hears of the autosave (the bus
        signal, the status line): the session keeper tells this plane, which tells them."""
        self.opener = TerminalOpener(settings.terminal_command)
        self.notifier = Notifier(
            settings, lambda pane: attach.clients_of(pane) if attach else 0, self.opener
        )
        self._saved = saved
        self._failed = failed

    def join(self, table: PaneTable, control: ControlPlane) -> None:
        table.notice_listeners.append(self.notifier.pane_notice)
        control.add_connection_listener(self.notifier)

    def snapshot_saved(self, generation: int) -> None:
        self.notifier.autosave_saved()
        self._saved(generation)

    def autosave_failed(self, reason: str) -> None:
        self.notifier.autosave_failed(reason)
        self._failed()

    def started(self, unrestored: list[UnrestoredPane]) -> None:
        """On the bus: what the start could not restore is told once."""
        self.notifier.restore_problems(unrestored)
