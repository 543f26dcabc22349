"""`org.mux.Mux1.Pane`: one object per pane, read-only properties (docs/dbus-api.md#pane-objects).

`PANE_FIELDS` is the one declaration of what mux says about a pane: it makes
the D-Bus properties of `PaneInterface`, the `InterfacesAdded` body, the
`PropertiesChanged` contents and the `ListPanes` entries
(docs/dbus-api.md#manager-methods).
"""

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from dbus_fast import PropertyAccess, Variant
from dbus_fast.service import ServiceInterface, dbus_property

from mux.panes.pane import Pane
from mux.protocol.names import PANE_INTERFACE


@dataclass(frozen=True)
class PaneField:
    key: str  # its key in a ListPanes entry
    signature: str  # its D-Bus type
    read: Callable[[Pane], Any]
    property: str | None = None  # its org.mux.Mux1.Pane property; None: ListPanes only


def _command_status(pane: Pane) -> int:
    status = pane.last_command_status
    return status if status is not None else -1  # -1: running, or unknown


# In ListPanes order (and InterfacesAdded order, for the properties).
PANE_FIELDS: tuple[PaneField, ...] = (
    PaneField("id", "t", lambda pane: pane.id, "Id"),
    PaneField("pid", "u", lambda pane: pane.pid, "Pid"),
    PaneField("argv", "as", lambda pane: list(pane.argv), "Argv"),
    PaneField("cwd", "s", lambda pane: pane.cwd, "Cwd"),
    PaneField("cwd_source", "s", lambda pane: pane.cwd_source, "CwdSource"),
    PaneField("title", "s", lambda pane: pane.title, "Title"),
    PaneField("window", "t", lambda pane: pane.window, "Window"),
    PaneField("state", "s", lambda pane: str(pane.state), "State"),
    PaneField("exit_status", "i", lambda pane: pane.exit_status, "ExitStatus"),
    PaneField("rows", "q", lambda pane: pane.rows, "Rows"),
    PaneField("cols", "q", lambda pane: pane.cols, "Cols"),
    # What an integrated shell said last (docs/shell-integration.md): "prompt",
    # "command", or "" when unknown; the command line it started last; and that
    # command's exit status.
    PaneField("shell_state", "s", lambda pane: pane.shell_state),
    PaneField("command", "s", lambda pane: pane.last_command or ""),
    PaneField("command_status", "i", _command_status),
)

# The org.mux.Mux1.Pane properties by name.
PANE_PROPERTIES: dict[str, PaneField] = {
    field.property: field for field in PANE_FIELDS if field.property is not None
}


def _entry(values: tuple[Any, ...]) -> dict[str, Variant]:
    """One entry of `ListPanes`, from its pane's values in PANE_FIELDS order."""
    return {
        field.key: Variant(field.signature, value)
        for field, value in zip(PANE_FIELDS, values, strict=True)
    }


class ListEntries:
    """`ListPanes` entries, each built again only when one of its pane's values changed:
    making 14 Variants for each of 500 panes was a third of the call. The values are
    compared, not trusted to be announced, so an entry is never stale."""

    def __init__(self) -> None:
        self._entries: weakref.WeakKeyDictionary[
            Pane, tuple[tuple[Any, ...], dict[str, Variant]]
        ] = weakref.WeakKeyDictionary()

    def entry(self, pane: Pane) -> dict[str, Variant]:
        values = tuple(field.read(pane) for field in PANE_FIELDS)
        # Lists (argv) as tuples: a list read now and changed in place later must
        # not compare equal to itself.
        frozen = tuple(tuple(v) if isinstance(v, list) else v for v in values)
        cached = self._entries.get(pane)
        if cached is not None and cached[0] == frozen:
            return cached[1]
        entry = _entry(values)
        self._entries[pane] = (frozen, entry)
        return entry


def pane_property_variants(pane: Pane) -> dict[str, Variant]:
    """Every property of the pane: the body of its InterfacesAdded."""
    return {
        name: Variant(field.signature, field.read(pane)) for name, field in PANE_PROPERTIES.items()
    }


class PaneInterface(ServiceInterface):
    """The D-Bus properties are added from PANE_PROPERTIES below the class."""

    def __init__(self, pane: Pane) -> None:
        super().__init__(PANE_INTERFACE)
        self.pane = pane

    def emit_changed(self, names: Iterable[str]) -> None:
        changed = {
            name: PANE_PROPERTIES[name].read(self.pane) for name in names if name in PANE_PROPERTIES
        }
        if changed:  # (a change of something that is no D-Bus property: nothing to say)
            self.emit_properties_changed(changed)


def _exported(name: str, field: PaneField) -> Any:
    def read(interface: PaneInterface) -> Any:
        return field.read(interface.pane)

    read.__name__ = read.__qualname__ = name
    read.__annotations__ = {"return": field.signature}  # dbus-fast reads the type here
    return dbus_property(access=PropertyAccess.READ, name=name)(read)


for _name, _field in PANE_PROPERTIES.items():
    setattr(PaneInterface, _name, _exported(_name, _field))
