"""The verbs of the snapshot history and held panes (SPEC §13): `snapshots`, `restore`,
`start`, `forget-contents` — their arguments, what they send and what they print, with a
stand-in for the service (tests/integration/test_muxctl_history_verbs.py runs them
against a real muxd)."""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator
from typing import Any, cast

import pytest

from muxctl.client import MuxClient
from muxctl.commands import VERBS, load, restore, snapshots, start
from muxctl.errors import EXIT_PRECONDITION, EXIT_USAGE, CtlError, RemoteError
from muxctl.main import build_parser, main
from muxctl.wire import Variant

PRECONDITION = "org.mux.Mux1.Error.PreconditionFailed"


class FakeService:
    """Answers as the Manager would, and keeps what it was asked."""

    def __init__(self, answers: dict[str, list[Any]], refuse: dict[int, str] | None = None):
        self.answers = answers
        self.refuse = refuse or {}
        self.calls: list[tuple[str, str | None, list[Any]]] = []

    def call(
        self, member: str, signature: str | None = None, body: list[Any] | None = None
    ) -> list[Any]:
        self.calls.append((member, signature, body or []))
        if member == "Start" and body and body[0] in self.refuse:
            raise RemoteError(PRECONDITION, self.refuse[body[0]])
        return self.answers.get(member, [])


def _args(verb: str, *words: str) -> argparse.Namespace:
    args = build_parser(verb).parse_args([verb, *words])
    command = args.command_entry
    if command.check is not None:
        command.check(args)
    return args


def _run(verb: str, service: FakeService, *words: str) -> int:
    args = _args(verb, *words)
    status: int = args.command_entry.run(args, cast(MuxClient, service))
    return status


def _v(signature: str, value: Any) -> Variant:
    return Variant(signature, value)


