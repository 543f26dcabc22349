"""application-resurrection/1 against a real muxd: endpoints per launch, ownership, every
rejection, checkpoints given back after a restart, the disabled adapter, and a checkpoint
that cannot be given back."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mux.protocol import resurrection as ar
from tests.harness import (
    DBusDaemon,
    Service,
    process_cmdline,
    resurrection_endpoint,
    wait_for,
)

NOTES = [sys.executable, "-m", "mux.demo.notes"]
# One hello from wherever it runs; prints the error code or the restore offer, briefly.
HELLO = r"""
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ.get("APPLICATION_RESURRECTION_SOCKET") or sys.argv[1])
s.sendall(b'{"protocol":"application-resurrection/1","hello":{"application":"probe"}}\n')
s.settimeout(20)
answer = json.loads(s.makefile().readline())
said = answer["error"]["code"] if "error" in answer else "restore:%s" % answer["restore"]
print("answer=" + said)
"""


@pytest.fixture
def quick_service(dbus_daemon: DBusDaemon, tmp_root: Path) -> Iterator[Service]:
    config = "resurrection_hello_seconds = 0.5\ncwd_sample_seconds = 60\n"
    svc = Service(tmp_root, bus_address=dbus_daemon.address, config=config).start()
    yield svc
    svc.stop()


def endpoint_of(service: Service, pane: int) -> Path:
    """The pane program's APPLICATION_RESURRECTION_SOCKET."""
    return resurrection_endpoint(service.panes()[pane]["pid"])


def has_endpoint(service: Service, pane: int) -> bool:
    pid = service.panes()[pane]["pid"]
    return b"APPLICATION_RESURRECTION_SOCKET=" in Path(f"/proc/{pid}/environ").read_bytes()


