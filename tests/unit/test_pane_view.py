"""What can be seen of a pane, fed bytes: the lazy emulator and its batches, the repaint,
terminal queries answered only while nobody is attached, hibernation."""

import time

from mux.panes.pane_view import EMULATION_BATCH_BYTES, PaneView, notice_line
from mux.terminal.screen import Screen


def fed(view: PaneView, data: bytes, replies: list[bytes] | None = None) -> None:
    """The view's part of a pane's output path, in the pane's order."""
    view.scrollback.append(data)
    view.send_to_sinks(data)
    view.modes.feed(data)
    rest = view.answer_queries(data, (replies if replies is not None else []).append)
    view.queue_for_emulation(rest)


def test_output_waits_for_someone_to_look_at_the_screen() -> None:
    view = PaneView.blank(4, 20, 1 << 20)
    fed(view, b"hello")
    assert view.screen.lines()[0] == ""  # queued, not emulated
    assert view.scrollback.contents() == b"hello"  # the history has it at once
    assert view.screen_lines()[0] == "hello"  # a look catches up


def test_a_full_batch_is_emulated_without_anyone_looking() -> None:
    view = PaneView.blank(4, 20, 1 << 20)
    fed(view, b"\x1b[2J\x1b[Hbatched")
    fed(view, b"\x1b[0m" * (EMULATION_BATCH_BYTES // 4))  # passes the batch size
    assert view.screen.lines()[0] == "batched"


def test_a_repaint_redraws_the_same_screen_and_modes() -> None:
    view = PaneView.blank(4, 20, 1 << 20)
    fed(view, b"first\r\n\x1b[31msecond\x1b[0m\x1b[?2004h")
    repaint = view.repaint()
    assert b"\x1b[?2004h" in repaint  # bracketed paste, set again
    elsewhere = Screen(4, 20)
    elsewhere.feed(repaint)
    assert elsewhere.lines() == view.screen_lines() == ["first", "second", "", ""]


def test_a_repaint_leaves_an_unfinished_character_to_the_stream() -> None:
    view = PaneView.blank(4, 20, 1 << 20)
    euro = "€".encode()
    fed(view, b"price " + euro[:1])
    assert view.repaint().endswith(euro[:1])


def test_queries_are_answered_while_detached_with_the_screen_at_the_question() -> None:
    view = PaneView.blank(4, 20, 1 << 20)
    replies: list[bytes] = []
    fed(view, b"abc\x1b[6nlater", replies)
    assert replies == [b"\x1b[1;4R"]  # the cursor after "abc", not after "later"
    assert view.screen_lines()[0] == "abclater"


def test_queries_are_left_to_an_attached_clients_terminal() -> None:
    view = PaneView.blank(4, 20, 1 << 20)
    seen: list[bytes] = []
    view.add_output_sink(seen.append)
    replies: list[bytes] = []
    fed(view, b"abc\x1b[6n", replies)
    assert replies == []
    assert seen == [b"abc\x1b[6n"]
    view.remove_output_sink(seen.append)
    fed(view, b"\x1b[6n", replies)
    assert replies == [b"\x1b[1;4R"]


def test_an_idle_screen_hibernates_and_comes_back_the_same() -> None:
    view = PaneView.blank(4, 20, 1 << 20)
    fed(view, b"kept")
    assert view.screen_lines()[0] == "kept"  # used now
    now = time.monotonic()  # the clock of a screen's last use
    assert not view.hibernate_if_idle_since(now - 60)  # used within the last minute
    assert view.screen.is_live
    assert view.hibernate_if_idle_since(now + 60)  # a minute from now, it is idle
    assert not view.screen.is_live
    assert view.screen_lines()[0] == "kept"


def test_an_attached_screen_never_hibernates() -> None:
    view = PaneView.blank(4, 20, 1 << 20)
    view.add_output_sink(lambda data: None)
    fed(view, b"watched")
    view.catch_up_screen()
    assert not view.hibernate_if_idle_since(time.monotonic() + 3600)
    assert view.screen.is_live


def test_a_notice_is_a_dim_line_of_its_own() -> None:
    view = PaneView.blank(4, 30, 1 << 20)
    fed(view, notice_line("mux: restored"))
    assert view.screen_lines()[:2] == ["mux: restored", ""]
    assert view.scrollback.contents() == b"\x1b[2mmux: restored\x1b[0m\r\n"
