"""The bus connection muxd serves on: dbus-fast's, with private parts overridden.

* Objects of `PropertyObjects` (mux's panes and windows) are served from their
  model, not exported one `ServiceInterface` each (mux.system.dbus_property_objects):
  their Properties calls go to a message handler, and introspection and
  `GetManagedObjects` include them.
* `InterfacesAdded`/`InterfacesRemoved` come from the ObjectManager's path
  (docs/dbus-api.md#bus-name-and-objects), for those objects only; dbus-fast would
  send them from an exported object's own path.
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
from typing import Any, cast

from dbus_fast import Message, MessageType
from dbus_fast import introspection as intr
from dbus_fast.aio import MessageBus
from dbus_fast.send_reply import SendReply
from dbus_fast.service import ServiceInterface

from mux.system.dbus_property_objects import PropertyObjects

OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
MANAGED_OBJECTS_SIGNATURE = "a{oa{sa{sv}}}"

MethodHandler = Callable[[Message, Any], None]


def returns_fds(method: Any) -> bool:
    """Whether a dbus-fast method's reply may carry an fd: `h` is the fd's type code
    and no other's, and mux puts none inside a variant."""
    return "h" in method.out_signature


class ObjectManagerBus(MessageBus):
    """A bus that serves `PropertyObjects` and announces them from `manager_path`,
    and whose replies without an fd are not scanned for one.

    The ObjectManager specification wants the signals from the manager's path,
    where clients such as GDBusObjectManagerClient listen.
    """

    def __init__(
        self,
        bus_address: str | None = None,
        *,
        manager_path: str,
        negotiate_unix_fd: bool = False,
    ) -> None:
        super().__init__(bus_address=bus_address, negotiate_unix_fd=negotiate_unix_fd)
        self.manager_path = manager_path
        self._served: list[PropertyObjects] = []

    def serve(self, objects: PropertyObjects) -> None:
        """Answer for `objects` from now on. Call after connect() and after any
        message handler that must see every message first (the first call adds
        the handler that answers their Properties calls)."""
        if not self._served:
            self.add_message_handler(self._answer_properties)
        self._served.append(objects)

    def object_added(self, objects: PropertyObjects, object_id: int) -> None:
        """InterfacesAdded for an object of `objects` that is there now."""
        entry = objects.entry(object_id)
        if entry is not None and self.connected:
            self._announce("InterfacesAdded", "oa{sa{sv}}", [objects.path(object_id), entry])

    def object_removed(self, objects: PropertyObjects, object_id: int) -> None:
        if self.connected:
            self._announce(
                "InterfacesRemoved", "oas", [objects.path(object_id), [objects.interface.name]]
            )

    def properties_changed(
        self, objects: PropertyObjects, object_id: int, changed: dict[str, Any]
    ) -> None:
        if changed and self.connected:
            self.send(objects.changed_signal(object_id, changed))

    def _answer_properties(self, message: Message) -> Message | None:
        if message.message_type is not MessageType.METHOD_CALL:
            return None
        for objects in self._served:
            if (reply := objects.answer(message)) is not None:
                return reply
        return None

    def _introspect_export_path(self, path: str) -> intr.Node:
        node: intr.Node = super()._introspect_export_path(path)
        for objects in self._served:
            if (own := objects.node(path)) is not None:
                own.nodes = node.nodes
                node = own
        names = {child.name for child in node.nodes}
        for objects in self._served:
            node.nodes.extend(intr.Node(name) for name in sorted(objects.children(path) - names))
            names |= objects.children(path)
        return node

    def _default_get_managed_objects_handler(self, msg: Message, send_reply: Any) -> None:
        served: dict[str, Any] = {}
        for objects in self._served:
            if msg.path is not None and objects.below(msg.path):
                served.update(objects.entries())
        if not served:
            super()._default_get_managed_objects_handler(msg, send_reply)
            return
        with_served = cast(SendReply, _WithServed(msg, send_reply, served))  # (what it calls)
        super()._default_get_managed_objects_handler(msg, with_served)

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
        """An exported interface is not announced (only served objects are)."""

    def _emit_interface_removed(self, path: str, removed_interfaces: list[str]) -> None:
        """(As _emit_interface_added.)"""

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


class _WithServed:
    """dbus-fast's reply to GetManagedObjects (of the exported objects), with the
    served objects added."""

    def __init__(self, call: Message, send_reply: Any, served: dict[str, Any]) -> None:
        self._call = call
        self._send_reply = send_reply
        self._served = served

    def __call__(self, reply: Message) -> None:
        if reply.message_type is MessageType.METHOD_RETURN:
            exported = reply.body[0]
            reply = Message.new_method_return(
                self._call, MANAGED_OBJECTS_SIGNATURE, [{**self._served, **exported}]
            )
        self._send_reply(reply)

    def send_error(self, error: Exception) -> None:
        self._send_reply.send_error(error)
