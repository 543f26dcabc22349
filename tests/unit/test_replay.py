"""Typing a checkpointed command again into a restored shell: the phases of a replay and
which commands may be replayed
(docs/resurrection-protocol.md#shell-launches-replaying-the-command)."""

from __future__ import annotations

import pytest

from mux.panes.replay import CommandReplay, Step, replayable


def test_the_first_prompt_types_the_command_and_its_own_marker_starts_it() -> None:
    replay = CommandReplay("notes ~/n.txt", checkpoint_generation=3)
    assert (replay.phase, replay.pending) == ("WAITING", True)
    assert replay.marker("A") is Step.TYPE
    assert (replay.phase, replay.pending) == ("TYPED", True)  # typed, not yet running
    assert replay.marker("C") is None  # the replayed command's own marker
    assert (replay.phase, replay.pending) == ("RUNNING", False)
    assert replay.command == "notes ~/n.txt"
    assert replay.checkpoint_generation == 3


@pytest.mark.parametrize(
    "markers",
    [
        ["A", "C", "A"],  # a later prompt
        ["A", "C", "C"],  # a later command
        ["A", "A"],  # a prompt again before the command ran
        ["C"],  # a command before the first prompt: not the replay's
    ],
)
def test_any_later_prompt_or_command_means_the_user_moved_on(markers: list[str]) -> None:
    replay = CommandReplay("notes", checkpoint_generation=None)
    steps = [replay.marker(kind) for kind in markers]
    assert steps[-1] is Step.WITHDRAW


def test_other_markers_change_nothing() -> None:
    replay = CommandReplay("notes", checkpoint_generation=1)
    for kind in ("B", "D", "", "P"):
        assert replay.marker(kind) is None
        assert replay.phase == "WAITING"
    assert replay.marker("A") is Step.TYPE
    assert replay.marker("D") is None
    assert replay.phase == "TYPED"


def test_withdrawing_keeps_withdrawing() -> None:
    replay = CommandReplay("notes", checkpoint_generation=1)
    replay.marker("A")
    replay.marker("C")
    assert [replay.marker(kind) for kind in ("A", "C", "A")] == [Step.WITHDRAW] * 3


@pytest.mark.parametrize("phase", ["WAITING", "TYPED", "RUNNING"])
def test_a_replay_resumes_in_its_phase_after_an_upgrade(phase: str) -> None:
    before = CommandReplay("htop", checkpoint_generation=7)
    for kind in {"WAITING": [], "TYPED": ["A"], "RUNNING": ["A", "C"]}[phase]:
        before.marker(kind)
    assert before.phase == phase
    after = CommandReplay.resumed(before.command, before.checkpoint_generation, before.phase)
    assert (after.command, after.checkpoint_generation, after.phase, after.pending) == (
        "htop",
        7,
        phase,
        phase != "RUNNING",
    )
    # It goes on from there as the original would.
    assert after.marker("A") == before.marker("A")


def test_an_unknown_phase_is_not_resumed() -> None:
    with pytest.raises(KeyError):
        CommandReplay.resumed("htop", None, "FINISHED")


@pytest.mark.parametrize(
    ("command", "checkpointed", "expected"),
    [
        ("notes --resume", True, True),  # holds a checkpoint: replayed whatever it is
        ("./my-editor 'a b'", True, True),
        ("htop", False, True),  # in the allowlist
        ("/usr/bin/htop -d 5", False, True),  # by its base name
        ("less README", False, True),
        ("vim notes", False, False),  # neither checkpointed nor allowed
        ("htopx", False, False),
        ("env htop", False, False),  # the first word is what counts
        ("", True, False),
        (None, True, False),
        ("notes\nrm -rf ~", True, False),  # never more than one line
        ("notes\rrm", True, False),
        ("htop 'unterminated", False, False),  # cannot be split: not replayed
        ("   ", False, False),  # no words
    ],
)
def test_which_commands_are_replayable(
    command: str | None, checkpointed: bool, expected: bool
) -> None:
    assert replayable(command, checkpointed, ["htop", "less"]) is expected


def test_the_allowlist_may_be_any_iterable_and_empty() -> None:
    assert replayable("htop", False, iter(["htop"]))
    assert not replayable("htop", False, [])
