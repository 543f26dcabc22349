"""Files on disk in every hostile shape (issue #30, finding 2): a real muxd starts, answers,
quarantines the session snapshot or a checkpoint with its reason, logs and leaves alone
hosts.json and upgrade.json, and loses nothing else (docs/paths.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from mux.federation.host_book import HOSTS_FILE
from mux.resurrection.checkpoints import CHECKPOINT_FILE
from mux.state.session_file import SESSION_FILE
from tests.harness import Service, assert_answers, pid_alive, wait_for

INVOCATION = "0123456789abcdef" * 2


def _shapes(max_bytes: int, number_at: bytes) -> dict[str, bytes]:
    """Each hostile shape of one kind of file; `number_at`: where a number goes in it."""
    return {
        "nested 200,000 deep": b'{"x": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
        "nested 30,000 deep": b'{"x": ' + b"[" * 30_000 + b"]" * 30_000 + b"}",  # (< 64 KiB)
        "a 5,000-digit number": number_at.replace(b"N", b"1" * 5000),
        "an array": b"[]",
        "a string": b'"x"',
        "null": b"null",
        "too large": b'{"x": "' + b"a" * max_bytes + b'"}',
        "not UTF-8": b'{"x": "\xff\xfe"}',
        "truncated": b'{"version": 1, "generation": 3, "pa',
    }


# What the refusal says of each (in the reason recorded, the log and the pane's notice).
REASONS = {
    "nested 200,000 deep": "it is nested deeper than",
    "nested 30,000 deep": "it is nested deeper than",
    "a 5,000-digit number": "it holds a number out of range (111111111111…, 5000 characters)",
    "an array": "it is not a JSON object (it is an array)",
    "a string": "it is not a JSON object (it is a string)",
    "null": "it is not a JSON object (it is null)",
    "too large": "it is larger than",
    "not UTF-8": "it is not UTF-8 text (byte 7)",
    "truncated": "it is not valid JSON (",
}
SESSION_SHAPES = _shapes(SESSION_FILE.max_bytes, b'{"version": 1, "generation": N}')
CHECKPOINT_SHAPES = _shapes(
    CHECKPOINT_FILE.max_bytes,
    b'{"format": 1, "invocation": "' + INVOCATION.encode() + b'", "application": "a",'
    b' "reference": "r", "generation": N}',
)
HOSTS_SHAPES = _shapes(HOSTS_FILE.max_bytes, b'{"format": 1, "hosts": {"h": N}}')


def _pane(pane_id: int, seconds: str, checkpoint: bool = False) -> dict[str, object]:
    sleep = shutil.which("sleep")
    assert sleep is not None
    pane: dict[str, object] = {
        "id": pane_id,
        "kind": "explicit",
        "argv": ["sleep", seconds],
        "program": sleep,
        "cwd": {"path": "/", "source": "launch", "captured_at": 0},
        "title": "t",
        "rows": 24,
        "cols": 500,  # wide: a notice fits a line
        "invocation": INVOCATION if checkpoint else "f" * 32,
    }
    if checkpoint:
        pane["checkpoint"] = {"invocation": INVOCATION, "generation": 1}
    return pane


def _session(*panes: dict[str, object]) -> bytes:
    """A valid snapshot: each pane in a window of its own."""
    windows = [
        {
            "id": index + 1,
            "nodes": [{"id": 1, "kind": "pane", "pane": pane["id"]}],
            "root": 1,
            "focused_pane": pane["id"],
        }
        for index, pane in enumerate(panes)
    ]
    session = {"version": 1, "generation": 5, "saved_at": 0, "windows": windows, "panes": panes}
    return json.dumps(session).encode()


def _argvs(service: Service) -> list[list[str]]:
    return sorted(list(info["argv"]) for info in service.panes().values())


def _quarantined(state: Path) -> list[Path]:
    quarantine = state / "quarantine"
    return sorted(quarantine.iterdir()) if quarantine.exists() else []


def _stop_cleanly(service: Service) -> None:
    assert service.stop() == 0, service.log()[-3000:]
    assert "Traceback" not in service.log(), service.log()[-3000:]
    wait_for(lambda: not service.own_processes(), what="muxd's processes (its bus) to end")


@pytest.mark.parametrize("shape", list(SESSION_SHAPES))
def test_a_hostile_session_file_is_quarantined_and_muxd_starts(tmp_root: Path, shape: str) -> None:
    content = SESSION_SHAPES[shape]
    service = Service(tmp_root, bus_address=None)  # its own bus: none may be left behind
    state = service.state / "mux"
    state.mkdir(parents=True)
    (state / "session.json").write_bytes(content)
    checkpoint = state / "checkpoints" / f"{INVOCATION}.json"
    checkpoint.parent.mkdir()
    checkpoint.write_bytes(b'{"kept": true}')
    hosts = b'{"format": 1, "hosts": {}}\n'
    (state / "hosts.json").write_bytes(hosts)
    service.start()
    try:
        (problems,) = service.call("ListRestoreProblems")
        (whole,) = [{k: v.value for k, v in problem.items()} for problem in problems]
        assert whole["id"] == 0 and "quarantine" in whole["reason"], whole
        assert f"the session snapshot was not used: {REASONS[shape]}" in whole["reason"]
        (moved,) = _quarantined(state)
        assert moved.name.startswith("session.json.")
        assert moved.read_bytes() == content, "moved as it was"
        assert "quarantined" in service.log()
        # Nothing else is touched, and muxd goes on: spawning, saving.
        assert checkpoint.read_bytes() == b'{"kept": true}'
        assert (state / "hosts.json").read_bytes() == hosts
        service.spawn(["sleep", "600"])
        _, generation = service.call("Snapshot")
        assert generation >= 1
        assert_answers(service)
    finally:
        _stop_cleanly(service)


@pytest.mark.parametrize("shape", list(CHECKPOINT_SHAPES))
def test_a_hostile_checkpoint_is_quarantined_and_its_pane_starts_afresh(
    tmp_root: Path, shape: str
) -> None:
    content = CHECKPOINT_SHAPES[shape]
    service = Service(tmp_root, bus_address=None)
    state = service.state / "mux"
    (state / "checkpoints").mkdir(parents=True)
    (state / "session.json").write_bytes(
        _session(_pane(1, "601", checkpoint=True), _pane(2, "602"))
    )
    checkpoint = state / "checkpoints" / f"{INVOCATION}.json"
    checkpoint.write_bytes(content)
    service.start()
    try:
        assert _argvs(service) == [["sleep", "601"], ["sleep", "602"]], "both panes restored"
        (resumed,) = [p for p, info in service.panes().items() if info["argv"][1] == "601"]
        screen = service.wait_screen(resumed, "starts afresh")
        # (Over its 64 KiB, a file is refused for its size before anything else.)
        reason = REASONS["too large" if len(content) > CHECKPOINT_FILE.max_bytes else shape]
        assert f"the checkpoint file is corrupt ({reason}" in screen
        assert "moved to the quarantine" in screen
        (moved,) = _quarantined(state)
        assert moved.name.startswith(f"{INVOCATION}.json.")
        assert moved.read_bytes() == content, "moved as it was"
        assert not checkpoint.exists()
        assert "quarantined" in service.log()
        assert service.call("ListRestoreProblems") == [[]]
        assert_answers(service)
    finally:
        _stop_cleanly(service)


@pytest.mark.parametrize("shape", list(HOSTS_SHAPES))
def test_a_hostile_hosts_file_is_logged_and_left_alone(tmp_root: Path, shape: str) -> None:
    content = HOSTS_SHAPES[shape]
    service = Service(tmp_root, bus_address=None)
    state = service.state / "mux"
    state.mkdir(parents=True)
    (state / "session.json").write_bytes(_session(_pane(1, "603")))
    (state / "hosts.json").write_bytes(content)
    service.start()
    try:
        assert _argvs(service) == [["sleep", "603"]], "the session is restored"
        assert service.call("ListHosts") == [[]]
        assert f"the added hosts could not be read (the hosts file: {REASONS[shape]}" in (
            service.log()
        )
        assert (state / "hosts.json").read_bytes() == content, "left alone"
        assert _quarantined(state) == []
        assert_answers(service)
    finally:
        _stop_cleanly(service)


@pytest.mark.parametrize("shape", ["nested 200,000 deep", "an array", "a 5,000-digit number"])
def test_muxctl_upgrade_reads_a_hostile_outcome_file_as_none(
    private_service: Service, shape: str
) -> None:
    outcome = private_service.runtime / "upgrade.json"
    outcome.write_bytes(_shapes(1024, b'{"generation": N, "error": ""}')[shape])
    before = private_service.process.pid if private_service.process else 0
    upgraded = private_service.muxctl("upgrade", check=True)
    assert "upgraded in place" in upgraded.stdout
    assert "Traceback" not in upgraded.stderr
    assert private_service.process is not None and private_service.process.pid == before
    assert_answers(private_service)


def test_a_failed_start_leaves_no_private_bus_running(tmp_root: Path) -> None:
    """A fault injected after the private bus started (sitecustomize: the hub's start
    raises): muxd exits with an error, and stops the dbus-daemon it started."""
    inject = tmp_root / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(
        "from mux.federation.hub import Hub\n"
        "def start(self):\n"
        "    raise RuntimeError('injected')\n"
        "Hub.start = start\n"
    )
    service = Service(tmp_root, bus_address=None, extra_env={"PYTHONPATH": str(inject)})
    service.start(wait=False)
    assert service.process is not None
    try:
        assert service.process.wait(timeout=60) != 0
        assert "injected" in service.log()
        wait_for(lambda: not service.own_processes(), what="the private dbus-daemon to end")
        assert not (service.runtime / "bus").exists()
    finally:
        for pid in service.own_processes():
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
