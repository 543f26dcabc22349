"""The window view's status line text (muxctl.status_line), from plain ListWindows and
ListPanes values."""

from muxctl.status_line import fit, status_text, window_at, window_parts

WINDOWS = [
    {"id": 7, "title": "", "focused_pane": 9},
    {"id": 3, "title": "build\x1b]2;x\x07", "focused_pane": 4},
]
PANES = [
    {"id": 4, "title": "", "argv": ["/usr/bin/make"], "cwd": "/home/u/src", "state": "running"},
    {"id": 9, "title": "vim notes", "argv": ["vim"], "cwd": "/tmp", "state": "running"},
    {"id": 11, "title": "", "argv": ["ssh"], "cwd": "/", "state": "held"},
]


def test_windows_by_index_the_shown_one_marked_and_the_focused_pane() -> None:
    line = status_text(WINDOWS, 3, PANES, 4, home="/home/u")
    assert line == (
        " 0:build\\x1b]2;x\\x07* 1:vim  │ 4: make · ~/src  │ 1 pane waiting to be restored"
    )


def test_the_host_after_the_directory() -> None:
    line = status_text(WINDOWS, 3, PANES, 4, home="/home/u", host="box\x1b[2J")
    assert "│ 4: make · ~/src @ box\\x1b[2J  │" in line


def test_zoomed_and_a_state() -> None:
    line = status_text(WINDOWS, 7, PANES, 9, zoomed=True, state="reattaching")
    assert line.startswith(" 0:build\\x1b]2;x\\x07 1:vim*Z  │ 9: vim notes · /tmp")
    assert line.endswith("│ reattaching")


def test_an_exited_focused_pane_is_marked_with_its_status() -> None:
    ended = [{**PANES[0], "state": "exited", "exit_status": -9}, *PANES[1:]]
    line = status_text(WINDOWS, 3, ended, 4, home="/home/u", host="box")
    assert "│ 4: make · ~/src @ box · exited (-9)  │" in line


def test_fit_counts_cells() -> None:
    assert fit("ab", 4) == "ab  "
    assert fit("日本語", 5) == "日本 ", "a wide character that does not fit is left out"
    assert fit("e\u0301x", 2) == "e\u0301x"


def test_a_column_names_the_window_written_there() -> None:
    wide = [*WINDOWS, {"id": 12, "title": "日本", "focused_pane": 4}]
    parts = window_parts(wide, 3, PANES)
    line = status_text(wide, 3, PANES, 4)
    assert line.startswith(" " + " ".join(part for _, part in parts))
    # " 0:build\x1b]2;x\x07* 1:vim 2:日本": 0 from column 1, 1 from 22, 2 from 28.
    assert [window_at(parts, col) for col in (0, 1, 20, 21, 22, 26, 27, 28, 33, 34)] == [
        None,
        3,
        3,
        None,
        7,
        7,
        None,
        12,
        12,
        None,
    ]
