"""muxctl attach [ID]: this terminal shows the pane and types into it, until detached."""

import argparse
import os
import signal
import socket
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from muxctl.arguments import pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.completing import PANE_IDS, complete_with
from muxctl.errors import EXIT_FAILURE, EXIT_USAGE, CtlError

if TYPE_CHECKING:
    from pathlib import Path

    from muxctl.attaching import Outcome
    from muxctl.client import MuxClient
    from muxctl.clipboard import PasteBuffer
    from muxctl.lone_status import StatusSource
    from muxctl.prefix_keys import PrefixKeys


def add_detach_key(parser: argparse.ArgumentParser) -> None:
    from muxctl.prefix_keys import keys_help

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = keys_help()
    parser.add_argument(
        "--detach-key",
        metavar="KEY",
        default=os.environ.get("MUXCTL_DETACH_KEY", "^\\"),
        help="the key that detaches: ^X, one character, or none "
        "(default: $MUXCTL_DETACH_KEY, else ^\\)",
    )
    parser.add_argument(
        "--prefix-key",
        metavar="KEY",
        help="the key before a window command (split, focus, zoom...): ^X, one character, "
        "or none (default: $MUXCTL_PREFIX_KEY, else prefix in config.toml, else ^b, as "
        "tmux's)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pane = parser.add_argument(
        "id", nargs="?", type=pane_id, default=0, help="pane id (default: the last one used)"
    )
    complete_with(pane, PANE_IDS)
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="only watch (the pane, or its whole split window): keys are not sent (but the "
        "detach key and the prefix's d), and the panes keep their sizes",
    )
    add_detach_key(parser)


def check_terminal(args: argparse.Namespace) -> None:
    from muxctl.attaching import parse_detach_key

    args.detach_bytes = parse_detach_key(args.detach_key)
    from muxctl.view_settings import prefix_key

    chosen = args.prefix_key or os.environ.get("MUXCTL_PREFIX_KEY") or prefix_key()
    args.prefix_bytes = parse_detach_key(chosen, "the prefix key")
    if args.prefix_bytes is not None and args.prefix_bytes == args.detach_bytes:
        raise CtlError("the prefix key and the detach key must differ", EXIT_USAGE)
    if not (os.isatty(0) and os.isatty(1)):
        raise CtlError(
            f"muxctl {args.verb} needs a terminal: its input and output must be one", EXIT_USAGE
        )


def attach(
    pane: int,
    args: argparse.Namespace,
    opened: socket.socket | None = None,
    bus: "MuxClient | None" = None,
    host: "MuxClient | None" = None,
) -> int:
    """Attach this terminal to `pane` (0: the last used), or run it on `opened`, a
    connection OpenAttach made (a host's pane); returns muxctl's exit status.

    A pane alone in its window is shown alone, its terminal handed over to muxd
    (the fastest way); a window of several panes, or the last used pane's, in the
    window view (docs/windows.md#the-window-view), which a split typed behind the
    prefix key also opens. `bus`: the D-Bus client for window commands (None: a
    host's pane, shown alone); `host`: a host's D-Bus client, for the status line."""
    from mux.system.paths import resolve_paths
    from muxctl.clipboard import PasteBuffer
    from muxctl.prefix_keys import PrefixKeys
    from muxctl.rawterm import held_raw
    from muxctl.status_sources import host_pane_status, pane_status
    from muxctl.view_settings import key_bindings

    prefix = args.prefix_bytes if bus is not None else None
    keys = PrefixKeys(prefix, args.detach_bytes, key_bindings())
    # The paste buffer (copy mode's, for `]`) is one for the lone pane and the view.
    read_only = getattr(args, "read_only", False)  # (muxctl new attaches to use)
    status = pane_status(bus, read_only) if host is None else host_pane_status(host, args.host)
    parts = _Parts(resolve_paths().attach_socket, keys, PasteBuffer(), status)
    with held_raw(0):  # (from one part to the next: muxctl.rawterm)
        if bus is not None and ((pane == 0 and not read_only) or _window_size(bus, pane) > 1):
            outcome = _view(bus, pane, parts, read_only)
        else:
            pane, outcome = _alone(pane, parts, read_only, opened, bus)
            if outcome.window_command is not None and bus is not None:
                outcome = _after_window_command(bus, pane, outcome, parts)
    # On a line of its own, below whatever the pane left on the screen.
    print("\n" + outcome.message, file=sys.stderr if outcome.to_stderr else sys.stdout)
    return outcome.exit_status


@dataclass(frozen=True)
class _Parts:
    """What every way of showing a pane uses: the attach socket, the keys, the buffer."""

    socket_path: "Path"
    keys: "PrefixKeys"
    buffer: "PasteBuffer"
    status: "StatusSource | None"  # what the status line says (None: no status line)


