"""The hub's hosts on the bus: one object per host (`/org/mux/Mux1/host/<NAME>`), and
HostStateChanged (docs/federation.md#host-objects). It hears of the hosts from the
hub, and of the bus connection from the control plane: exported on each new
connection, nothing sent during an outage."""

from collections.abc import Callable

from dbus_fast.aio import MessageBus

from mux.config import Settings
from mux.dbus.host_iface import HostManagerInterface
from mux.dbus.manager_iface import ManagerInterface
from mux.federation.hub import Hub
from mux.federation.ledger import relayed_ledger
from mux.lifecycle.upgrade import Handover
from mux.protocol.names import host_path
from mux.system.paths import Paths


class HostObjects:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._bus: MessageBus | None = None
        self._manager: ManagerInterface | None = None
        self._hand_over_fd: Callable[[int], None] | None = None
        hub.listen(self)

    def connected(
        self,
        bus: MessageBus,
        manager: ManagerInterface,
        hand_over_fd: Callable[[int], None] | None,
    ) -> None:
        """A new connection: every host's object is exported on it (before the name
        is owned, so that whoever sees the name sees them too)."""
        self._bus, self._manager, self._hand_over_fd = bus, manager, hand_over_fd
        for name in self.hub.names():
            self.host_added(name)

    def disconnected(self) -> None:
        self._bus = self._manager = None

    # -- the hub's listener ---------------------------------------------------------

    def host_added(self, name: str) -> None:
        if self._bus is not None:
            interface = HostManagerInterface(name, self.hub, self._hand_over_fd)
            self._bus.export(host_path(name), interface)

    def host_removed(self, name: str) -> None:
        if self._bus is not None:
            self._bus.unexport(host_path(name))

    def host_state_changed(self, name: str, state: str) -> None:
        if self._manager is not None:
            self._manager.HostStateChanged(name, state)


def resumed_hub(settings: Settings, paths: Paths, resume: Handover | None) -> Hub:
    """The hosts this mux drives; after an upgrade (or a crash), with the same id and
    ledger."""
    if resume is None or not resume.hub_id:
        return Hub(settings, paths)
    return Hub(settings, paths, resume.hub_id, relayed_ledger(resume.relayed))
