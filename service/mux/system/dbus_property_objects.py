"""Objects that have one interface of read-only properties, served from a model.

mux has one such object per pane and per window. Exported the dbus-fast way, each
was a `ServiceInterface` of its own: its lists of members, its handler dicts, its
entry among the exports (1.7 KiB a pane and 1.9 KiB a window, measured; with them a
pane cost 2.4x what it costs tmux), and an `inspect.getmembers` of its class at
every spawn. Here one `PropertyObjects` serves every object of a kind: the calls
they answer (`org.freedesktop.DBus.Properties`) are answered from the model
through `properties(id)`, and the bus (`mux.system.dbus_service_bus`) adds them
to introspection and `GetManagedObjects`.

This module makes messages and sends none.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from dbus_fast import ErrorType, Message, MessageType, PropertyAccess, Variant
from dbus_fast import introspection as intr

PROPERTIES_INTERFACE = "org.freedesktop.DBus.Properties"

# The interfaces every object has (dbus-fast answers their calls): none has a property.
_STANDARD_INTERFACES = frozenset(
    {
        "org.freedesktop.DBus.Introspectable",
        "org.freedesktop.DBus.Peer",
        PROPERTIES_INTERFACE,
        "org.freedesktop.DBus.ObjectManager",
    }
)

# What each Properties method takes.
_PROPERTIES_SIGNATURES = {"Get": "ss", "Set": "ssv", "GetAll": "s"}


def read_only_interface(name: str, properties: Iterable[tuple[str, str]]) -> intr.Interface:
    """The introspection of an interface of read-only properties, each (name,
    signature), in name order (as dbus-fast lists an exported interface's)."""
    return intr.Interface(
        name,
        properties=[
            intr.Property(property_name, signature, PropertyAccess.READ)
            for property_name, signature in sorted(properties)
        ],
    )


@dataclass(frozen=True)
class PropertyObjects:
    """The objects `<parent>/<id>`, each with the one interface `interface`.

    `ids()` gives the ids of those there now; `properties(id)` every property of
    one, by name (None: there is no such object).
    """

    parent: str
    interface: intr.Interface
    ids: Callable[[], Iterable[int]]
    properties: Callable[[int], dict[str, Variant] | None]

    def path(self, object_id: int) -> str:
        return f"{self.parent}/{object_id}"

    def id_at(self, path: str) -> int | None:
        """The id of the object at `path` if it is one of these (there or not)."""
        parent, _, name = path.rpartition("/")
        if parent != self.parent or not name.isascii() or not name.isdigit():
            return None
        object_id = int(name)
        return object_id if str(object_id) == name else None  # (not "07")

    def entry(self, object_id: int) -> dict[str, dict[str, Variant]] | None:
        """The object's interfaces and their properties, as InterfacesAdded and
        GetManagedObjects tell them (None: there is no such object)."""
        properties = self.properties(object_id)
        return None if properties is None else {self.interface.name: properties}

    def entries(self) -> dict[str, dict[str, dict[str, Variant]]]:
        """Every object's entry, by path."""
        found = {object_id: self.entry(object_id) for object_id in self.ids()}
        return {self.path(object_id): entry for object_id, entry in found.items() if entry}

    def changed_signal(self, object_id: int, changed: dict[str, Variant]) -> Message:
        return Message.new_signal(
            path=self.path(object_id),
            interface=PROPERTIES_INTERFACE,
            member="PropertiesChanged",
            signature="sa{sv}as",
            body=[self.interface.name, changed, []],
        )

    # -- introspection -------------------------------------------------------------

    def node(self, path: str) -> intr.Node | None:
        """The introspection of the object at `path` (None: not one there now)."""
        object_id = self.id_at(path)
        if object_id is None or self.properties(object_id) is None:
            return None
        node = intr.Node.default(path)
        node.interfaces.append(self.interface)
        return node

    def children(self, path: str) -> set[str]:
        """The names of the nodes right below `path` that lead to these objects."""
        if path == self.parent:
            return {str(object_id) for object_id in self.ids()}
        above = path.rstrip("/") + "/"
        if not self.parent.startswith(above) or next(iter(self.ids()), None) is None:
            return set()
        return {self.parent[len(above) :].split("/", 1)[0]}

    def below(self, path: str) -> bool:
        """Whether these objects are below `path` (GetManagedObjects on it lists them)."""
        return path in {"/", self.parent} or self.parent.startswith(path + "/")

    # -- org.freedesktop.DBus.Properties ----------------------------------------------

    def answer(self, message: Message) -> Message | None:
        """The reply to a Properties call on one of these objects (None: the message
        is no such call, for someone else to answer)."""
        if (
            message.message_type is not MessageType.METHOD_CALL
            or message.interface != PROPERTIES_INTERFACE
            or message.path is None
        ):
            return None
        object_id = self.id_at(message.path)
        if object_id is None:
            return None
        if _PROPERTIES_SIGNATURES.get(message.member or "") != message.signature:
            return Message.new_error(
                message,
                ErrorType.UNKNOWN_METHOD,
                f'{PROPERTIES_INTERFACE} has no method "{message.member}" with signature'
                f' "{message.signature}"',
            )
        properties = self.properties(object_id)
        if properties is None:
            return Message.new_error(
                message, ErrorType.UNKNOWN_OBJECT, f'no object at path "{message.path}"'
            )
        return self._answer_about(message, properties)

    def _answer_about(self, message: Message, properties: dict[str, Variant]) -> Message:
        interface_name = message.body[0]
        ours = interface_name in {"", self.interface.name}  # "": any interface (the spec)
        if message.member == "GetAll":
            if ours or interface_name in _STANDARD_INTERFACES:
                return Message.new_method_return(message, "a{sv}", [properties if ours else {}])
            return _no_interface(message, interface_name)
        if not ours and interface_name not in _STANDARD_INTERFACES:
            return _no_interface(message, interface_name)
        name = message.body[1]
        if not ours or name not in properties:
            return Message.new_error(
                message,
                ErrorType.UNKNOWN_PROPERTY,
                f'interface "{interface_name}" has no property "{name}"',
            )
        if message.member == "Set":
            return Message.new_error(
                message, ErrorType.PROPERTY_READ_ONLY, f'the property "{name}" is read-only'
            )
        return Message.new_method_return(message, "v", [properties[name]])


Model = TypeVar("Model")


def objects_of(
    parent: str,
    interface: intr.Interface,
    models: Mapping[int, Model],
    properties: Callable[[Model], dict[str, Variant]],
) -> PropertyObjects:
    """The objects `<parent>/<id>` of the models in `models` (by id, kept up to date by
    its owner), each with the properties `properties` reads from its model."""

    def properties_of(object_id: int) -> dict[str, Variant] | None:
        model = models.get(object_id)
        return None if model is None else properties(model)

    return PropertyObjects(parent, interface, models.keys, properties_of)


def _no_interface(message: Message, interface_name: str) -> Message:
    return Message.new_error(
        message,
        ErrorType.UNKNOWN_INTERFACE,
        f'no interface "{interface_name}" at path "{message.path}"',
    )
