"""The mouse in `muxctl attach`'s window view through a real terminal
(docs/windows.md#the-mouse): a tmux window plays the user's terminal; the reports a
terminal sends for clicks, drags and the wheel (SGR, as asked) go in with send-keys;
what comes of them is read from muxd (ListWindows) and from the screen."""

from __future__ import annotations

import sys

from dbus_fast import Variant

from tests.harness import Service, wait_for
from tests.integration.test_window_view import BASH, layout, side_by_side
from tests.outer_tmux import OuterTmux

# A program that asks for the mouse (as vim's `mouse=a` does: normal tracking, SGR
# encoding), or for the alternate screen alone (as less), and shows what it reads.
ECHO = """
import os, sys, tty
tty.setraw(0)
sys.stdout.write(sys.argv[1] + "READY\\r\\n")
sys.stdout.flush()
while True:
    sys.stdout.write(repr(os.read(0, 1024)) + "\\r\\n")
    sys.stdout.flush()
"""
WANTS_MOUSE = "\x1b[?1000h\x1b[?1006h"
ALTERNATE_SCREEN = "\x1b[?1049h"


def report(button: int, row: int, col: int, end: str = "M") -> str:
    """What a terminal sends for a mouse event at (row, col), 1-based (SGR encoding)."""
    return f"\x1b[<{button};{col};{row}{end}"


def mouse_asked(outer: OuterTmux, view: str) -> bool:
    flag = outer.tmux("display-message", "-p", "-t", view, "#{mouse_any_flag}").stdout
    return flag.strip() == "1"


def with_program_right(service: Service, modes: str) -> tuple[int, int, int]:
    """A bash pane on the left, the echoing program (asking for `modes`) on the right."""
    left = service.spawn(BASH, env={"PS1": "left$ "})
    window = int(service.panes()[left]["window"])
    argv = [sys.executable, "-c", ECHO, modes]
    options = {"argv": Variant("as", argv)}
    right, _, _ = service.call("SplitPane", "tsda{sv}", [left, "horizontal", 0.5, options])
    service.wait_screen(int(right), "READY")
    return window, left, int(right)


def test_a_click_focuses_and_a_border_dragged_resizes(service: Service, outer: OuterTmux) -> None:
    """At 81 columns the border is on column 41 (1-based); panes take 23 rows."""
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    wait_for(lambda: mouse_asked(outer, view), what="the terminal asked for the mouse")
    assert layout(service, window)["focus"] == left
    outer.send_keys(view, "-l", report(0, 5, 60) + report(0, 5, 60, "m"))
    wait_for(lambda: layout(service, window)["focus"] == right, what="the click's focus")

    outer.send_keys(view, "-l", report(0, 10, 41) + report(32, 10, 35) + report(32, 10, 31))
    outer.send_keys(view, "-l", report(0, 10, 31, "m"))
    wait_for(lambda: service.panes()[left]["cols"] == 30, what="the left pane 30 wide")
    assert service.panes()[right]["cols"] == 50
    ratios = layout(service, window)["layout"]
    assert isinstance(ratios, dict) and abs(ratios["ratios"][0] - 30 / 80) < 1e-9
    outer.send_keys(view, "-l", "echo typed")  # the keys still go to the focused pane
    outer.send_keys(view, "Enter")
    service.wait_screen(right, "typed")
    outer.send_keys(view, "C-b", "d")
    outer.wait_shown(view, "STATUS=0")
    assert not mouse_asked(outer, view)  # the terminal's mouse is its own again


def test_the_wheel_scrolls_back_and_down_again(service: Service, outer: OuterTmux) -> None:
    window, left, right = side_by_side(service)
    service.call("SendInput", "tay", [left, b"seq 1000 1100\n"])
    service.wait_screen(left, "1100")
    view = outer.open(outer.muxctl_line("attach", str(right)), rows=24, cols=81)
    outer.wait_shown(view, "1100")
    assert "1040" not in outer.capture(view)
    for _ in range(8):  # 40 lines up, over the left pane (it takes the focus)
        outer.send_keys(view, "-l", report(64, 5, 10))
    shown = outer.wait_shown(view, "1040")
    assert "right$" in shown  # copy mode covers the left pane only
    assert layout(service, window)["focus"] == left
    for _ in range(8):  # back down to the bottom: copy mode ends
        outer.send_keys(view, "-l", report(65, 5, 10))
    wait_for(lambda: "1040" not in outer.capture(view), what="copy mode ended at the bottom")
    outer.send_keys(view, "-l", "echo after")
    outer.send_keys(view, "Enter")
    service.wait_screen(left, "after")


def test_a_program_that_asked_for_the_mouse_gets_it_in_its_own_coordinates(
    service: Service, outer: OuterTmux
) -> None:
    window, left, right = with_program_right(service, WANTS_MOUSE)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "READY")
    # Column 61 of the terminal is column 20 of the right pane (it starts at 42).
    outer.send_keys(view, "-l", report(0, 5, 61) + report(0, 5, 61, "m"))
    outer.wait_shown(view, "\\x1b[<0;20;5M")
    outer.wait_shown(view, "\\x1b[<0;20;5m")
    assert layout(service, window)["focus"] == right  # a click focuses it too
    outer.send_keys(view, "-l", report(65, 3, 50))
    outer.wait_shown(view, "\\x1b[<65;9;3M")  # the wheel is the program's, not copy mode's


def test_the_wheel_over_the_alternate_screen_is_arrow_keys(
    service: Service, outer: OuterTmux
) -> None:
    """A program on the alternate screen that did not ask for the mouse (less, man)
    gets the wheel as arrow keys, three a turn."""
    _window, left, _right = with_program_right(service, ALTERNATE_SCREEN)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "READY")
    outer.send_keys(view, "-l", report(64, 5, 61))
    outer.wait_shown(view, "'\\x1b[A\\x1b[A\\x1b[A'")


def test_mouse_false_leaves_the_mouse_to_the_terminal(service: Service, outer: OuterTmux) -> None:
    _window, left, _right = side_by_side(service)
    (service.config_home / "mux").mkdir(exist_ok=True)
    (service.config_home / "mux" / "config.toml").write_text("mouse = false\n")
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    outer.send_keys(view, "C-b", "z")  # (a command done: the view is running)
    outer.wait_shown(view, "Z")
    assert not mouse_asked(outer, view)


def test_a_click_on_the_status_line_shows_that_window(service: Service, outer: OuterTmux) -> None:
    _window, left, _right = side_by_side(service)
    other = service.spawn(BASH, env={"PS1": "other$ "})
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    status = outer.wait_shown(view, "1:bash").split("\n")[23]
    column = status.index(" 1:bash") + 2  # (1-based, on the "1")
    outer.send_keys(view, "-l", report(0, 24, column) + report(0, 24, column, "m"))
    outer.wait_shown(view, "other$")
    outer.wait_shown(view, "1:bash*")
    assert "left$" not in outer.capture(view)
    assert service.panes()[other]["cols"] == 81
