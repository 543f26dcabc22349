"""mux's screens against a real tmux's, screen for screen, on the same bytes at the same
sizes (issue #32): a program prints, then sleeps; both panes are resized the same way,
and what each shows (`GetScreen`, `tmux capture-pane -p`) must be the same."""

from __future__ import annotations

import shlex
import sys
import unicodedata

import pytest

from tests.harness import Service, wait_for
from tests.outer_tmux import OuterTmux

LONG = "x" * 50 + "y" * 20  # a line wrapped at 40 columns (and at 30)


def printing(text: str) -> list[str]:
    """A program that prints `text` and then sleeps (it never redraws on a resize)."""
    script = f"import sys, time; sys.stdout.write({text!r}); sys.stdout.flush(); time.sleep(600)"
    return [sys.executable, "-c", script]


def trimmed(lines: list[str]) -> list[str]:
    """Without trailing blanks, and composed (NFC): tmux gives a letter and its mark back
    as two code points, mux as one (é), the same on a terminal."""
    lines = [unicodedata.normalize("NFC", line.rstrip()) for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def side_by_side(
    service: Service, outer: OuterTmux, text: str, rows: int, cols: int
) -> tuple[int, str]:
    argv = printing(text)
    pane = service.spawn(argv, rows=rows, cols=cols)
    window = outer.open(shlex.join(argv), rows=rows, cols=cols)
    outer.tmux("set-option", "-t", window, "status", "off")
    last = text.rstrip().rsplit("\n", 1)[-1].strip()
    service.wait_screen(pane, last)
    outer.wait_shown(window, last)
    return pane, window


def same_after(
    service: Service, outer: OuterTmux, both: tuple[int, str], size: tuple[int, int]
) -> list[str]:
    """Both resized to `size` (rows, cols); the screens once the same (else says how
    they differ). `both`: mux's pane, tmux's window."""
    (pane, window), (rows, cols) = both, size
    if (rows, cols) != (0, 0):
        service.call("Resize", "tqq", [pane, rows, cols])
        outer.resize(window, rows, cols)

    def same() -> list[str] | None:
        ours = trimmed(service.screen(pane))
        theirs = trimmed(outer.capture(window).split("\n"))
        return ours if ours == theirs else None

    try:
        return wait_for(same, timeout=5, what=f"the same screens at {rows}x{cols}")
    except AssertionError:
        ours = trimmed(service.screen(pane))
        theirs = trimmed(outer.capture(window).split("\n"))
        raise AssertionError(f"at {rows}x{cols}\nmux:  {ours}\ntmux: {theirs}") from None


@pytest.mark.parametrize(
    "sizes",
    [
        [(6, 30), (6, 40)],  # narrowed, widened: the wrapped line whole again, nothing lost
        [(10, 40)],  # grown taller: the lines above the screen come back into it
        [(6, 30), (9, 30), (6, 40)],
    ],
)
def test_a_resize_rewraps_and_keeps_the_lines_above(
    service: Service, outer: OuterTmux, sizes: list[tuple[int, int]]
) -> None:
    text = "".join(f"line {n}\n" for n in range(1, 8)) + LONG + "\nend$ "
    both = side_by_side(service, outer, text, 6, 40)
    for size in sizes:
        shown = same_after(service, outer, both, size)
        assert shown[-1].startswith("end$")


@pytest.mark.parametrize(
    ("text", "expected_first_row"),
    [
        # A mark after the last column joins the last character (xterm and tmux: Ć).
        ("C" * 40 + "\u0301" + "\nend$ ", "C" * 39 + "Ć"),
        # A mark takes no cell: the cursor moved to column 3 lands on `c`.
        ("ae\u0301c\x1b[1;3HZ\nend$ ", "aéZ"),
        # Marks that compose with their letter, one after another.
        ("e\u0301 a\u0300 n\u0303|\nend$ ", "é à ñ|"),
    ],
)
def test_combining_marks_take_no_cell(
    service: Service, outer: OuterTmux, text: str, expected_first_row: str
) -> None:
    both = side_by_side(service, outer, text, 6, 40)
    shown = same_after(service, outer, both, (0, 0))
    assert shown[0] == expected_first_row


def test_a_mark_with_no_composed_form_is_left_out_and_nothing_moves(
    service: Service, outer: OuterTmux
) -> None:
    """`b` U+0301 has no composed form: tmux keeps the accent on the `b` (ab́Z), mux's
    screen leaves it out (abZ) — its emulator would give the mark a cell of its own and
    write Z over it, leaving `c` (abZc, as before) — so every other character is where
    the terminal has it."""
    pane = service.spawn(printing("ab\u0301c\x1b[1;3HZ\nend$ "), rows=6, cols=40)
    service.wait_screen(pane, "end$")
    assert trimmed(service.screen(pane)) == ["abZ", "end$"]