def _alone(
    pane: int,
    parts: _Parts,
    read_only: bool,
    opened: socket.socket | None,
    bus: "MuxClient | None",
) -> tuple[int, "Outcome"]:
    """The pane shown alone until detached; again after copy mode, or a close declined.
    The pane shown, and how it ended (a window command for the caller, maybe)."""
    from muxctl.attaching import DETACHED_MODES, LONE_PANE_COMMANDS, AttachClient, Outcome

    while True:
        client = AttachClient(
            parts.socket_path,
            pane,
            parts.keys,
            read_only=read_only,
            buffer=parts.buffer,
            status=parts.status,
        )
        client.connect(opened)
        outcome = client.run()
        pane = client.pane or pane
        command = outcome.window_command
        if command == "command-prompt" and bus is not None:
            typed = _prompted(bus, pane, parts.keys)
            if typed in LONE_PANE_COMMANDS or typed == "detach":
                return pane, _lone_command(pane, typed)
            if typed not in DETACHED_MODES:
                continue  # (nothing more to do, or said why: shown again)
            command = typed  # copy mode, the chooser, the keys: as their keys
        if command == "list-keys":
            from muxctl.copy_alone import keys_alone

            stopped: int | None = keys_alone(parts.keys.listed(), ahead=ahead(parts)) or 0
        elif bus is None:  # a host's pane: no window commands, no copy mode
            return pane, outcome
        elif _declined(command, pane, parts.keys):
            continue  # not closed after all: shown again
        elif command == "rename-window":
            _rename(bus, pane, parts.keys)
            continue
        elif command == "choose-tree":
            chosen, stopped = _choose(bus, pane, read_only, ahead(parts))
            if chosen is not None and _window_size(bus, chosen) > 1:
                return chosen, _view(bus, chosen, parts, read_only)
            pane = chosen or pane  # (a lone pane's window: attached to alone)
        else:
            stopped = _copy_mode(bus, command, pane, parts)
        if stopped is None:
            return pane, outcome
        if stopped:  # a signal ended copy mode: the attach ends too
            name = signal.Signals(stopped).name
            return pane, Outcome(f"[{name}: detached from pane {pane}]", 128 + stopped)


def ahead(parts: _Parts) -> bytes:
    """Keys typed after the lone pane's command, read with it: the next part's."""
    return parts.keys.take_ahead()


def _choose(
    bus: "MuxClient", pane: int, read_only: bool, typed: bytes
) -> tuple[int | None, int | None]:
    """The chooser (`w`) over the whole terminal: the pane chosen (None: none), focused
    in its window unless `read_only`; and the signal that ended it (0: none did)."""
    from muxctl.copy_alone import choose_alone
    from muxctl.window_commands import set_focus

    chosen, stopped = choose_alone(bus, pane, ahead=typed)
    if chosen is None or stopped:
        return None, stopped or 0
    if not read_only:
        set_focus(bus, chosen.window, chosen.pane)
    return chosen.pane, 0


def _prompted(bus: "MuxClient", pane: int, keys: "PrefixKeys") -> str | None:
    """`:` in a pane shown alone: a command typed on the line below, as `,` asks for a
    name (muxctl.typed_commands). The window command to do next (None: none); a rename
    is done here, and what cannot be done is said, until a key."""
    from muxctl.attaching import DETACHED_MODES, LONE_PANE_COMMANDS
    from muxctl.lone_questions import said, typed_line
    from muxctl.typed_commands import NotACommand, typed_command
    from muxctl.window_commands import find_window

    try:
        typed = typed_command(typed_line(":", keys) or "")
    except NotACommand as e:
        said(f"muxctl: {e}", keys)
        return None
    if typed is None:
        return None
    if typed.name == "rename-window":
        _, found = find_window(bus, 0, pane)
        if found is not None:
            _set_title(bus, found[0], typed.answer or "", keys)
        return None
    if typed.name in LONE_PANE_COMMANDS or typed.name in DETACHED_MODES | {"detach"}:
        return typed.name
    said(f"muxctl: {typed.name}: pane {pane} is alone in its window", keys)
    return None


def _lone_command(pane: int, command: str) -> "Outcome":
    """How the lone pane's attach ended for `command` typed after `:`: the window
    command for the caller, or detached."""
    from muxctl.attaching import Outcome

    if command == "detach":
        return Outcome(f"[detached from pane {pane}; reattach with: muxctl attach {pane}]")
    return Outcome("", window_command=command)


def _rename(bus: "MuxClient", pane: int, keys: "PrefixKeys") -> None:
    """`,` in a pane shown alone: its window's name asked for on the line below (Enter
    sets it; Escape, Ctrl-C or an empty line leaves it)."""
    from muxctl.lone_questions import typed_line
    from muxctl.window_commands import asks_first, find_window

    _, found = find_window(bus, 0, pane)
    if found is None:
        return
    window = found[0]
    asked = asks_first(bus, "rename-window", window, pane)
    assert asked is not None  # (a rename always asks for the name)
    now = f"[{asked.initial}] " if asked.initial else ""
    name = typed_line(f"{asked.text}{now}", keys)  # (escaped as it is drawn)
    if name and name.strip():
        _set_title(bus, window, name.strip(), keys)


