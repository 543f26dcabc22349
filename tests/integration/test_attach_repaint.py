"""The repaint `muxctl attach` draws first, in a real terminal (a tmux window plays the
user's): it uses only what every xterm-compatible terminal understands (issue #32).

tmux, as the outer terminal, repeats only ASCII characters for REP (`CSI n b`), like
other terminals that support it partly or not at all: a repaint that leaned on REP
would show a curses program's box border as one `─`, and the program, which redraws
only what it thinks changed, would never mend it.
"""

from __future__ import annotations

from tests.harness import Service
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