@pytest.fixture
def utc() -> Iterator[None]:
    """Local time is UTC here, so the times printed are the ones asserted."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_the_new_verbs_are_registered() -> None:
    for verb in ("snapshots", "restore", "start", "forget-contents"):
        assert verb in VERBS
        assert load(verb).name == verb


def test_snapshots_never_starts_mux_and_the_others_may() -> None:
    assert load("snapshots").starts_service is False  # type: ignore[union-attr]
    assert load("snapshots").report_not_running is not None  # type: ignore[union-attr]
    for verb in ("restore", "start", "forget-contents"):
        assert load(verb).starts_service is True  # type: ignore[union-attr]


# -- snapshots --------------------------------------------------------------------------


def _snapshot(generation: int, when: int, summary: str, size: int = 2048) -> dict[str, Any]:
    return {
        "generation": _v("t", generation),
        "time": _v("x", when),
        "panes": _v("u", 3),
        "windows": _v("u", 2),
        "hosts": _v("as", []),
        "bytes": _v("t", size),
        "summary": _v("s", summary),
    }


def test_snapshots_lists_newest_first_in_local_time(
    utc: None, capsys: pytest.CaptureFixture[str]
) -> None:
    service = FakeService(
        {
            "ListSnapshots": [
                [
                    _snapshot(4, 1_700_000_000, "vim, make"),
                    _snapshot(9, 1_700_003_600, "vim, htop", 3 * 1024 * 1024),
                ]
            ]
        }
    )
    assert _run("snapshots", service) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["GENERATION", "TIME", "PANES", "WINDOWS", "SIZE", "SUMMARY"]
    assert lines[1].split() == [
        "9",
        "2023-11-14",
        "23:13:20",
        "3",
        "2",
        "3.0",
        "MiB",
        "vim,",
        "htop",
    ]
    assert lines[2].split() == [
        "4",
        "2023-11-14",
        "22:13:20",
        "3",
        "2",
        "2.0",
        "KiB",
        "vim,",
        "make",
    ]
    assert service.calls == [("ListSnapshots", None, [])]


def test_snapshots_json_is_the_records(capsys: pytest.CaptureFixture[str]) -> None:
    service = FakeService({"ListSnapshots": [[_snapshot(4, 100, "a"), _snapshot(5, 200, "b")]]})
    assert _run("snapshots", service, "--json") == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["generation"] for r in records] == [5, 4]
    assert records[0] == {
        "generation": 5,
        "time": 200,
        "panes": 3,
        "windows": 2,
        "hosts": [],
        "bytes": 2048,
        "summary": "b",
    }


def test_snapshots_escapes_a_summary_for_a_person(capsys: pytest.CaptureFixture[str]) -> None:
    service = FakeService({"ListSnapshots": [[_snapshot(1, 100, "vim \x1b]52;c;x\x07 \u202e")]]})
    assert _run("snapshots", service) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "\\x1b]52;c;x\\x07 \\u202e" in out


def test_snapshots_with_an_empty_history(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("snapshots", FakeService({"ListSnapshots": [[]]})) == 0
    assert capsys.readouterr().out == "no snapshots in the history yet\n"


@pytest.mark.parametrize(
    ("count", "shown"),
    [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"), (5 << 30, "5.0 GiB")],
)
def test_sizes_for_a_person(count: int, shown: str) -> None:
    assert snapshots.size(count) == shown


def test_a_time_no_calendar_can_show_is_printed_as_seconds() -> None:
    assert snapshots.local_time(1 << 62) == str(1 << 62)


# -- restore ---------------------------------------------------------------------------


def test_restore_sends_the_generation_the_panes_and_dry_run() -> None:
    service = FakeService({"RestoreSnapshot": [[]]})
    _run("restore", service, "12", "--pane", "3", "4", "--pane", "3", "--dry-run")
    ((member, signature, body),) = service.calls
    assert (member, signature) == ("RestoreSnapshot", "ta{sv}")
    assert body == [12, {"panes": _v("at", [3, 4]), "dry_run": _v("b", True)}]


def test_restore_without_panes_restores_all() -> None:
    service = FakeService({"RestoreSnapshot": [[]]})
    _run("restore", service, "7")
    assert service.calls[0][2] == [7, {"dry_run": _v("b", False)}]


@pytest.mark.parametrize(
    ("words", "needle"),
    [
        (("x",), "a generation is a whole number"),
        (("-1",), "a generation is between 0 and"),
        ((str(1 << 64),), "a generation is between 0 and"),
        (("3", "--pane", "seven"), "a pane id is a whole number"),
        ((), "required: generation"),
    ],
)
def test_restore_refuses_bad_arguments(
    words: tuple[str, ...], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["restore", *words])
    assert exit.value.code == EXIT_USAGE
    assert needle in capsys.readouterr().err


def _started(pane: int, argv: list[str], cwd: str, window: int) -> dict[str, Variant]:
    return {
        "pane": _v("t", pane),
        "argv": _v("as", argv),
        "cwd": _v("s", cwd),
        "window": _v("t", window),
    }


def test_restore_prints_what_started(capsys: pytest.CaptureFixture[str]) -> None:
    answer = [_started(14, ["vim", "a b.c"], "/src", 5), _started(15, ["make"], "/src", 5)]
    assert _run("restore", FakeService({"RestoreSnapshot": [answer]}), "9") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "started 2 panes from generation 9"
    assert lines[1].split() == ["PANE", "WINDOW", "CWD", "COMMAND"]
    assert lines[2].split() == ["14", "5", "/src", "vim", "'a", "b.c'"]
    assert lines[3].split() == ["15", "5", "/src", "make"]


def test_restore_dry_run_prints_what_would_start(capsys: pytest.CaptureFixture[str]) -> None:
    answer = [_started(0, ["htop"], "/home/ada", 2)]
    assert _run("restore", FakeService({"RestoreSnapshot": [answer]}), "9", "--dry-run") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "generation 9 would start 1 pane (dry run: nothing started)"
    assert lines[2].split() == ["-", "2", "/home/ada", "htop"]


def test_restore_with_nothing_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("restore", FakeService({"RestoreSnapshot": [[]]}), "9") == 0
    assert (
        capsys.readouterr().out == "generation 9: nothing to start (what it holds runs already)\n"
    )


def test_restore_json(capsys: pytest.CaptureFixture[str]) -> None:
    answer = [_started(0, ["htop"], "/", 2)]
    _run("restore", FakeService({"RestoreSnapshot": [answer]}), "9", "--dry-run", "--json")
    assert json.loads(capsys.readouterr().out) == {
        "generation": 9,
        "dry_run": True,
        "panes": [{"pane": 0, "argv": ["htop"], "cwd": "/", "window": 2}],
    }


def test_restore_escapes_what_a_saved_session_holds(capsys: pytest.CaptureFixture[str]) -> None:
    answer = [_started(3, ["printf", "\x1b[2J"], "/tmp/\u202edir", 1)]
    _run("restore", FakeService({"RestoreSnapshot": [answer]}), "9")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert restore.lines(9, False, [])[1] == []


# -- start -----------------------------------------------------------------------------


def _pane(pane: int, state: str) -> dict[str, Variant]:
    return {"id": _v("t", pane), "state": _v("s", state), "exit_status": _v("i", 0)}


def test_start_one_pane(capsys: pytest.CaptureFixture[str]) -> None:
    service = FakeService({})
    assert _run("start", service, "6") == 0
    assert service.calls == [("Start", "t", [6])]
    assert capsys.readouterr().out == "started pane 6\n"


def test_start_all_starts_every_held_pane_and_only_those(
    capsys: pytest.CaptureFixture[str],
) -> None:
    panes = [_pane(1, "running"), _pane(5, "held"), _pane(2, "held"), _pane(3, "exited")]
    service = FakeService({"ListPanes": [panes]})
    assert _run("start", service, "--all", "--json") == 0
    assert service.calls[1:] == [("Start", "t", [2]), ("Start", "t", [5])]
    assert json.loads(capsys.readouterr().out) == {"started": [2, 5]}


def test_start_all_goes_on_past_a_pane_that_cannot_start(
    capsys: pytest.CaptureFixture[str],
) -> None:
    panes = [_pane(2, "held"), _pane(5, "held")]
    service = FakeService({"ListPanes": [panes]}, refuse={2: "pane 2 is not waiting to start"})
    assert _run("start", service, "--all") == EXIT_PRECONDITION
    captured = capsys.readouterr()
    assert captured.out == "started pane 5\n"
    assert captured.err == "muxctl: pane 2: pane 2 is not waiting to start\n"


def test_start_one_pane_that_cannot_start_is_its_error() -> None:
    service = FakeService({}, refuse={2: "pane 2 is not waiting to start"})
    with pytest.raises(CtlError) as refused:
        _run("start", service, "2")
    assert refused.value.exit_status == EXIT_PRECONDITION


def test_start_all_with_nothing_waiting(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("start", FakeService({"ListPanes": [[_pane(1, "running")]]}), "--all") == 0
    assert capsys.readouterr().out == "no pane is waiting to start\n"


@pytest.mark.parametrize(
    ("words", "needle"),
    [((), "give a pane id, or --all"), (("3", "--all"), "not allowed with"), (("x",), "pane id")],
)
def test_start_wants_one_pane_or_all(
    words: tuple[str, ...], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:  # argparse's own refusals exit; the verb's check returns the status
        status = main(["--no-start", "start", *words])
    except SystemExit as exit:
        status = int(str(exit.code))
    assert status == EXIT_USAGE
    assert needle in capsys.readouterr().err


def test_start_parses_either_form() -> None:
    assert start.check is not None  # (the module's function)
    assert _args("start", "7").id == 7
    assert _args("start", "--all").all is True


# -- forget-contents -------------------------------------------------------------------


def test_forget_contents(capsys: pytest.CaptureFixture[str]) -> None:
    service = FakeService({})
    assert _run("forget-contents", service) == 0
    assert service.calls == [("ForgetContents", None, [])]
    assert "wiped" in capsys.readouterr().out
    assert _run("forget-contents", service, "--json") == 0
    assert json.loads(capsys.readouterr().out) == {"forgotten": True}
