"""muxctl.view_question: y/n and typed answers on the window view's bottom row."""

from muxctl.view_question import Asked, Question


def test_y_does_it_and_any_other_key_does_not() -> None:
    done: list[str] = []
    question = Question()
    question.ask(Asked("kill pane 3? (y/n)"), done.append)
    assert b"kill pane 3? (y/n)" in question.overlay(24, 80)
    action = question.answer(b"y")
    assert action is not None and not question.pending()
    action()
    question.ask(Asked("again? (y/n)"), done.append)
    assert question.answer(b"n") is None and not question.pending()
    assert done == ["y"] and question.overlay(24, 80) == b""


def test_a_typed_answer_is_edited_then_given_with_enter() -> None:
    done: list[str] = []
    question = Question()
    question.ask(Asked("(rename-window) ", typed=True, initial="old"), done.append)
    assert question.answer(b"\x15new\x7fw-name") is None and question.pending()
    drawn = question.overlay(24, 80)
    assert b"(rename-window) new-name" in drawn
    assert drawn.endswith(b"\x1b[24;25H\x1b[?25h")  # the cursor after the answer
    action = question.answer(b"\r")
    assert action is not None
    action()
    assert done == ["new-name"]


def test_escape_gives_up_and_controls_are_not_typed() -> None:
    done: list[str] = []
    question = Question()
    question.ask(Asked("(rename-window) ", typed=True), done.append)
    question.answer(b"a\x01\x1b")
    assert not question.pending() and done == []
    title = "evil\u202e\x1b]52;c;x\x07"  # a title from muxd: shown escaped, never obeyed
    question.ask(Asked("(rename-window) ", typed=True, initial=title), done.append)
    question.answer("x\u202e".encode())  # (a bidi control is not typed)
    assert b"evil\\u202e\\x1b]52;c;x\\x07x\x1b[0m" in question.overlay(24, 80)


def test_the_answer_typed_so_far_is_known_while_typing() -> None:
    question = Question()
    question.ask(Asked(":", typed=True), lambda answer: None)
    question.answer(b"kill-pa\x7f\x7fpane")
    assert question.typed == "kill-pane" and question.pending()
