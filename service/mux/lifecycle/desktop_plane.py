"""The desktop's parts, wired to the rest of muxd (docs/desktop.md): notifications
from panes nobody looks at, with the terminal their action opens; the one about
panes restored held; the snapshot before suspend and shutdown."""

from collections.abc import Callable

from dbus_fast.aio import MessageBus

from mux.attach.hub import AttachHub
from mux.config import Settings
from mux.dbus.search_ifaces import (
    KRUNNER_PATH,
    SEARCH_PROVIDER_PATH,
    GnomeSearchProvider,
    KRunner,
    PaneFinder,
)
from mux.desktop.held_notice import HeldNotice
from mux.desktop.notifier import Notifier
from mux.desktop.sleep_guard import SleepGuard
from mux.desktop.terminal import TerminalOpener
from mux.lifecycle.control_plane import ControlPlane
from mux.lifecycle.session_keeper import SessionKeeper
from mux.lifecycle.unseen_notices import UnseenNotices
from mux.panes.pane import Pane
from mux.panes.search import QueryLimits
from mux.panes.table import PaneTable
from mux.system.tasks import BackgroundTasks


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
        self._query_limits = QueryLimits(
            settings.search_query_max_bytes, settings.search_query_max_terms
        )
        self.opener = TerminalOpener(settings.terminal_command)
        self._attached: Callable[[Pane], int] = lambda pane: (
            attach.clients_of(pane) if attach else 0
        )
        self.notifier = Notifier(settings, self._attached, self.opener)
        self._settings = settings
        self.held_notice: HeldNotice | None = None
        self._saved = saved
        self._failed = failed  # also: the status line has news
        self.sleep_guard: SleepGuard | None = None
        self._tasks = BackgroundTasks()

    def join(self, table: PaneTable, control: ControlPlane) -> None:
        table.notice_listeners.append(self.notifier.pane_notice)
        unseen = UnseenNotices(self._settings, table, self._attached)
        table.notice_listeners.append(unseen.pane_notice)
        control.add_connection_listener(self.notifier)
        self.held_notice = HeldNotice(self._settings, table, self.notifier, self.opener)
        table.held.listeners.append(self.held_notice.held_changed)
        finder = PaneFinder(table, self.opener.open_attached, self._query_limits)
        control.add_connection_listener(SearchObjects(finder, table.close))

    def snapshot_saved(self, generation: int) -> None:
        self.notifier.autosave_saved()
        self._saved(generation)

    def autosave_failed(self, reason: str) -> None:
        self.notifier.autosave_failed(reason)
        self._failed()

    def started(self, keeper: SessionKeeper) -> None:
        """On the bus: what the start could not restore is told once, and the panes
        it restored held; the guard against suspend and shutdown is set up (in the
        background)."""
        self.notifier.restore_problems(keeper.unrestored_panes())
        if self.held_notice is not None:
            self.held_notice.restored()
        self.sleep_guard = SleepGuard(keeper.snapshot, self._failed)
        self._tasks.spawn(self.sleep_guard.start())

    @property
    def notes(self) -> list[str]:
        """For the status line."""
        note = self.sleep_guard.note if self.sleep_guard is not None else ""
        return [note] if note else []

    async def close(self) -> None:
        if self.sleep_guard is not None:
            await self.sleep_guard.close()


class SearchObjects:
    """GNOME Shell's and KRunner's providers, exported on each bus connection."""

    def __init__(self, finder: PaneFinder, kill: Callable[[int], None]) -> None:
        self._finder = finder
        self._kill = kill

    def connected(self, bus: MessageBus, *_: object) -> None:
        bus.export(SEARCH_PROVIDER_PATH, GnomeSearchProvider(self._finder))
        bus.export(KRUNNER_PATH, KRunner(self._finder, self._kill))

    def disconnected(self) -> None:
        pass
