"""What a client may change of a window (`SetWindow`) and how it asks for a split
(`SplitPane`), checked: docs/windows.md#manager-methods.

Each problem is an `InvalidArgument` naming it; a layout's refusal names the rule it
breaks (mux.protocol.layout). Whether a layout holds exactly the window's panes is
for the windows themselves to check (mux.panes.windows): only they know the panes.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from mux.protocol.errors import InvalidArgument
from mux.protocol.layout import DIRECTIONS, Direction, LayoutError, Node, parse_layout

# A window's geometry as a desktop client set it (opaque to mux): key -> D-Bus type.
GEOMETRY_KEYS = {"x": "i", "y": "i", "width": "u", "height": "u", "monitor": "s"}
# SetWindow's properties: name -> D-Bus type.
WINDOW_PROPERTIES = {"title": "s", "geometry": "a{sv}", "layout": "s", "focused_pane": "t"}
MAX_TITLE_BYTES = 4096

Geometry = Mapping[str, int | str]


@dataclass(frozen=True, slots=True)
class WindowUpdate:
    """What a client asks to change (None: unchanged)."""

    title: str | None = None
    geometry: Geometry | None = None
    layout: Node | None = None
    focused_pane: int | None = None


def _typed(what: str, given: Mapping[str, tuple[str, object]], types: Mapping[str, str]) -> None:
    for key, (signature, _) in given.items():
        wanted = types.get(key)
        if wanted is None:
            raise InvalidArgument(f"{what} has no key {key!r} (it has {', '.join(types)})")
        if signature != wanted:
            raise InvalidArgument(f"{what} {key!r} is of type {wanted!r}, not {signature!r}")


# The values each D-Bus type holds.
_RANGES = {"i": (-(2**31), 2**31 - 1), "u": (0, 2**32 - 1)}


def fits_geometry(key: str, value: object) -> bool:
    """`value` is one `key` of a geometry may have (a snapshot's, read back)."""
    signature = GEOMETRY_KEYS.get(key)
    if signature == "s":
        return isinstance(value, str) and "\x00" not in value
    if signature is None or not isinstance(value, int) or isinstance(value, bool):
        return False
    low, high = _RANGES[signature]
    return low <= value <= high


def parse_geometry(geometry: Mapping[str, tuple[str, object]]) -> dict[str, int | str]:
    """{key: (D-Bus signature, value)}: only the known keys, each of its type."""
    _typed("geometry", geometry, GEOMETRY_KEYS)
    for key, (_, value) in geometry.items():
        if not fits_geometry(key, value):
            raise InvalidArgument(f"geometry {key!r} cannot be {value!r}")
    return {key: cast(int | str, value) for key, (_, value) in geometry.items()}


def parse_window_update(props: Mapping[str, tuple[str, object]]) -> WindowUpdate:
    _typed("SetWindow", props, WINDOW_PROPERTIES)
    title = cast(str | None, props.get("title", ("", None))[1])
    if title is not None and ("\x00" in title or len(title.encode()) > MAX_TITLE_BYTES):
        raise InvalidArgument(f"a title has no NUL and is at most {MAX_TITLE_BYTES} bytes")
    geometry = None
    if "geometry" in props:
        given = cast(Mapping[str, object], props["geometry"][1])
        geometry = parse_geometry(
            {key: (variant.signature, variant.value) for key, variant in given.items()}  # type: ignore[attr-defined]
        )
    layout = None
    if "layout" in props:
        try:
            layout = parse_layout(cast(str, props["layout"][1]))
        except LayoutError as e:
            raise InvalidArgument(str(e)) from None
    focus = cast(int | None, props.get("focused_pane", ("", None))[1])
    return WindowUpdate(title, geometry, layout, focus)


def parse_split(direction: str, share: float) -> tuple[Direction, float]:
    """SplitPane's direction and the new pane's share."""
    if direction not in DIRECTIONS:
        raise InvalidArgument(f'the direction is "horizontal" or "vertical", not {direction!r}')
    if not 0 < share < 1:
        raise InvalidArgument(f"the ratio (the new pane's share) is between 0 and 1, not {share:g}")
    return direction, share
