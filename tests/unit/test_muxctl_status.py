"""`muxctl status` and `muxctl doctor` name the panes that were not restored and those
waiting to start, the service's status line counts them apart, and the read-only verbs'
"not running" answer (issue #31, point 4). A stand-in answers for the service here;
tests/integration/test_muxctl_not_restored.py and test_readonly_verbs.py use real ones."""

from __future__ import annotations

import argparse
import json
from types import SimpleNamespace
from typing import Any, cast

import pytest
from jeepney import MessageFlag, new_method_return
from jeepney.low_level import Message

from mux.lifecycle.status import status_line
from mux.panes.pane import Pane
from mux.protocol.names import EXIT_STATUS_NOT_STARTED
from mux.system.busaddr import BusChoice, BusKind
from muxctl.client import MuxClient
from muxctl.commands import doctor, status
from muxctl.errors import EXIT_NOT_RUNNING, NotRunning
from muxctl.main import build_parser
from muxctl.not_running import how_to_start, report_not_running
from muxctl.wire import Variant


def _pane(
    pane: int, state: str, exit_status: int = 0, argv: list[str] | None = None
) -> dict[str, Variant]:
    return {
        "id": Variant("t", pane),
        "state": Variant("s", state),
        "exit_status": Variant("i", exit_status),
        "argv": Variant("as", argv or ["sleep", "60"]),
    }


def _problem(pane: int, argv: list[str], reason: str) -> dict[str, Variant]:
    return {
        "id": Variant("t", pane),
        "argv": Variant("as", argv),
        "cwd": Variant("s", "/src"),
        "title": Variant("s", ""),
        "reason": Variant("s", reason),
    }


class FakeService:
    def __init__(self, panes: list[dict[str, Variant]], problems: list[dict[str, Variant]]) -> None:
        self.answers: dict[str, list[Any]] = {
            "ListPanes": [panes],
            "ListRestoreProblems": [problems],
            "ListHosts": [[]],
        }
        self.choice = BusChoice(BusKind.SESSION, "unix:path=/run/user/1000/bus")

    def call(self, member: str, *_: Any, **__: Any) -> list[Any]:
        return self.answers[member]

    def get_property(self, name: str) -> Any:
        return {"Version": "0.1.0", "Features": 0x200000}[name]

    def close(self) -> None:
        pass


PANES = [
    _pane(1, "running"),
    _pane(2, "exited", 3),
    _pane(7, "exited", EXIT_STATUS_NOT_STARTED, ["make", "-j8"]),
    _pane(4, "held", 0, ["vim", "main.c"]),
]
PROBLEMS = [_problem(7, ["make", "-j8"], "the program \x1b[31mno longer exists")]


def _status(*words: str) -> int:
    args = build_parser("status").parse_args(["status", *words])
    return status.run(args, cast(MuxClient, FakeService(PANES, PROBLEMS)))


def test_status_names_what_was_not_restored_and_what_waits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _status() == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "panes: 4 (1 running, 1 exited, 1 waiting to start, 1 not restored)"
    assert lines[3] == "not restored: pane 7 (make -j8): the program \\x1b[31mno longer exists"
    assert lines[4] == "waiting to start: pane 4 (vim main.c): muxctl start 4"


def test_status_json_counts_them_apart(capsys: pytest.CaptureFixture[str]) -> None:
    assert _status("--json") == 0
    answer = json.loads(capsys.readouterr().out)
    assert {k: answer[k] for k in ("panes", "running", "exited", "held", "not_restored")} == {
        "panes": 4,
        "running": 1,
        "exited": 1,
        "held": 1,
        "not_restored": 1,
    }
    assert answer["held_panes"] == [4]
    (problem,) = answer["not_restored_panes"]
    assert problem["id"] == 7 and problem["reason"].startswith("the program \x1b[31m")


def test_status_counts_as_before_when_every_pane_came_back() -> None:
    counts = status.pane_counts([{"state": "running"}, {"state": "exited", "exit_status": 0}])
    assert status.counts_line(counts) == "panes: 2 (1 running, 1 exited)"


def test_a_refused_session_is_named() -> None:
    refused = {"id": 0, "argv": [], "reason": "it is from a newer mux"}
    assert status.problem_line(refused) == "not restored: the saved session: it is from a newer mux"


