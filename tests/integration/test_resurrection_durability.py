"""A checkpoint is acknowledged only once file and directory are fsynced, and a failure to
persist answers checkpoint_failed and stops the endpoint (in process: the endpoint, the real
client library, a real socket and file system, fault-injected system calls)."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from pathlib import Path

import pytest

from mux.resurrection.checkpoints import CheckpointStore
from mux.resurrection.client import AsyncResurrectionClient, Refused
from mux.resurrection.endpoint import Endpoint
from mux.system.durable import FileOps
from tests.loop_support import ThisProcess, settled, until

INVOCATION = "0123456789abcdef" * 2


def endpoint(tmp_path: Path, store: CheckpointStore) -> tuple[Endpoint, ThisProcess]:
    loop = asyncio.get_running_loop()
    made = Endpoint.open(
        tmp_path / "launch", loop, store, invocation=INVOCATION, offer="old", shell_launch=False
    )
    launch = ThisProcess()
    made.launch = launch
    return made, launch


def test_the_answer_waits_for_both_fsyncs(tmp_path: Path) -> None:
    release, reached = threading.Event(), threading.Event()
    synced: list[int] = []

    def slow_fsync(fd: int) -> None:
        reached.set()
        release.wait(10)
        os.fsync(fd)
        synced.append(fd)

    store = CheckpointStore(tmp_path / "checkpoints", ops=FileOps(fsync=slow_fsync))

    async def test() -> None:
        made, launch = endpoint(tmp_path, store)
        client = await AsyncResurrectionClient.connect("t", str(made.path))
        assert client is not None
        assert client.offer == "old"
        pending = asyncio.ensure_future(client.checkpoint("ref-1"))
        await until(reached.is_set, "the first fsync: the data not yet on disk")
        await settled("an answer given before it, if one were coming")
        assert not pending.done(), "acknowledged before the data was on disk"
        release.set()
        assert await asyncio.wait_for(pending, 10) == 1
        assert len(synced) == 2  # the file, then its directory
        assert launch.generations == [1]
        assert store.read(INVOCATION).reference == "ref-1"
        await client.close()
        made.close()

    asyncio.run(test())


@pytest.mark.parametrize("failing", ["fsync", "write", "replace"])
def test_a_failure_to_persist_stops_the_endpoint(tmp_path: Path, failing: str) -> None:
    good = CheckpointStore(tmp_path / "checkpoints")
    good.write(INVOCATION, "t", "kept")
    before = good.path_for(INVOCATION).read_bytes()

    def fail(*args: object) -> None:
        raise OSError(errno.EIO, "injected")

    store = CheckpointStore(tmp_path / "checkpoints", ops=FileOps(**{failing: fail}))  # type: ignore[arg-type]

    async def test() -> None:
        made, _launch = endpoint(tmp_path, store)
        client = await AsyncResurrectionClient.connect("t", str(made.path))
        assert client is not None
        with pytest.raises(Refused) as refused:
            await client.checkpoint("lost")
        assert refused.value.code == "checkpoint_failed"
        assert made.stopped
        # The endpoint takes nobody any more.
        with pytest.raises(Refused) as again:
            await AsyncResurrectionClient.connect("t", str(made.path))
        assert again.value.code == "launch_unavailable"
        made.close()

    asyncio.run(test())
    assert good.path_for(INVOCATION).read_bytes() == before  # the last good checkpoint stands


def test_clear_is_durable_and_answered(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints")

    async def test() -> None:
        made, launch = endpoint(tmp_path, store)
        client = await AsyncResurrectionClient.connect("t", str(made.path))
        assert client is not None
        await client.checkpoint("x")
        await client.clear()
        assert launch.generations == [1, None]
        assert not store.path_for(INVOCATION).exists()
        await client.close()
        made.close()

    asyncio.run(test())
    assert not list((tmp_path / "launch").iterdir())  # the endpoint's directory went
