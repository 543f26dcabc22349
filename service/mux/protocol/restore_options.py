"""The options of `RestoreSnapshot` (docs/dbus-api.md#restore-and-history), checked
without I/O: `panes at` (a subset of the snapshot's panes; default all),
`dry_run b` (answer what would start, change nothing) and, with a dry run,
`contents b` (each entry also carries the end of the pane's saved contents)."""

from collections.abc import Mapping
from dataclasses import dataclass

from mux.protocol.errors import InvalidArgument

OPTION_TYPES = {"panes": "at", "dry_run": "b", "contents": "b"}
MAX_PANES = 100_000  # far past any session; a longer list is not a subset of one


@dataclass(frozen=True)
class RestoreOptions:
    panes: frozenset[int] | None = None  # None: every pane of the snapshot
    dry_run: bool = False
    contents: bool = False


def parse_restore_options(options: Mapping[str, tuple[str, object]]) -> RestoreOptions:
    """`options`: name -> (D-Bus signature, value)."""
    for name, (signature, _) in options.items():
        wanted = OPTION_TYPES.get(name)
        if wanted is None:
            known = ", ".join(sorted(OPTION_TYPES))
            raise InvalidArgument(f"unknown RestoreSnapshot option {name!r} (known: {known})")
        if signature != wanted:
            raise InvalidArgument(f"option {name!r} must have the type {wanted}, not {signature}")
    panes = options.get("panes", (None, None))[1]
    if panes is not None:
        assert isinstance(panes, list)
        if not panes or len(panes) > MAX_PANES:
            raise InvalidArgument(f"'panes' must name 1 to {MAX_PANES} panes of the snapshot")
    dry_run = bool(options.get("dry_run", (None, False))[1])
    contents = bool(options.get("contents", (None, False))[1])
    if contents and not dry_run:
        raise InvalidArgument("'contents' is for a dry run (what a restore would show)")
    return RestoreOptions(
        frozenset(int(pane) for pane in panes) if panes is not None else None, dry_run, contents
    )
