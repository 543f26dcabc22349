"""Ownership of a launch's endpoint, checkpoint files that cannot be given back, and the
macOS peer-credential path (faked: LOCAL_PEERCRED / LOCAL_PEERPID do not exist here)."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import pytest

from mux.protocol.resurrection import ErrorCode, Violation
from mux.resurrection.checkpoints import CheckpointProblem, CheckpointStore
from mux.resurrection.ownership import verify_owner
from mux.system import peercred
from mux.system.proctree import ProcessInfo, _process_info_from_ps, process_info

SHELL = 100
FOREGROUND = 200


def owner(
    peer_pid: int | None,
    *,
    shell: bool,
    info: ProcessInfo | None = None,
    group: int | None = FOREGROUND,
    uid: int | None = None,
) -> None:
    verify_owner(
        peer_pid=peer_pid,
        peer_uid=os.getuid() if uid is None else uid,
        shell_launch=shell,
        launch_pid=SHELL,
        foreground_group=lambda: group,
        inspect=lambda pid: info,
    )


def code(call: Any) -> ErrorCode:
    with pytest.raises(Violation) as violation:
        call()
    return violation.value.code


def test_an_explicit_launch_accepts_exactly_its_pid() -> None:
    owner(SHELL, shell=False)
    assert code(lambda: owner(SHELL + 1, shell=False)) is ErrorCode.OWNERSHIP_REJECTED


def test_a_shell_launch_accepts_only_its_foreground_child() -> None:
    child = ProcessInfo(ppid=SHELL, pgrp=FOREGROUND)
    owner(300, shell=True, info=child)
    grandchild = ProcessInfo(ppid=300, pgrp=FOREGROUND)
    assert code(lambda: owner(301, shell=True, info=grandchild)) is ErrorCode.OWNERSHIP_REJECTED
    background = ProcessInfo(ppid=SHELL, pgrp=999)
    assert code(lambda: owner(302, shell=True, info=background)) is ErrorCode.OWNERSHIP_REJECTED
    # The shell itself is not its own foreground child.
    itself = ProcessInfo(ppid=1, pgrp=FOREGROUND)
    assert code(lambda: owner(SHELL, shell=True, info=itself)) is ErrorCode.OWNERSHIP_REJECTED


def test_failing_to_inspect_never_grants() -> None:
    unavailable = ErrorCode.OWNERSHIP_VERIFICATION_UNAVAILABLE
    assert code(lambda: owner(None, shell=False)) is unavailable
    assert code(lambda: owner(300, shell=True, info=None)) is unavailable
    child = ProcessInfo(ppid=SHELL, pgrp=FOREGROUND)
    assert code(lambda: owner(300, shell=True, info=child, group=None)) is unavailable
    assert code(lambda: owner(SHELL, shell=False, uid=os.getuid() + 1)) is (
        ErrorCode.INVALID_HANDSHAKE
    )


def test_process_information_from_proc_and_from_ps_agree() -> None:
    mine = process_info(os.getpid())
    assert mine == ProcessInfo(ppid=os.getppid(), pgrp=os.getpgrp())
    assert _process_info_from_ps(os.getpid()) == mine  # the macOS path, with /bin/ps
    assert process_info(2**22 + 12345) is None  # no such process


def test_unusable_checkpoint_files_fail_explicitly(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    invocation = "ab" * 16
    with pytest.raises(FileNotFoundError):
        store.read(invocation)
    path = store.path_for(invocation)
    for content, why in (
        (b"{not json", "corrupt"),
        (b'{"format": 99}', "format"),
        (b'{"format": 1, "invocation": "' + invocation.encode() + b'"}', "missing"),
        (
            b'{"format":1,"invocation":"' + b"c" * 32 + b'","application":"a","reference":"r",'
            b'"generation":1}',
            "another invocation",
        ),
    ):
        path.write_bytes(content)
        with pytest.raises(CheckpointProblem, match=why):
            store.read(invocation)
        assert path.read_bytes() == content  # never changed by reading
    with pytest.raises(CheckpointProblem):
        store.path_for("../../etc/passwd")


class _FakeMacSocket:
    """getsockopt as macOS answers it for a peer (pid 4321, uid 501)."""

    def getsockopt(self, level: int, option: int, size: int) -> bytes:
        assert level == peercred._SOL_LOCAL
        if option == peercred._LOCAL_PEERCRED:
            return struct.pack("IIh16I", 0, 501, 1, *([20] + [0] * 15))
        if option == peercred._LOCAL_PEERPID:
            return struct.pack("i", 4321)
        raise OSError(22, "bad option")


def test_the_macos_peer_credentials_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(peercred, "IS_LINUX", False)
    creds = peercred.peer_credentials(_FakeMacSocket())  # type: ignore[arg-type]
    assert creds == peercred.PeerCredentials(pid=4321, uid=501)
