"""The bus connection muxd serves on: dbus-fast's, with two private parts overridden.

* `InterfacesAdded`/`InterfacesRemoved` come from the ObjectManager's path
  (docs/dbus-api.md#bus-name-and-objects), where dbus-fast sends them from the
  object's own path.
* A signal of an exported interface (PropertiesChanged, the Manager's signals) is
  sent from the path kept for it at export: dbus-fast looks the path up by walking
  every exported object, once per signal, and with 2000 panes and their windows
  that walk made spawning quadratic (profiled: a window's WindowChanged a tenth of
  a spawn at 1500 panes).
* The reply of a method whose signature returns no fd is not scanned for fds.
  On a connection that passes fds (muxd's, for OpenAttach), dbus-fast walks
  every value of every reply looking for one inside a variant: for a
  `ListPanes` of 500 panes that is 7000 variants, about as long as marshalling
  them, on the loop that also carries the panes' output. mux never puts an fd
  in a variant, so only a signature with `h` can carry one.

The private parts are listed, and checked, in `mux.system.dbus_adapter`.
"""

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from dbus_fast import Message, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface

OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"

# What InterfacesAdded says of an exported interface: {interface name: {property: value}};
# None: nothing (the interface is not one the ObjectManager announces).
DescribeInterface = Callable[[ServiceInterface], dict[str, dict[str, Variant]] | None]

MethodHandler = Callable[[Message, Any], None]


def returns_fds(method: Any) -> bool:
    """Whether a dbus-fast method's reply may carry an fd: `h` is the fd's type code
    and no other's, and mux puts none inside a variant."""
    return "h" in method.out_signature


class ObjectManagerBus(MessageBus):
    """A bus whose `InterfacesAdded`/`InterfacesRemoved` come from `manager_path`, and
    whose replies without an fd are not scanned for one.

    The ObjectManager specification wants the signals from the manager's path,
    where clients such as GDBusObjectManagerClient listen. `describe` builds the
    InterfacesAdded body.
    """

    def __init__(
        self,
        bus_address: str | None = None,
        *,
        manager_path: str,
        describe: DescribeInterface,
        negotiate_unix_fd: bool = False,
    ) -> None:
        super().__init__(bus_address=bus_address, negotiate_unix_fd=negotiate_unix_fd)
        self.manager_path = manager_path
        self._describe = describe
        self._path_of: dict[int, str] = {}  # id() of an exported interface -> its path

    def export(self, path: str, interface: ServiceInterface) -> None:
        super().export(path, interface)
        self._path_of[id(interface)] = path

    def unexport(self, path: str, interface: ServiceInterface | str | None = None) -> None:
        exported = dict(self._path_exports.get(path, {}))
        super().unexport(path, interface)
        for name, gone in exported.items():
            if interface is None or interface is gone or interface == name:
                self._path_of.pop(id(gone), None)

    def _interface_signal_notify(  # noqa: PLR0917 (dbus-fast's signature, overridden)
        self,
        interface: ServiceInterface,
        interface_name: str,
        member: str,
        signature: str,
        body: list[Any],
        unix_fds: list[int] | None = None,
    ) -> None:
        path = self._path_of.get(id(interface))
        if path is None:  # (not exported here: dbus-fast says so)
            super()._interface_signal_notify(
                interface, interface_name, member, signature, body, unix_fds or []
            )
            return
        self.send(
            Message.new_signal(
                path=path,
                interface=interface_name,
                member=member,
                signature=signature,
                body=body,
                unix_fds=unix_fds or [],
            )
        )

    def _make_method_handler(self, interface: ServiceInterface, method: Any) -> MethodHandler:
        handler: MethodHandler = super()._make_method_handler(interface, method)
        if returns_fds(method) or inspect.iscoroutinefunction(method.fn):
            return handler  # (a coroutine's handler does not read the flag as it replies)

        def reply_without_fd_scan(message: Message, send_reply: Any) -> None:
            with self._fd_scan_off():
                handler(message, send_reply)

        return reply_without_fd_scan

    @contextlib.contextmanager
    def _fd_scan_off(self) -> Iterator[None]:
        # dbus-fast scans a result for fds when the connection negotiated them.
        negotiated = self._negotiate_unix_fd
        self._negotiate_unix_fd = False
        try:
            yield
        finally:
            self._negotiate_unix_fd = negotiated

    def _emit_interface_added(self, path: str, interface: ServiceInterface) -> None:
        if not self.connected:
            return
        body = self._describe(interface)
        if body is None:
            return
        self._announce("InterfacesAdded", "oa{sa{sv}}", [path, body])

    def _emit_interface_removed(self, path: str, removed_interfaces: list[str]) -> None:
        if not self.connected or path == self.manager_path:
            return
        self._announce("InterfacesRemoved", "oas", [path, removed_interfaces])

    def _announce(self, member: str, signature: str, body: list[Any]) -> None:
        """One of the ObjectManager's signals, from its path."""
        self.send(
            Message.new_signal(
                path=self.manager_path,
                interface=OBJECT_MANAGER,
                member=member,
                signature=signature,
                body=body,
            )
        )
