"""The window view's status line (docs/windows.md#the-status-line): the windows, the one
shown marked, the focused pane's title and directory, and what mux is doing. Pure:
what ListWindows and ListPanes said in, one line of text out (every piece of it taken
from a client or a program, so written through `visible`: no control reaches the
terminal)."""

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from mux.protocol.visible import visible


def status_text(
    windows: Sequence[Mapping[str, Any]],
    shown: int,
    panes: Sequence[Mapping[str, Any]],
    focus: int,
    *,
    zoomed: bool = False,
    state: str = "",
    home: str | None = None,
    host: str | None = None,
) -> str:
    """`windows`, `panes`: ListWindows and ListPanes entries with plain values; `host`:
    the machine the panes run on (as tmux's status line names it)."""
    parts = window_parts(windows, shown, panes, zoomed=zoomed)
    line = " " + " ".join(part for _, part in parts)
    pane = next((p for p in panes if int(p["id"]) == focus), None)
    if pane is not None:
        title = visible(str(pane.get("title") or "")) or program_name(pane)
        where = shorter_path(visible(str(pane.get("cwd") or "")), home)
        line += f"{'  │ ' if parts else ''}{focus}: {title} · {where}"
        if host:
            line += f" @ {visible(host)}"
        line += ended(pane)  # (its keys ring the bell: say why)
    held = sum(1 for p in panes if p.get("state") == "held")
    if held:
        line += f"  │ {held} pane{'s' if held > 1 else ''} waiting to be restored"
    if state:
        line += f"  │ {state}"
    return line


def window_parts(
    windows: Sequence[Mapping[str, Any]],
    shown: int,
    panes: Sequence[Mapping[str, Any]],
    *,
    zoomed: bool = False,
) -> list[tuple[int, str]]:
    """Each window's id and what the status line says of it (`0:build*`), in order."""
    parts = []
    for index, window in enumerate(sorted(windows, key=lambda w: int(w["id"]))):
        name = visible(str(window.get("title") or "")) or window_name(window, panes)
        mark = ("*" + ("Z" if zoomed else "")) if int(window["id"]) == shown else ""
        parts.append((int(window["id"]), f"{index}:{name}{mark}"))
    return parts


def window_at(parts: Sequence[tuple[int, str]], col: int) -> int | None:
    """The window whose part of the status line is at column `col` (0-based); None when
    that column is on none of them."""
    start = 1  # (the line starts with a space)
    for window, part in parts:
        end = start + cells(part)
        if start <= col < end:
            return window
        start = end + 1
    return None


def window_name(window: Mapping[str, Any], panes: Sequence[Mapping[str, Any]]) -> str:
    """A window without a title is named by the program of its focused pane (as tmux's
    automatic-rename)."""
    focused = int(window.get("focused_pane") or 0)
    pane = next((p for p in panes if int(p["id"]) == focused), None)
    return program_name(pane) if pane is not None else f"window {window['id']}"


def ended(pane: Mapping[str, Any]) -> str:
    """` · exited (N)` after a pane whose program has ended (its exit status), else ""."""
    return f" · exited ({pane.get('exit_status', '?')})" if pane.get("state") == "exited" else ""


def program_name(pane: Mapping[str, Any]) -> str:
    argv = pane.get("argv") or [""]
    return visible(str(argv[0]).rsplit("/", 1)[-1]) or "pane"


def shorter_path(path: str, home: str | None) -> str:
    if home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def fit(text: str, width: int) -> str:
    """`text` cut or padded to `width` cells (wide characters take two; combining
    marks none), so that the line never reaches past where it is meant to end."""
    out, used = [], 0
    for char in text:
        width_of = _cells(char)
        if used + width_of > width:
            break
        out.append(char)
        used += width_of
    return "".join(out) + " " * (width - used)


def cells(text: str) -> int:
    """The cells `text` takes, as `fit` counts them."""
    return sum(_cells(char) for char in text)


def _cells(char: str) -> int:
    return 0 if unicodedata.combining(char) else 2 if _wide(char) else 1


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")
