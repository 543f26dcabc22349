"""Several clients of one pane, and read-only ones (issue #32, SPEC §14), on the attach
hub without muxd: the stand-in panes and real socket pairs of test_attach_hub."""

from __future__ import annotations

from mux.protocol import attach as proto
from tests.loop_support import until
from tests.unit.test_attach_hub import Client, Hub, StandInPane, connect, make_hub, run


async def _attach(
    hub: Hub, pane: int, size: tuple[int, int], read_only: bool = False, glance: bool = False
) -> Client:
    client = connect(hub)
    hello = proto.Hello(read_only=read_only, glance=glance)
    await client.send(hello, proto.Resize(*size), proto.Attach(pane))
    await client.wait_for(proto.Attached)
    await client.wait_for(proto.Repaint)
    return client


def _size(pane: StandInPane) -> tuple[int, int]:
    return pane.rows, pane.cols


def test_a_read_only_client_sees_everything_and_changes_nothing() -> None:
    async def test() -> None:
        hub, directory = make_hub()
        pane = directory.add(1)
        writer = await _attach(hub, 1, (30, 100))
        watcher = await _attach(hub, 1, (20, 60), read_only=True)
        assert _size(pane) == (30, 100), "a watcher's size is not the pane's"
        pane.print(b"for both")
        for client in (writer, watcher):
            await client.until(lambda c=client: c.output() == b"for both", "the output")
        await watcher.send(proto.Input(b"rm -rf ~\r"), proto.Resize(10, 40))
        refusal = await watcher.wait_for(proto.Error)
        assert refusal.code == "PreconditionFailed" and "read-only" in refusal.message
        await writer.send(proto.Input(b"ok"))
        await until(lambda: bytes(pane.typed) == b"ok", "the writer's keys")
        assert _size(pane) == (30, 100)
        listed = [(c.read_only, c.size) for c in hub.clients(pane)]
        assert listed == [(False, (30, 100)), (True, (10, 40))]
        assert directory.use_order.get(1) is not None  # (the writer's attach)
        await watcher.send(proto.Detach())
        await watcher.wait_for(proto.Detached)

    run(test)


def test_a_watcher_does_not_count_as_the_pane_used_last() -> None:
    async def test() -> None:
        hub, directory = make_hub()
        directory.add(1)
        directory.add(2)
        await _attach(hub, 1, (24, 80))
        await _attach(hub, 2, (24, 80), read_only=True)
        assert directory.most_recently_used().id == 1

    run(test)


def test_a_glance_watches_and_is_no_use_and_no_one_looking() -> None:
    """A thumbnail's client (the web overview): read-only, and neither a use of the pane
    (the spawn ledger) nor an attached client (notifications, KillIf)."""

    async def test() -> None:
        hub, directory = make_hub()
        pane = directory.add(1)
        glance = await _attach(hub, 1, (24, 80), glance=True)
        pane.print(b"seen")
        await glance.until(lambda: glance.output() == b"seen", "the output")
        await glance.send(proto.Input(b"x"))
        assert (await glance.wait_for(proto.Error)).code == "PreconditionFailed"
        assert directory.uses == [] and hub.clients_of(pane) == 0
        (listed,) = hub.clients(pane)
        assert listed.glance and listed.read_only
        watcher = await _attach(hub, 1, (24, 80), read_only=True)
        assert hub.clients_of(pane) == 1 and len(directory.uses) == 1
        del watcher

    run(test)


def test_the_pane_takes_the_size_of_the_client_active_last() -> None:
    """Attach, resize or type: that client's terminal size; when it leaves, the size of
    the one active last among those left (never a watcher's)."""

    async def test() -> None:
        hub, directory = make_hub()
        pane = directory.add(1)
        big = await _attach(hub, 1, (40, 120))
        small = await _attach(hub, 1, (20, 60))
        assert _size(pane) == (20, 60), "the last to attach"
        await _attach(hub, 1, (10, 30), read_only=True)
        await big.send(proto.Input(b"x"))
        await until(lambda: _size(pane) == (40, 120), "the size of the one that typed")
        await small.send(proto.Input(b"y"))
        await until(lambda: _size(pane) == (20, 60), "the size of the one that typed")
        await small.send(proto.Detach())
        await small.wait_for(proto.Detached)
        await until(lambda: _size(pane) == (40, 120), "the size of the one left")

    run(test)