def test_doctor_counts_a_pane_not_restored_as_a_problem() -> None:
    finding = doctor._not_restored({"id": 7, "argv": ["make", "-j8"], "reason": "gone"})
    assert finding.status == "warn"
    assert finding.check == "pane 7"
    assert finding.detail == "make -j8 was not restored: gone"
    assert "muxctl kill 7" in finding.fix
    session = doctor._not_restored({"id": 0, "argv": [], "reason": "malformed"})
    assert session.status == "fail" and "malformed" in session.detail


def test_doctor_prints_a_finding_escaped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    finding = doctor._not_restored({"id": 7, "argv": ["a\nb"], "reason": "\u202egone"})
    monkeypatch.setattr(doctor, "_config", lambda: finding)
    monkeypatch.setattr(doctor, "_runtime_dir", lambda: finding)
    monkeypatch.setattr(doctor, "_systemd", lambda: [])
    monkeypatch.setattr(doctor, "_service", lambda: [])
    doctor.run(argparse.Namespace(json=False))
    out = capsys.readouterr().out
    assert "\u202e" not in out
    assert "warn  pane 7: 'a\\x0ab' was not restored: \\u202egone" in out.splitlines()


# -- the service's status line (systemctl --user status mux) ----------------------------


def _service_pane(state: str, exit_status: int = 0) -> Pane:
    return cast(
        Pane, SimpleNamespace(state=state, exit_status=exit_status, is_running=state == "running")
    )


def test_the_status_line_names_held_and_not_restored_panes() -> None:
    panes = [
        _service_pane("running"),
        _service_pane("exited", 1),
        _service_pane("held"),
        _service_pane("exited", EXIT_STATUS_NOT_STARTED),
    ]
    assert status_line(panes, "session", 1) == (
        "4 panes (1 running, 1 exited, 1 waiting to start, 1 not restored); "
        "1 could not be restored; session bus"
    )


def test_the_status_line_as_before() -> None:
    assert status_line([_service_pane("running")], "user") == "1 pane; user bus"
    two = [_service_pane("running"), _service_pane("exited", 0)]
    assert status_line(two, "user") == "2 panes (1 running, 1 exited); user bus"
    assert status_line([], "private") == "0 panes; private bus"


# -- not running ------------------------------------------------------------------------


def test_a_read_only_verb_says_how_to_start_mux(capsys: pytest.CaptureFixture[str]) -> None:
    error = NotRunning("mux is not running (no bus answers)")
    assert report_not_running(argparse.Namespace(json=True), error) == EXIT_NOT_RUNNING
    captured = capsys.readouterr()
    assert captured.out == "", "errors are never JSON"
    assert captured.err == f"muxctl: mux is not running (no bus answers); {how_to_start()}\n"
    assert "systemctl --user start mux" in how_to_start("linux")
    assert "muxctl where" in how_to_start("darwin")


def test_status_not_running_answers_json_and_the_exit_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = argparse.Namespace(json=True)
    assert status.report_not_running(args, NotRunning("mux is not running")) == EXIT_NOT_RUNNING
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"active": False}
    assert "systemctl --user start mux" in captured.err


def test_not_running_is_its_own_exit_status() -> None:
    assert NotRunning("x").exit_status == EXIT_NOT_RUNNING == 4


@pytest.mark.parametrize("verb", ["ls", "status", "windows", "capture", "snapshots"])
def test_the_read_only_verbs_never_start_mux(verb: str) -> None:
    from muxctl.commands import load

    command = load(verb)
    assert command.starts_service is False  # type: ignore[union-attr]
    assert command.report_not_running is not None  # type: ignore[union-attr]


# -- NO_AUTO_START on every call of a client that must not start mux --------------------


class RecordingConnection:
    def __init__(self) -> None:
        self.sent: list[Message] = []

    def send_and_get_reply(self, message: Message) -> Message:
        self.sent.append(message)
        return new_method_return(message, "aa{sv}", ([],))


@pytest.mark.parametrize("auto_start", [True, False])
def test_calls_carry_no_auto_start_unless_mux_may_be_started(auto_start: bool) -> None:
    connection = RecordingConnection()
    client = MuxClient(cast(Any, connection), BusChoice(BusKind.SESSION, "unix:path=/x"))
    client.auto_start = auto_start
    client.call("ListPanes")
    (sent,) = connection.sent
    assert bool(sent.header.flags & MessageFlag.no_auto_start) is not auto_start
