"""Concurrent checkpoints of one invocation get distinct, increasing generations, and the
one acknowledged last is the one on disk (docs/resurrection-protocol.md#checkpoints-and-durability):
reading, incrementing and writing the generation is one step under the write lock. Real
threads, a real asyncio loop, real Unix sockets and a real file system."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from mux.resurrection.checkpoints import CheckpointStore
from mux.resurrection.client import AsyncResurrectionClient
from mux.resurrection.endpoint import Endpoint
from mux.system.durable import FileOps
from tests.loop_support import ThisProcess

INVOCATION = "0123456789abcdef" * 2
# How long the first writer holds its write open for a second one to reach its own write:
# two writers that both read the generation before either has written meet there (with
# the read inside the lock, the second never comes, and the first goes on after this).
MEETING_SECONDS = 0.5


class Rendezvous:
    """A durable write's `write` system call that holds the first writer until a second
    writer writes too, or MEETING_SECONDS have passed."""

    def __init__(self) -> None:
        self._calls = 0
        self._calls_guard = threading.Lock()
        self._second = threading.Event()

    def ops(self) -> FileOps:
        return FileOps(write=self._write)

    def _write(self, fd: int, data: bytes) -> int:
        with self._calls_guard:
            self._calls += 1
            first = self._calls == 1
        if first:
            self._second.wait(MEETING_SECONDS)
        else:
            self._second.set()
        return os.write(fd, data)


def write_concurrently(stores: list[CheckpointStore], writes: int) -> dict[str, int]:
    """Each store writes `writes` references from its own thread; reference -> generation."""
    generations: dict[str, int] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(len(stores))

    def writer(number: int, store: CheckpointStore) -> None:
        try:
            start.wait()
            for i in range(writes):
                reference = f"writer {number} write {i}"
                generations[reference] = store.write(INVOCATION, "app", reference)
        except BaseException as e:
            errors.append(e)

    threads = [
        threading.Thread(target=writer, args=(number, store)) for number, store in enumerate(stores)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    return generations


def test_two_writers_that_meet_get_distinct_generations(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path, ops=Rendezvous().ops())
    store.write(INVOCATION, "app", "before")  # generation 1
    generations = write_concurrently([store, store], writes=1)
    assert sorted(generations.values()) == [2, 3]
    record = store.read(INVOCATION)
    assert record.generation == 3
    assert generations[record.reference] == 3  # the last acknowledged is on disk


def test_many_writers_number_every_checkpoint_once(tmp_path: Path) -> None:
    """Separate stores of one directory (two writers) as well as threads of one store."""
    shared = CheckpointStore(tmp_path)
    stores = [shared, shared, CheckpointStore(tmp_path), CheckpointStore(tmp_path)]
    generations = write_concurrently(stores, writes=5)
    assert sorted(generations.values()) == list(range(1, 21))
    for number in range(len(stores)):  # each writer saw its own generations increase
        own = [generations[f"writer {number} write {i}"] for i in range(5)]
        assert own == sorted(own)
    record = shared.read(INVOCATION)
    assert record.generation == 20
    assert generations[record.reference] == 20


def test_a_clear_between_writers_restarts_the_count(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    assert store.write(INVOCATION, "app", "a") == 1
    store.clear(INVOCATION)
    assert store.write(INVOCATION, "app", "b") == 1
    assert store.write(INVOCATION, "app", "c") == 2


def test_two_connections_of_one_launch_checkpoint_at_once(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints", ops=Rendezvous().ops())

    async def test() -> None:
        loop = asyncio.get_running_loop()
        made = Endpoint.open(
            tmp_path / "launch", loop, store, invocation=INVOCATION, offer=None, shell_launch=False
        )
        launch = ThisProcess()
        made.bind(launch)
        first = await AsyncResurrectionClient.connect("app", str(made.path))
        second = await AsyncResurrectionClient.connect("app", str(made.path))
        assert first is not None
        assert second is not None
        acknowledged = await asyncio.wait_for(
            asyncio.gather(first.checkpoint("from first"), second.checkpoint("from second")),
            30,
        )
        assert sorted(acknowledged) == [1, 2]
        record = store.read(INVOCATION)
        assert record.generation == 2
        assert record.reference == ("from first", "from second")[acknowledged.index(2)]
        assert launch.generations == [1, 2]  # the pane ends with the generation on disk
        await first.close()
        await second.close()
        made.close()

    asyncio.run(test())