def exchange(path: Path, *lines: bytes, wait_close: bool = True) -> list[bytes]:
    """Send raw lines as a peer that is not the owner; every answer until the host closes."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(path))
        s.settimeout(15)
        for line in lines:
            s.sendall(line)
        data = b""
        while wait_close:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data.splitlines()


def code_of(line: bytes) -> str:
    return str(json.loads(line)["error"]["code"])


def test_an_application_gets_its_reference_back_after_a_restart(
    service: Service, tmp_root: Path
) -> None:
    notes_file = tmp_root / "my notes.txt"
    pane = service.spawn(NOTES)
    service.wait_screen(pane, "a fresh start")
    service.call("SendInput", "tay", [pane, f"open {notes_file}\radd first\r".encode()])
    service.wait_screen(pane, "checkpoint 1")
    service.wait_screen(pane, "added")
    # The checkpoint is a file of the state dir, durable before the answer came.
    (checkpoint,) = (service.state / "mux" / "checkpoints").glob("*.json")
    assert json.loads(checkpoint.read_text())["reference"] == str(notes_file)

    assert service.process is not None
    service.process.terminate()
    service.process.wait(timeout=30)
    service.start()
    (restored,) = [p for p, info in service.panes().items() if info["argv"] == NOTES]
    service.wait_screen(restored, f"reopened {notes_file} (1 notes)")
    # It goes on checkpointing in the same invocation.
    service.call("SendInput", "tay", [restored, b"close\r"])
    service.wait_screen(restored, "closed")
    assert not checkpoint.exists()


def test_endpoints_are_private_and_end_with_their_process(service: Service) -> None:
    pane = service.spawn(["sleep", "600"])
    path = endpoint_of(service, pane)
    assert path.is_relative_to(service.runtime / "launch")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_ISSOCK(path.stat().st_mode)
    # A client going away is no exit: the endpoint stays.
    exchange(path, b"junk\n")
    assert path.exists()
    service.call("Signal", "ts", [pane, "TERM"])
    service.wait_exited(pane)
    wait_for(lambda: not path.parent.exists(), what="the endpoint removed with the process")
    # Asked not to have one, a launch has none.
    plain = service.spawn(["sleep", "600"], resurrection=False)
    plain_pid = service.panes()[plain]["pid"]  # read once it runs (not muxd's, pre-exec)
    wait_for(lambda: process_cmdline(plain_pid)[:1] == ["sleep"], what="sleep to run")
    assert not has_endpoint(service, plain)


def test_every_rejection_code(quick_service: Service, tmp_root: Path) -> None:
    service = quick_service
    pane = service.spawn(["sleep", "600"])
    path = endpoint_of(service, pane)
    hello = ar.hello("probe")
    # Garbage, a wrong protocol, an oversize line: invalid_handshake, one answer, closed.
    for lines in (
        [b"junk\n"],
        [b'{"protocol":"application-resurrection/9","hello":{"application":"x"}}\n'],
        [b"x" * 70000],
    ):
        answers = exchange(path, *lines)
        assert len(answers) == 1, answers
        assert code_of(answers[0]) == "invalid_handshake"
    # A silent peer is timed out.
    answers = exchange(path)
    assert [code_of(a) for a in answers] == ["invalid_handshake"]
    # The right hello from the wrong process (this test): ownership_rejected.
    answers = exchange(path, hello)
    assert [code_of(a) for a in answers] == ["ownership_rejected"]
    # A child of the launched program is not the launched program either.
    script = tmp_root / "hello.py"
    script.write_text(HELLO)
    child = service.spawn(["sh", "-c", f"{sys.executable} {script}; exec sleep 600"])
    service.wait_screen(child, "answer=")
    assert "answer=ownership_rejected" in service.screen_text(child)
    # Another user, on a path it can reach: invalid_handshake (peer identity).
    if os.getuid() == 0 and shutil.which("setpriv"):
        shared = tmp_root / "shared"
        shared.mkdir()
        tmp_root.chmod(0o755)
        shared.chmod(0o755)
        link = shared / "socket"
        os.link(path, link)
        link.chmod(0o666)
        result = subprocess.run(
            [
                *("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"),
                *(sys.executable, "-c", HELLO, str(link)),
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        link.chmod(0o600)
        assert "answer=invalid_handshake" in result.stdout, result
    else:
        print("other-uid case skipped: needs root and setpriv")


def test_a_shell_launch_accepts_only_its_foreground_child(service: Service, tmp_root: Path) -> None:
    script = tmp_root / "hello.py"
    script.write_text(HELLO)
    pane = service.spawn(shell="bash", env={"PS1": "sh$ "})
    wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="the prompt")

    def run(line: str) -> None:
        service.call("SendInput", "tay", [pane, line.encode() + b"\r"])

    # An immediate child of the shell, in the foreground: the owner.
    run(f"{sys.executable} {script} | sed 's/^/fg:/'")
    service.wait_screen(pane, "fg:answer=")
    assert "fg:answer=restore:None" in service.screen_text(pane)
    run("clear")
    # A grandchild (through a wrapper shell that does not exec it): rejected.
    run(f"sh -c '{sys.executable} {script} | sed s/^/grand:/; true'")
    service.wait_screen(pane, "grand:answer=")
    assert "answer=ownership_rejected" in service.screen_text(pane)
    run("clear")
    # A background job: rejected.
    run(f"({sys.executable} {script} | sed 's/^/bg:/') & wait")
    service.wait_screen(pane, "bg:answer=")
    assert "answer=ownership_rejected" in service.screen_text(pane)


def test_the_disabled_adapter_removes_endpoints_and_restore_still_works(
    dbus_daemon: DBusDaemon, tmp_root: Path
) -> None:
    service = Service(
        tmp_root, bus_address=dbus_daemon.address, config="resurrection = false\n"
    ).start()
    try:
        pane = service.spawn(NOTES)
        service.wait_screen(pane, "notes>")
        assert not has_endpoint(service, pane)
        assert not (service.runtime / "launch").exists()
        assert "no resurrection" not in service.screen_text(pane)  # it simply has none
        assert service.process is not None
        service.process.terminate()
        service.process.wait(timeout=30)
        service.start()
        (restored,) = [p for p, info in service.panes().items() if info["argv"] == NOTES]
        service.wait_screen(restored, "notes>")  # an ordinary relaunch
    finally:
        service.stop()


def test_a_checkpoint_that_is_not_its_own_is_never_given_back(
    service: Service, tmp_root: Path
) -> None:
    notes_file = tmp_root / "notes.txt"
    pane = service.spawn(NOTES, cols=200)  # wide: the notice fits a line
    service.wait_screen(pane, "a fresh start")
    service.call("SendInput", "tay", [pane, f"open {notes_file}\r".encode()])
    service.wait_screen(pane, "checkpoint 1")
    assert service.process is not None
    service.process.terminate()
    service.process.wait(timeout=30)
    # Someone put another invocation's checkpoint in its place.
    (checkpoint,) = (service.state / "mux" / "checkpoints").glob("*.json")
    record = json.loads(checkpoint.read_text())
    record["invocation"] = "f" * 32
    record["reference"] = "/somebody/elses/state"
    checkpoint.write_text(json.dumps(record))
    tampered = checkpoint.read_bytes()
    service.start()
    (restored,) = [p for p, info in service.panes().items() if info["argv"] == NOTES]
    screen = service.wait_screen(restored, "a fresh start")
    assert "starts afresh: the checkpoint file belongs to another invocation" in screen
    assert "/somebody/elses/state" not in screen
    assert checkpoint.read_bytes() == tampered  # left as it was
    assert "not resumed" in service.log()


def test_an_upgrade_keeps_the_endpoint(service: Service, tmp_root: Path) -> None:
    pane = service.spawn(NOTES, cols=200)
    service.wait_screen(pane, "a fresh start")
    path = endpoint_of(service, pane)
    service.call("SendInput", "tay", [pane, f"open {tmp_root / 'a.txt'}\r".encode()])
    service.wait_screen(pane, "checkpoint 1")
    service.muxctl("upgrade", check=True)
    assert path.exists()  # the same socket, served by the new muxd
    # The client's connection ended with the old program; it says hello again.
    service.call("SendInput", "tay", [pane, f"open {tmp_root / 'b.txt'}\r".encode()])
    service.wait_screen(pane, "checkpoint 2")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_a_checkpointed_command_is_typed_again_into_the_restored_shell(
    service: Service, tmp_root: Path, shell: str
) -> None:
    notes_file = tmp_root / f"{shell}-notes.txt"
    command = f"{sys.executable} -m mux.demo.notes"
    pane = service.spawn(shell=shell, cols=200)
    wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="the prompt")

    def run(target: int, line: str) -> None:
        service.call("SendInput", "tay", [target, line.encode() + b"\r"])

    run(pane, command)
    service.wait_screen(pane, "a fresh start")
    run(pane, f"open {notes_file}")
    service.wait_screen(pane, "checkpoint 1")
    run(pane, "add remembered")
    service.wait_screen(pane, "added")

    assert service.process is not None
    service.process.terminate()
    service.process.wait(timeout=30)
    saved = json.loads((service.state / "mux" / "session.json").read_text())
    (record,) = saved["panes"]
    assert record["replay"] == command

    service.start()
    (restored,) = service.panes()
    screen = service.wait_screen(restored, f"reopened {notes_file} (1 notes)")
    assert f"typing again at the first prompt: {command}" in screen
    # Once the user has moved on, a launch by hand gets nothing back.
    run(restored, "quit")
    wait_for(lambda: service.panes()[restored]["shell_state"] == "prompt", what="the prompt")
    run(restored, command)
    wait_for(
        lambda: service.screen_text(restored).count("a fresh start") == 1,
        what="the manual launch starting afresh",
    )


def test_a_command_that_did_not_checkpoint_is_not_replayed(service: Service) -> None:
    pane = service.spawn(shell="bash")
    wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="the prompt")
    service.call("SendInput", "tay", [pane, b"sleep 600\r"])
    wait_for(lambda: service.panes()[pane]["shell_state"] == "command", what="sleep running")
    path, _ = service.call("Snapshot")
    (record,) = json.loads(Path(path).read_text())["panes"]
    # Recorded for the restore to decide with the settings of then (mux.panes.replay)...
    assert record["replay"] == "sleep 600"
    assert record["checkpoint"] is None
    # ... which, with sleep in no allowlist and no checkpoint, types nothing again.
    assert service.stop() == 0
    service.start()
    screen = service.wait_screen(pane, "started again")  # (below its old contents)
    assert "typing again" not in screen


def test_the_allowlist_replays_named_programs(dbus_daemon: DBusDaemon, tmp_root: Path) -> None:
    service = Service(
        tmp_root, bus_address=dbus_daemon.address, config='replay_commands = ["sleep"]\n'
    ).start()
    try:
        pane = service.spawn(shell="bash")
        wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="the prompt")
        service.call("SendInput", "tay", [pane, b"sleep 600\r"])
        wait_for(lambda: service.panes()[pane]["shell_state"] == "command", what="sleep running")
        path, _ = service.call("Snapshot")
        (record,) = json.loads(Path(path).read_text())["panes"]
        assert record["replay"] == "sleep 600"
        assert record["checkpoint"] is None  # replayed, with nothing to hand back
    finally:
        service.stop()


def test_a_replay_still_waiting_survives_an_upgrade(
    dbus_daemon: DBusDaemon, tmp_root: Path
) -> None:
    service = Service(
        tmp_root, bus_address=dbus_daemon.address, config='replay_commands = ["sleep"]\n'
    ).start()
    try:
        _replay_waits_across_an_upgrade(service)
    finally:
        service.stop()


def _replay_waits_across_an_upgrade(service: Service) -> None:
    pane = service.spawn(shell="bash")
    wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="the prompt")
    assert service.process is not None
    service.process.terminate()
    service.process.wait(timeout=30)
    # A shell without integration (no prompt marker will ever come) with a replay to do.
    session_file = service.state / "mux" / "session.json"
    saved = json.loads(session_file.read_text())
    saved["panes"][0].update(argv=["/bin/sh"], program="/bin/sh", replay="sleep 600")
    session_file.write_text(json.dumps(saved))
    service.start()
    service.muxctl("upgrade", check=True)
    path, _ = service.call("Snapshot")
    (record,) = json.loads(Path(path).read_text())["panes"]
    assert record["replay"] == "sleep 600"  # still to be typed at the first prompt
