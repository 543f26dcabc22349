"""The repaint `muxctl attach` draws first, in a real terminal (a tmux window plays the
user's): it uses only what every xterm-compatible terminal understands (issue #32).

tmux, as the outer terminal, repeats only ASCII characters for REP (`CSI n b`), like
other terminals that support it partly or not at all: a repaint that leaned on REP
would show a curses program's box border as one `─`, and the program, which redraws
only what it thinks changed, would never mend it.
"""

from __future__ import annotations

from tests.harness import Service, wait_for
from tests.outer_tmux import OuterTmux

BORDER = "┌" + "─" * 40 + "┐"
ROW = "│" + " " * 40 + "│"
BOTTOM = "└" + "═" * 40 + "┘"
AFTER = "x" * 30  # ASCII repeated too: REP-free whatever the character


def test_a_box_drawn_before_the_attach_is_repainted_whole(
    service: Service, outer: OuterTmux
) -> None:
    script = f"printf '%s\\n' '{BORDER}' '{ROW}' '{BOTTOM}' '{AFTER}'; echo drawn; exec sleep 600"
    pane = service.spawn(["sh", "-c", script])
    service.wait_screen(pane, "drawn")
    window = outer.open(outer.muxctl_line("attach", str(pane)), rows=24, cols=80)
    shown = outer.wait_shown(window, "drawn")
    lines = [line.rstrip() for line in shown.splitlines()]
    assert lines[:4] == [BORDER, ROW, BOTTOM, AFTER], shown


# What a program left set, and the outer terminal's own flags for it (tmux's formats).
MODES = {
    "\x1b[?1049h": "alternate_on",  # the alternate screen
    "\x1b[?1h": "keypad_cursor_flag",  # application cursor keys
    "\x1b=": "keypad_flag",  # application keypad
    "\x1b[?1002h": "mouse_button_flag",  # mouse reporting, with drags
    "\x1b[?1006h": "mouse_sgr_flag",  # ... SGR-encoded
    "\x1b[4h": "insert_flag",  # insert mode
}


def test_a_repaint_puts_back_the_programs_modes_and_character_set(
    service: Service, outer: OuterTmux
) -> None:
    """A terminal attached after a program set its modes and chose DEC line drawing
    for G0 is left in those modes: its keys, mouse and later output work as they did in
    the program's own terminal (the box it drew, and `qqq` printed after the attach as
    `───`)."""
    setup = "".join(MODES) + "\x1b(0lqqk\r\n"
    script = f"printf '{setup}'; echo DRAWN; read line; printf 'qqq'; exec sleep 600"
    pane = service.spawn(["sh", "-c", script])
    service.wait_screen(pane, "DRAWN")  # (capitals: the same in DEC line drawing)
    window = outer.open(outer.muxctl_line("attach", str(pane)), rows=24, cols=80)
    shown = outer.wait_shown(window, "DRAWN")
    assert "┌──┐" in shown
    flags = " ".join(f"#{{{flag}}}" for flag in MODES.values())
    assert outer.tmux("display-message", "-p", "-t", window, flags).stdout.split() == ["1"] * len(
        MODES
    )
    outer.send_keys(window, "Enter")  # the program prints on, the character set still G0's
    # (tmux's capture shows a cell drawn from the line-drawing set as SO and the letter.)
    shown_as = ("capture-pane", "-p", "-e", "-t", window)
    wait_for(lambda: "\x0eqqq" in outer.tmux(*shown_as).stdout, what="qqq drawn as ───")
