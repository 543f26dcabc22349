"""Copy mode and paste in `muxctl attach` through a real terminal (docs/windows.md#copy-mode):
a tmux window plays the user's terminal (with `set-clipboard on`, so that OSC 52 fills
its buffer), keys go in with send-keys, the screen comes back with capture-pane."""

from __future__ import annotations

from dbus_fast import Variant

from tests.harness import Service, wait_for
from tests.outer_tmux import OuterTmux

BASH = ["bash", "--norc", "--noprofile", "-i"]
# Printed before anyone attaches: at 24 rows, 1000-1077 scrolled off the pane's screen.
PRINTED = "seq 1000 1100; echo 'echo pasted-$((6*7))'"


def shell_that_printed(service: Service, prompt: str, command: str, last: str) -> int:
    """A bash pane (prompt `prompt$`) that has run `command`, whose output ends in `last`."""
    pane = service.spawn(BASH, env={"PS1": f"{prompt}$ "})
    service.wait_screen(pane, f"{prompt}$")
    service.call("SendInput", "tay", [pane, (command + "\n").encode()])
    service.wait_screen(pane, last)
    return pane


def outer_buffer(outer: OuterTmux) -> str:
    return outer.tmux("show-buffer", check=False).stdout


def test_a_lone_pane_scrolls_back_searches_copies_and_pastes(
    service: Service, outer: OuterTmux
) -> None:
    pane = shell_that_printed(service, "lone", PRINTED, "pasted-$((6*7))")
    view = outer.open("MUX_MODE_KEYS=vi " + outer.muxctl_line("attach", str(pane)), 24, 80)
    outer.tmux("set-option", "-g", "set-clipboard", "on")
    outer.wait_shown(view, "lone$")
    assert "1000" not in outer.capture(view)  # the terminal never showed it

    outer.send_keys(view, "C-b", "[")
    outer.send_keys(view, "g")  # vi: to the top of the history
    shown = outer.wait_shown(view, "1000")
    assert shown.split("\n")[0].startswith("lone$ seq 1000 1100")
    assert "[" in shown.split("\n")[0]  # the position, top right
    outer.send_keys(view, "?")  # backwards from the top: round the end, up to it
    outer.send_keys(view, "-l", "1042")
    outer.send_keys(view, "Enter")
    outer.send_keys(view, "v", "$", "y")  # select the line, copy it: OSC 52
    wait_for(lambda: outer_buffer(outer) == "1042", what="the terminal's clipboard set")
    outer.wait_shown(view, "lone$")  # the pane again, the attach going on

    # The line to paste: a page up, then found searching down, copied from where it starts.
    outer.send_keys(view, "C-b", "PageUp")
    outer.wait_shown(view, "[")
    outer.send_keys(view, "/")
    outer.send_keys(view, "-l", "echo pasted")
    outer.send_keys(view, "Enter", "v", "$", "Enter")
    wait_for(lambda: outer_buffer(outer).startswith("echo pasted"), what="the line copied")
    outer.wait_shown(view, "lone$")
    outer.send_keys(view, "C-b", "]")
    outer.send_keys(view, "Enter")
    outer.wait_shown(view, "pasted-42")
    outer.send_keys(view, "C-b", "d")
    outer.wait_shown(view, f"[detached from pane {pane}")


def test_copy_mode_in_the_window_view_covers_the_focused_pane_only(
    service: Service, outer: OuterTmux
) -> None:
    left = shell_that_printed(service, "left", "seq 1 300", "300")
    options = {"argv": Variant("as", BASH), "env": Variant("a{ss}", {"PS1": "right$ "})}
    right, _, _ = service.call("SplitPane", "tsda{sv}", [left, "horizontal", 0.5, options])
    service.wait_screen(int(right), "right$")
    view = outer.open(
        "MUX_MODE_KEYS=emacs " + outer.muxctl_line("attach", str(left)), rows=24, cols=81
    )
    outer.wait_shown(view, "right$")

    outer.send_keys(view, "C-b", "[")
    outer.send_keys(view, "M-<")  # emacs: to the top
    shown = outer.wait_shown(view, "left$ seq 1 300")
    rows = shown.split("\n")
    assert rows[0].startswith("left$ seq 1 300") and rows[1].startswith("1 ")
    assert "right$" in shown  # the other pane is drawn as it was
    outer.send_keys(view, "C-s")
    outer.send_keys(view, "-l", "150")
    outer.send_keys(view, "Enter")
    outer.wait_shown(view, "150")
    outer.send_keys(view, "q")
    wait_for(lambda: "left$ seq" not in outer.capture(view), what="the pane's screen back")
    outer.send_keys(view, "C-b", "d")
    outer.wait_shown(view, "[detached from window")


def test_a_read_only_client_may_scroll_back_and_pastes_nothing(
    service: Service, outer: OuterTmux
) -> None:
    pane = shell_that_printed(service, "watched", "seq 2000 2100", "2100")
    line = "MUX_MODE_KEYS=vi " + outer.muxctl_line("attach", "--read-only", str(pane))
    view = outer.open(line, rows=24, cols=80)
    outer.tmux("set-option", "-g", "set-clipboard", "on")
    outer.wait_shown(view, "watched$")
    outer.send_keys(view, "C-b", "[")
    outer.send_keys(view, "g", "v", "y")  # the first character of the history, copied
    wait_for(lambda: outer.tmux("show-buffer", check=False).stdout == "w", what="a copy")
    outer.wait_shown(view, "watched$")
    outer.send_keys(view, "C-b", "]")  # a read-only client sends nothing, a paste neither
    outer.send_keys(view, "C-b", "d")
    outer.wait_shown(view, f"[detached from pane {pane}")
    assert service.screen_text(pane).rstrip().endswith("watched$")
