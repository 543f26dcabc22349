"""Validation of the `Spawn` options dictionary (docs/dbus-api.md), without any D-Bus types.

The D-Bus layer hands over each option as `(signature, value)`; this module
checks names, types and values and returns a `SpawnRequest`, or raises
`InvalidArgument` naming the option and what is wrong with it.
"""

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from mux.protocol.errors import InvalidArgument
from mux.protocol.visible import without_controls

# Terminal sizes beyond this are refused: nothing real is that large, and the
# emulator's memory grows with rows x cols.
MAX_ROWS = 1000
MAX_COLS = 2000
MAX_TITLE_BYTES = 1024


class LaunchKind(StrEnum):
    EXPLICIT = "explicit"  # argv given: run exactly that program
    SHELL = "shell"  # a shell, with shell integration


@dataclass(frozen=True)
class SpawnRequest:
    kind: LaunchKind
    argv: tuple[str, ...] = ()  # explicit launches only
    shell: str | None = None  # shell launches: None means the user's login shell
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    title: str | None = None
    window: int = 0
    rows: int | None = None
    cols: int | None = None
    bind_instance: bool = False
    resurrection: bool | None = None  # None: the configured default
    # Not a Spawn option: a restore names the program resolved the first time
    # (the same one, not whatever PATH finds today), argv staying as it was.
    program: str | None = None
    invocation: str | None = None  # likewise: a restored launch keeps its identity


# option name -> (D-Bus signature, human description of the type)
OPTION_TYPES: Mapping[str, tuple[str, str]] = {
    "argv": ("as", "an array of strings"),
    "shell": ("s", "a string"),
    "cwd": ("s", "a string"),
    "env": ("a{ss}", "a dictionary of strings to strings"),
    "title": ("s", "a string"),
    "window": ("t", "an unsigned 64-bit integer"),
    "rows": ("q", "an unsigned 16-bit integer"),
    "cols": ("q", "an unsigned 16-bit integer"),
    "bind_instance": ("b", "a boolean"),
    "resurrection": ("b", "a boolean"),
}


def pane_title(title: str) -> str:
    """A pane's title as Spawn or SetTitle gives it, checked (no NUL, at most
    MAX_TITLE_BYTES) and, as a program's OSC 0/2 title, without C0, DEL and C1 (bidi
    controls stay)."""
    _check_text("title", title)
    if len(title.encode()) > MAX_TITLE_BYTES:
        raise InvalidArgument(f"option 'title' is longer than {MAX_TITLE_BYTES} bytes")
    return without_controls(title)


def _check_text(name: str, value: str) -> None:
    if "\x00" in value:
        raise InvalidArgument(f"option '{name}' must not contain NUL characters")


def _check_env(env: Mapping[str, str]) -> dict[str, str]:
    for key, value in env.items():
        if not key or "=" in key or "\x00" in key:
            raise InvalidArgument(
                f"environment variable name {key!r} is not valid "
                "(it must be non-empty and contain no '=' or NUL)"
            )
        if "\x00" in value:
            raise InvalidArgument(f"the value of environment variable {key} contains NUL")
    return dict(env)


def check_size(name: str, value: int, limit: int) -> int:
    """Rows and columns, for Spawn and Resize alike: the emulator's memory grows with both."""
    if not 1 <= value <= limit:
        raise InvalidArgument(f"option '{name}' must be between 1 and {limit}, got {value}")
    return value


def parse_spawn_options(options: Mapping[str, tuple[str, object]]) -> SpawnRequest:
    """Check every option; the first problem found is raised as `InvalidArgument`."""
    values: dict[str, object] = {}
    for name in sorted(options):
        signature, value = options[name]
        expected = OPTION_TYPES.get(name)
        if expected is None:
            known = ", ".join(sorted(OPTION_TYPES))
            raise InvalidArgument(f"unknown option '{name}' (known options: {known})")
        if signature != expected[0]:
            raise InvalidArgument(
                f"option '{name}' must be {expected[1]} (type '{expected[0]}'), "
                f"got type '{signature}'"
            )
        values[name] = value

    argv: tuple[str, ...] = ()
    shell: str | None = None
    if "argv" in values and "shell" in values:
        raise InvalidArgument("give either 'argv' or 'shell', not both")
    if "argv" in values:
        argv = tuple(str(arg) for arg in values["argv"])  # type: ignore[attr-defined]
        if not argv:
            raise InvalidArgument("option 'argv' must not be empty: name the program to run")
        if not argv[0]:
            raise InvalidArgument("option 'argv' must start with a program name, got ''")
        for arg in argv:
            _check_text("argv", arg)
    if "shell" in values:
        shell = str(values["shell"])
        if not shell:
            raise InvalidArgument("option 'shell' must name a shell, got ''")
        _check_text("shell", shell)

    cwd: str | None = None
    if "cwd" in values:
        cwd = str(values["cwd"])
        _check_text("cwd", cwd)
        if not posixpath.isabs(cwd):
            raise InvalidArgument(f"option 'cwd' must be an absolute path, got {cwd!r}")

    title = pane_title(str(values["title"])) if "title" in values else None

    env = _check_env(values.get("env", {}))  # type: ignore[arg-type]
    rows = values.get("rows")
    cols = values.get("cols")
    resurrection = values.get("resurrection")
    return SpawnRequest(
        kind=LaunchKind.EXPLICIT if argv else LaunchKind.SHELL,
        argv=argv,
        shell=shell,
        cwd=cwd,
        env=env,
        title=title,
        window=int(values.get("window", 0)),  # type: ignore[call-overload]
        rows=None if rows is None else check_size("rows", int(rows), MAX_ROWS),  # type: ignore[call-overload]
        cols=None if cols is None else check_size("cols", int(cols), MAX_COLS),  # type: ignore[call-overload]
        bind_instance=bool(values.get("bind_instance", False)),
        resurrection=None if resurrection is None else bool(resurrection),
    )
