"""The status line of a pane shown alone, through a real outer terminal (tmux): muxd
draws it on the last row while it writes the pane's output to the rows above, and the
terminal's own scrollback keeps what scrolls away (docs/windows.md#the-status-line)."""

from __future__ import annotations

from dbus_fast import Variant

from tests.harness import Service, wait_for
from tests.outer_tmux import OuterTmux

BASH = ["bash", "--norc", "--noprofile", "-i"]
ROWS, COLS = 24, 80


def _lone(service: Service, outer: OuterTmux, then: str = "") -> tuple[int, str]:
    """A pane attached alone in a new terminal, whose shell runs `then` after muxctl."""
    pane = service.spawn(BASH, env={"PS1": "mux$ "})
    service.wait_screen(pane, "mux$")
    line = outer.muxctl_line("attach", str(pane))
    if then:
        line = line.replace("exec sleep", f"{then}; exec sleep")
    term = outer.open(line, rows=ROWS, cols=COLS)
    outer.wait_shown(term, f"│ {pane}: ")
    service.wait_size(pane, ROWS - 1, COLS, what="the pane a row shorter than the terminal")
    return pane, term


def _last_row(outer: OuterTmux, term: str) -> str:
    return outer.capture(term).split("\n")[ROWS - 1]


def test_output_scrolls_above_the_status_line_into_the_terminals_scrollback(
    service: Service, outer: OuterTmux
) -> None:
    pane, term = _lone(service, outer)
    assert _last_row(outer, term).startswith(" 0:bash*  │ "), _last_row(outer, term)
    outer.type_line(term, "seq 1 200")
    shown = outer.wait_shown(term, "\n200\nmux$")  # (the prompt follows seq's output)
    rows = shown.split("\n")
    assert rows[ROWS - 1].startswith(" 0:bash*"), "the status line stayed on the last row"
    assert rows[ROWS - 2].startswith("mux$"), "the prompt on the pane's last row"
    # What scrolled away is in the terminal's own history, in order.
    history = outer.tmux("capture-pane", "-p", "-t", term, "-S", "-300").stdout
    assert "\n".join(str(n) for n in range(1, 201)) in history
    assert "0:bash*" not in history.split("\n200\n")[0], "the status line never scrolled"
    coloured = outer.tmux("capture-pane", "-p", "-e", "-t", term).stdout.split("\n")[ROWS - 1]
    assert "\x1b[30m\x1b[42m" in coloured or "\x1b[30;42m" in coloured, repr(coloured)
    assert service.panes()[pane]["rows"] == ROWS - 1


def test_clears_resets_full_screen_programs_and_regions_leave_the_status_line(
    service: Service, outer: OuterTmux
) -> None:
    """What would reach the last row is kept off it (a scroll region, a cursor sent past
    the bottom) or followed by the status line drawn again (a clear, a reset, the
    alternate screen)."""
    _, term = _lone(service, outer)
    steps = [
        ("clear; echo cleared", "cleared"),
        (r"printf '\033[r\033[99;1Hbottom\n\nafter\n'", "after"),
        (r"printf '\033[?1049h\033[2J\033[99;1Hfull-screen'; read x", "full-screen"),
    ]
    for command, needle in steps:
        outer.type_line(term, command)
        wait_for(
            lambda n=needle: (
                n in outer.capture(term)  # type: ignore[misc]
                and _last_row(outer, term).startswith(" 0:bash*")
            ),
            what=f"{needle!r} and the status line after {command!r}",
        )
    rows = outer.capture(term).split("\n")
    assert rows[ROWS - 2].startswith("full-screen"), "row 99 is the pane's last row"
    outer.send_keys(term, "Enter")  # (leaves the alternate screen)
    outer.type_line(term, r"printf '\033c'; echo reset-done")
    wait_for(
        lambda: (
            "reset-done" in outer.capture(term) and _last_row(outer, term).startswith(" 0:bash*")
        ),
        what="the status line after a full reset",
    )
    outer.type_line(term, "seq 1 60")
    wait_for(
        lambda: (
            outer.capture(term).split("\n")[ROWS - 3] == "60"
            and _last_row(outer, term).startswith(" 0:bash*")
        ),
        what="scrolling above the status line again after the reset",
    )


def test_the_status_line_follows_muxd_and_goes_when_detached(
    service: Service, outer: OuterTmux
) -> None:
    pane, term = _lone(service, outer, then="seq 1 40; echo done-$((6*7))")
    window = service.panes()[pane]["window"]
    service.call("SetWindow", "ta{sv}", [window, {"title": Variant("s", "build\x1b[31m")}])
    outer.wait_shown(term, " 0:build\\x1b[31m*")  # (escaped: it came from a client)
    outer.send_keys(term, "C-\\")
    # The status line is gone, and the terminal scrolls whole again (what the shell runs
    # after muxctl scrolls its STATUS=0 away).
    wait_for(
        lambda: outer.capture(term).split("\n")[ROWS - 2].startswith("done-42"),
        what="output reaching the terminal's last row",
    )
    assert "0:build" not in outer.capture(term)


def test_status_false_leaves_the_pane_every_row(service: Service, outer: OuterTmux) -> None:
    (service.config_home / "mux").mkdir(exist_ok=True)
    (service.config_home / "mux" / "config.toml").write_text("status = false\n")
    pane = service.spawn(BASH, env={"PS1": "mux$ "})
    term = outer.open(outer.muxctl_line("attach", str(pane)), rows=ROWS, cols=COLS)
    outer.wait_shown(term, "mux$")
    service.wait_size(pane, ROWS, COLS, what="the pane on every row")
    assert "0:bash" not in outer.capture(term)