def _set_title(bus: "MuxClient", window: int, title: str, keys: "PrefixKeys") -> None:
    """Window `window` named `title`; a refusal (a NUL in it, say) said, until a key."""
    from muxctl.lone_questions import said
    from muxctl.wire import Variant

    try:
        bus.call("SetWindow", body=[window, {"title": Variant("s", title)}])
    except CtlError as e:
        said(f"muxctl: {e.message}", keys)


def _copy_mode(bus: "MuxClient", command: str | None, pane: int, parts: _Parts) -> int | None:
    """Copy mode, when that is what the lone pane's attach was left for: 0 when it ended
    (the attach goes on), the signal that ended it; None: no copy mode was asked for."""
    from muxctl.attaching import COPY_COMMANDS
    from muxctl.copy_alone import copy_alone
    from muxctl.errors import RemoteError
    from muxctl.view_settings import mode_keys

    if command not in COPY_COMMANDS:
        return None
    try:
        page_up = command == "copy-mode-page-up"
        stopped = copy_alone(
            bus, pane, parts.buffer, page_up=page_up, mode_keys=mode_keys(), ahead=ahead(parts)
        )
    except RemoteError:
        return 0  # (the pane went away meanwhile: the attach says so)
    return stopped or 0


def _declined(command: str | None, pane: int, keys: "PrefixKeys") -> bool:
    """Asked first, y/n, before a command that loses work (`x`, `&` in a pane shown
    alone: it closes the pane), on the terminal the attach has just given back."""
    from muxctl.lone_questions import agreed

    if command not in ("close", "close-window"):
        return False
    return not agreed(f"kill pane {pane}?", keys)


def _window_size(bus: "MuxClient", pane: int) -> int:
    """How many panes the window of `pane` has (0: no such pane: the attach says so)."""
    from mux.protocol.layout import panes_of
    from muxctl.window_commands import layout_of, plain_entries

    for window in plain_entries(bus, "ListWindows"):
        panes = list(panes_of(layout_of(window)))
        if pane in panes:
            return len(panes)
    return 0


def _after_window_command(
    bus: "MuxClient", pane: int, detached: "Outcome", parts: _Parts
) -> "Outcome":
    """A lone pane's window command, once detached from it: a split opens the window
    view; closing the pane ends the attach."""
    from muxctl.attaching import Outcome
    from muxctl.errors import RemoteError
    from muxctl.window_commands import new_window, split_beside

    command = detached.window_command
    assert command is not None
    try:
        if command in ("close", "close-window"):  # (asked first: _declined)
            bus.call("Kill", body=[pane])
            return Outcome(f"[pane {pane} closed]")
        if command == "new-window":
            shown = new_window(bus, pane)
        elif command.startswith("split-"):
            shown = split_beside(bus, pane, command.removeprefix("split-"))
        else:  # another window (or this one again: there is none that way)
            shown = _pane_of_window(bus, pane, command)
    except RemoteError as e:
        return Outcome(f"muxctl: {e.message}", EXIT_FAILURE, to_stderr=True)
    return _view(bus, shown, parts, read_only=False)  # the new pane has the focus, as tmux


def _pane_of_window(bus: "MuxClient", pane: int, command: str) -> int:
    """The focused pane of the window `command` goes to from the window of `pane`."""
    from muxctl.window_commands import focused_pane, pick_window, window_ids

    (entries,) = bus.call("ListPanes")
    window = next((int(e["window"].value) for e in entries if e["id"].value == pane), 0)
    chosen = pick_window(window, window_ids(bus), command, None)
    return (focused_pane(bus, chosen) if chosen is not None else None) or pane


def _view(bus: "MuxClient", pane: int, parts: _Parts, read_only: bool) -> "Outcome":
    from muxctl.window_view import WindowView

    path, keys, buffer = parts.socket_path, parts.keys, parts.buffer
    return WindowView(bus, path, pane, keys, buffer, read_only=read_only).run()


def open_attached(client: "MuxClient", pane: int) -> socket.socket:
    """A host's pane (muxctl --host): OpenAttach on the host's object, through the hub."""
    if pane == 0:
        raise CtlError("attach --host needs a pane id", EXIT_USAGE)
    return socket.socket(fileno=client.open_attach(pane))


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    # The D-Bus connection made sure mux runs (starting it if need be); the
    # terminal's traffic goes over the attach socket.
    if args.host is not None:
        return attach(args.id, args, open_attached(client, args.id), host=client)
    return attach(args.id, args, bus=client)


COMMAND = ServiceCommand(
    name="attach",
    help="show a pane in this terminal and type into it (Ctrl-\\ detaches)",
    add_arguments=add_arguments,
    check=check_terminal,
    run=run,
)
