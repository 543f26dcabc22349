"""Keeps the bus in step with the pane table: the pane and window objects it serves,
property changes, signals."""

import asyncio
from collections.abc import Sequence
from typing import Any

from mux.dbus.manager_iface import ManagerInterface
from mux.dbus.pane_iface import PANE_PROPERTIES, pane_objects
from mux.dbus.window_iface import changed_properties, window_objects, window_values
from mux.panes.pane import Pane
from mux.panes.windows import Window
from mux.protocol.names import ROOT_PATH
from mux.system.dbus_service_bus import ObjectManagerBus


class MuxMessageBus(ObjectManagerBus):
    """mux's bus connection: InterfacesAdded/InterfacesRemoved come from `/org/mux/Mux1`
    (docs/dbus-api.md#bus-name-and-objects)."""

    def __init__(self, bus_address: str | None = None, negotiate_unix_fd: bool = False) -> None:
        super().__init__(bus_address, manager_path=ROOT_PATH, negotiate_unix_fd=negotiate_unix_fd)


class BusPublisher:
    """Observer of the pane table and its windows that mirrors them onto the bus.

    Property changes are coalesced: a pane's changes in one loop turn make one
    PropertiesChanged with the latest values, sent at the end of the turn (a
    program setting its title per line of output would otherwise flood the
    bus). Anything else said about a pane (PaneExited, InterfacesRemoved) first
    sends its pending changes, so each pane's signals keep their order. A window's
    changes in one turn make one PropertiesChanged and one WindowChanged (a split is
    a pane added and its window changed).
    """

    def __init__(self, bus: ObjectManagerBus, manager: ManagerInterface) -> None:
        self._bus = bus
        self._manager = manager
        self._panes: dict[int, Pane] = {}
        self._changed: dict[int, set[str]] = {}  # pane id -> names changed this turn
        self._windows: dict[int, Window] = {}
        self._told: dict[int, tuple[Any, ...]] = {}  # window id -> its properties told last
        self._changed_windows: set[int] = set()
        self._flush_scheduled = False
        self._pane_objects = pane_objects(self._panes)
        self._window_objects = window_objects(self._windows)
        bus.serve(self._pane_objects)
        bus.serve(self._window_objects)

    def serve_existing(self, panes: Sequence[Pane], windows: Sequence[Window]) -> None:
        """Serve what the table holds when the connection is new, without a signal:
        the name is not owned yet, so no client that follows it would see one, and a
        client learns them with GetManagedObjects once the name has an owner (500
        restored panes made 2,000 signals here, a sixth of a lazy restore's time)."""
        for pane in panes:
            self._panes[pane.id] = pane
        for window in windows:
            self._windows[window.id] = window
            self._told[window.id] = window_values(window)

    def pane_added(self, pane: Pane) -> None:
        self._panes[pane.id] = pane
        self._bus.object_added(self._pane_objects, pane.id)

    def pane_removed(self, pane: Pane) -> None:
        self._send_changes(pane.id)
        if self._panes.pop(pane.id, None) is not None:
            self._bus.object_removed(self._pane_objects, pane.id)

    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None:
        if pane.id not in self._panes:
            return
        self._changed.setdefault(pane.id, set()).update(properties)
        self._flush_later()

    def _flush_later(self) -> None:
        if self._flush_scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop turns any more (muxd is ending): no later to wait for
            self._flush()
            return
        self._flush_scheduled = True
        loop.call_soon(self._flush)

    def pane_exited(self, pane: Pane) -> None:
        self._send_changes(pane.id)
        if pane.id in self._panes:
            self._manager.PaneExited(pane.id, pane.exit_status)

    def _flush(self) -> None:
        self._flush_scheduled = False
        for pane_id in list(self._changed):
            self._send_changes(pane_id)
        for window_id in sorted(self._changed_windows):
            self._send_window_changes(window_id)

    # -- windows ------------------------------------------------------------------

    def window_added(self, window: Window) -> None:
        self._windows[window.id] = window
        self._told[window.id] = window_values(window)
        self._bus.object_added(self._window_objects, window.id)
        self.window_changed(window)  # WindowChanged at the end of the turn, once

    def window_changed(self, window: Window) -> None:
        if window.id in self._windows:
            self._changed_windows.add(window.id)
            self._flush_later()

    def window_removed(self, window: Window) -> None:
        self._send_window_changes(window.id)
        if self._windows.pop(window.id, None) is not None:
            del self._told[window.id]
            self._bus.object_removed(self._window_objects, window.id)
            if self._bus.connected:
                self._manager.WindowChanged(window.id)

    def _send_window_changes(self, window_id: int) -> None:
        if window_id not in self._changed_windows:
            return
        self._changed_windows.discard(window_id)
        window = self._windows.get(window_id)
        if window is None or not self._bus.connected:
            return
        # PropertiesChanged with only what differs from what was told last.
        before, now = self._told[window_id], window_values(window)
        self._told[window_id] = now
        changes = changed_properties(before, now)
        self._bus.properties_changed(self._window_objects, window_id, changes)
        self._manager.WindowChanged(window_id)

    def _send_changes(self, pane_id: int) -> None:
        names = self._changed.pop(pane_id, None)
        pane = self._panes.get(pane_id)
        # A flush already scheduled when the connection was lost has no one to tell.
        if names and pane is not None and self._bus.connected:
            changed = {
                name: PANE_PROPERTIES[name].variant(pane)
                for name in names
                if name in PANE_PROPERTIES
            }
            # (a change of something that is no D-Bus property: nothing to say)
            self._bus.properties_changed(self._pane_objects, pane_id, changed)
