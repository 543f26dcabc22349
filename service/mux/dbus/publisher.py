"""Keeps the bus in step with the pane table: exports, property changes, signals."""

import asyncio
from collections.abc import Sequence

from dbus_fast import Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface

from mux.dbus.manager_iface import ManagerInterface
from mux.dbus.pane_iface import PaneInterface, pane_property_variants
from mux.dbus.window_iface import WindowInterface, window_property_variants
from mux.panes.pane import Pane
from mux.panes.windows import Window
from mux.protocol.names import (
    PANE_INTERFACE,
    ROOT_PATH,
    WINDOW_INTERFACE,
    pane_path,
    window_path,
)
from mux.system.dbus_service_bus import ObjectManagerBus


def _describe(interface: ServiceInterface) -> dict[str, dict[str, Variant]] | None:
    """The InterfacesAdded body of a pane or window object (the manager's own export
    says nothing)."""
    if isinstance(interface, PaneInterface):
        return {PANE_INTERFACE: pane_property_variants(interface.pane)}
    if isinstance(interface, WindowInterface):
        return {WINDOW_INTERFACE: window_property_variants(interface.window)}
    return None


class MuxMessageBus(ObjectManagerBus):
    """mux's bus connection: InterfacesAdded/InterfacesRemoved come from `/org/mux/Mux1`
    (docs/dbus-api.md#bus-name-and-objects)."""

    def __init__(self, bus_address: str | None = None, negotiate_unix_fd: bool = False) -> None:
        super().__init__(
            bus_address,
            manager_path=ROOT_PATH,
            describe=_describe,
            negotiate_unix_fd=negotiate_unix_fd,
        )


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

    def __init__(self, bus: MessageBus, manager: ManagerInterface) -> None:
        self._bus = bus
        self._manager = manager
        self._objects: dict[int, PaneInterface] = {}
        self._changed: dict[int, set[str]] = {}  # pane id -> names changed this turn
        self._windows: dict[int, WindowInterface] = {}
        self._changed_windows: set[int] = set()
        self._flush_scheduled = False

    def pane_added(self, pane: Pane) -> None:
        interface = PaneInterface(pane)
        self._objects[pane.id] = interface
        self._bus.export(pane_path(pane.id), interface)

    def pane_removed(self, pane: Pane) -> None:
        self._send_changes(pane.id)
        if self._objects.pop(pane.id, None) is not None:
            self._bus.unexport(pane_path(pane.id))

    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None:
        if pane.id not in self._objects:
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
        if pane.id in self._objects:
            self._manager.PaneExited(pane.id, pane.exit_status)

    def _flush(self) -> None:
        self._flush_scheduled = False
        for pane_id in list(self._changed):
            self._send_changes(pane_id)
        for window_id in sorted(self._changed_windows):
            self._send_window_changes(window_id)

    # -- windows ------------------------------------------------------------------

    def window_added(self, window: Window) -> None:
        interface = WindowInterface(window)
        self._windows[window.id] = interface
        self._bus.export(window_path(window.id), interface)
        self.window_changed(window)  # WindowChanged at the end of the turn, once

    def window_changed(self, window: Window) -> None:
        if window.id in self._windows:
            self._changed_windows.add(window.id)
            self._flush_later()

    def window_removed(self, window: Window) -> None:
        self._send_window_changes(window.id)
        if self._windows.pop(window.id, None) is not None:
            self._bus.unexport(window_path(window.id))
            if self._bus.connected:
                self._manager.WindowChanged(window.id)

    def _send_window_changes(self, window_id: int) -> None:
        if window_id not in self._changed_windows:
            return
        self._changed_windows.discard(window_id)
        interface = self._windows.get(window_id)
        if interface is not None and self._bus.connected:
            interface.emit_changed()  # (only what differs from what was told)
            self._manager.WindowChanged(window_id)

    def _send_changes(self, pane_id: int) -> None:
        names = self._changed.pop(pane_id, None)
        interface = self._objects.get(pane_id)
        # A flush already scheduled when the connection was lost has no one to tell.
        if names and interface is not None and self._bus.connected:
            interface.emit_changed(names)
