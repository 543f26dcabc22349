"""Keeps the bus in step with the pane table: exports, property changes, signals.

dbus-fast emits `InterfacesAdded`/`InterfacesRemoved` from the object's own
path; the ObjectManager specification wants them from the manager's path, where
clients such as GDBusObjectManagerClient listen. `MuxMessageBus` sends them
from `/org/mux/Mux1` instead.
"""

from collections.abc import Sequence

from dbus_fast import Message
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface

from mux.dbus.manager_iface import ManagerInterface
from mux.dbus.pane_iface import PaneInterface, pane_property_variants
from mux.panes.pane import Pane
from mux.protocol.names import PANE_INTERFACE, ROOT_PATH, pane_path

OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"


class MuxMessageBus(MessageBus):
    def _emit_interface_added(self, path: str, interface: ServiceInterface) -> None:
        if not isinstance(interface, PaneInterface) or self._disconnected:
            return
        body = {PANE_INTERFACE: pane_property_variants(interface.pane)}
        self.send(
            Message.new_signal(
                path=ROOT_PATH,
                interface=OBJECT_MANAGER,
                member="InterfacesAdded",
                signature="oa{sa{sv}}",
                body=[path, body],
            )
        )

    def _emit_interface_removed(self, path: str, removed_interfaces: list[str]) -> None:
        if self._disconnected or path == ROOT_PATH:
            return
        self.send(
            Message.new_signal(
                path=ROOT_PATH,
                interface=OBJECT_MANAGER,
                member="InterfacesRemoved",
                signature="oas",
                body=[path, removed_interfaces],
            )
        )


class BusPublisher:
    """Observer of the pane table that mirrors it onto the bus."""

    def __init__(self, bus: MessageBus, manager: ManagerInterface) -> None:
        self._bus = bus
        self._manager = manager
        self._objects: dict[int, PaneInterface] = {}

    def pane_added(self, pane: Pane) -> None:
        interface = PaneInterface(pane)
        self._objects[pane.id] = interface
        self._bus.export(pane_path(pane.id), interface)

    def pane_removed(self, pane: Pane) -> None:
        if self._objects.pop(pane.id, None) is not None:
            self._bus.unexport(pane_path(pane.id))

    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None:
        interface = self._objects.get(pane.id)
        if interface is not None:
            interface.emit_changed(properties)

    def pane_exited(self, pane: Pane) -> None:
        if pane.id in self._objects:
            self._manager.PaneExited(pane.id, pane.exit_status)
