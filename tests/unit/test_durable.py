"""Durable writes: all or nothing, whatever fails; concurrent writers take turns."""

import errno
import multiprocessing
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from mux.system.durable import REAL_OPS, DurableWriteError, FileOps, durable_write

PREVIOUS = b"the previous, good content\n" * 100


def _failing(step: str, code: int) -> FileOps:
    def fail(*_args: object) -> None:
        raise OSError(code, os.strerror(code))

    calls = {"write": REAL_OPS.write, "fsync": REAL_OPS.fsync, "replace": REAL_OPS.replace}
    calls[step] = fail  # type: ignore[assignment]
    return FileOps(**calls)  # type: ignore[arg-type]


@pytest.mark.parametrize("step", ["write", "fsync", "replace"])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_a_failure_leaves_the_previous_file_byte_identical(
    tmp_path: Path, step: str, code: int
) -> None:
    target = tmp_path / "session.json"
    durable_write(target, PREVIOUS)
    with pytest.raises(DurableWriteError) as failed:
        durable_write(target, b"new" * 10_000, ops=_failing(step, code))
    assert target.read_bytes() == PREVIOUS
    assert not failed.value.replaced
    assert "the previous version is kept" in str(failed.value)
    assert ("no space left" if code == errno.ENOSPC else "input/output error") in str(failed.value)
    assert str(tmp_path) not in str(failed.value), "no private path in the message"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == [], "the temporary file is removed"


def test_a_failed_directory_flush_says_the_file_was_replaced(tmp_path: Path) -> None:
    target = tmp_path / "session.json"
    durable_write(target, PREVIOUS)
    calls = 0

    def fsync_file_only(fd: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # the directory
            raise OSError(errno.EIO, "EIO")
        os.fsync(fd)

    with pytest.raises(DurableWriteError) as failed:
        durable_write(target, b"new", ops=FileOps(fsync=fsync_file_only))
    assert failed.value.replaced and failed.value.step == "flushing the directory"
    assert target.read_bytes() == b"new"


def test_the_file_and_its_directory_are_flushed(tmp_path: Path) -> None:
    flushed: list[str] = []

    def fsync(fd: int) -> None:
        flushed.append(os.readlink(f"/proc/self/fd/{fd}"))
        os.fsync(fd)

    target = tmp_path / "f"
    durable_write(target, b"x", ops=FileOps(fsync=fsync))
    assert flushed[0].endswith(".tmp") and flushed[1] == str(tmp_path)
    assert (target.stat().st_mode & 0o777) == 0o600


def test_real_enospc_on_a_full_file_system(tmp_path: Path) -> None:
    """Not injected: a 64 KiB tmpfs really runs out of space (needs root to mount)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], check=True)
    try:
        target = mount / "session.json"
        durable_write(target, PREVIOUS)
        with pytest.raises(DurableWriteError) as failed:
            durable_write(target, os.urandom(200_000))
        assert failed.value.errno == errno.ENOSPC
        assert target.read_bytes() == PREVIOUS
        assert [p.name for p in mount.iterdir() if p.name.endswith(".tmp")] == []
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def _writer(target: str, marker: bytes, rounds: int) -> None:
    for _ in range(rounds):
        durable_write(Path(target), marker * 5000)


@pytest.mark.parametrize("spawn", ["threads", "processes"])
def test_concurrent_writers_never_mix(tmp_path: Path, spawn: str) -> None:
    target = tmp_path / "session.json"
    markers = [bytes([65 + n]) for n in range(4)]
    workers: list[threading.Thread | multiprocessing.Process]
    start: Callable[..., threading.Thread | multiprocessing.Process] = (
        threading.Thread if spawn == "threads" else multiprocessing.get_context("fork").Process
    )
    workers = [start(target=_writer, args=(str(target), m, 25)) for m in markers]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    content = target.read_bytes()
    assert len(content) == 5000 and content in {m * 5000 for m in markers}
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
