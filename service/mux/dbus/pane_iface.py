"""`org.mux.Mux1.Pane`: one object per pane, read-only properties (docs/dbus-api.md#pane-objects).

`PANE_FIELDS` is the one declaration of what mux says about a pane: it makes
the D-Bus properties of the pane objects (served by `pane_objects`), the
`InterfacesAdded` body, the `PropertiesChanged` contents and the `ListPanes`
entries (docs/dbus-api.md#manager-methods).
"""

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dbus_fast import Variant

from mux.panes.pane import Pane
from mux.protocol.names import PANE_INTERFACE, PANE_PATH_PREFIX
from mux.system.dbus_property_objects import PropertyObjects, objects_of, read_only_interface
from mux.system.remade import Remade


def _identity(value: Any) -> Any:
    return value


def _unknown_as_minus_one(status: int | None) -> int:
    return status if status is not None else -1  # -1: running, or unknown


@dataclass(frozen=True)
class PaneField:
    key: str  # its key in a ListPanes entry
    signature: str  # its D-Bus type
    source: str  # the Pane attribute it is read from (an immutable value)
    convert: Callable[[Any], Any] = _identity  # from that attribute's value to its D-Bus value
    property: str | None = None  # its org.mux.Mux1.Pane property; None: ListPanes only

    def read(self, pane: Pane) -> Any:
        return self.convert(getattr(pane, self.source))

    def variant(self, pane: Pane) -> Variant:
        return Variant(self.signature, self.read(pane))


# In ListPanes order (and InterfacesAdded order, for the properties).
PANE_FIELDS: tuple[PaneField, ...] = (
    PaneField("id", "t", "id", property="Id"),
    PaneField("pid", "u", "pid", property="Pid"),
    PaneField("argv", "as", "argv", list, property="Argv"),
    PaneField("cwd", "s", "cwd", property="Cwd"),
    PaneField("cwd_source", "s", "cwd_source", property="CwdSource"),
    PaneField("title", "s", "title", property="Title"),
    PaneField("window", "t", "window", property="Window"),
    PaneField("state", "s", "state", str, property="State"),
    PaneField("exit_status", "i", "exit_status", property="ExitStatus"),
    PaneField("rows", "q", "rows", property="Rows"),
    PaneField("cols", "q", "cols", property="Cols"),
    # What the pane asked to tell (OSC 9/777/99, a long command's end) while no one
    # looked at it; "" once someone attached to, read or typed into it.
    PaneField("notice", "s", "unseen_notice", property="Notice"),
    # What an integrated shell said last (docs/shell-integration.md): "prompt",
    # "command", or "" when unknown; the command line it started last; and that
    # command's exit status.
    PaneField("shell_state", "s", "shell_state"),
    PaneField("command", "s", "last_command", lambda command: command or ""),
    PaneField("command_status", "i", "last_command_status", _unknown_as_minus_one),
)

# The org.mux.Mux1.Pane properties by name.
PANE_PROPERTIES: dict[str, PaneField] = {
    field.property: field for field in PANE_FIELDS if field.property is not None
}

# Every field's source value of a pane at once, in PANE_FIELDS order (one C call).
_read_sources = operator.attrgetter(*(field.source for field in PANE_FIELDS))


def _entry(sources: tuple[Any, ...]) -> dict[str, Variant]:
    """One entry of `ListPanes`, from its pane's source values in PANE_FIELDS order."""
    return {
        field.key: Variant(field.signature, field.convert(value))
        for field, value in zip(PANE_FIELDS, sources, strict=True)
    }


class ListEntries:
    """`ListPanes` entries, each built again only when one of its pane's values changed
    (mux.system.remade): making 14 Variants for each of 500 panes was a third of the call."""

    def __init__(self) -> None:
        self._entries: Remade[Pane, dict[str, Variant]] = Remade(weak_keys=True)

    def entry(self, pane: Pane) -> dict[str, Variant]:
        sources = _read_sources(pane)
        return self._entries.get(pane, sources, lambda: _entry(sources))


def pane_property_variants(pane: Pane) -> dict[str, Variant]:
    """Every property of the pane: the body of its InterfacesAdded."""
    return {name: field.variant(pane) for name, field in PANE_PROPERTIES.items()}


# The introspection of org.mux.Mux1.Pane.
PANE_INTERFACE_DESCRIPTION = read_only_interface(
    PANE_INTERFACE, ((name, field.signature) for name, field in PANE_PROPERTIES.items())
)


def pane_objects(panes: Mapping[int, Pane]) -> PropertyObjects:
    """The pane objects of the panes in `panes` (by id), as the bus serves them."""
    parent = PANE_PATH_PREFIX.rstrip("/")
    return objects_of(parent, PANE_INTERFACE_DESCRIPTION, panes, pane_property_variants)
