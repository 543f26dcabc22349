"""KillIf and the instance token (docs/dbus-api.md#instance-token-and-conditional-kill):
every refusal kills nothing, every use path marks, the spawner's own reads do not count,
the token survives an upgrade and not a restart, and a read racing a kill never sees both
succeed."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from mux.protocol import attach as proto
from mux.protocol.names import FEATURE_LINKS
from tests.attach_client import ProtocolClient
from tests.harness import Service

DEST, PATH, IFACE = "org.mux.Mux1", "/org/mux/Mux1", "org.mux.Mux1.Manager"
UNATTACHED = "UNATTACHED_SINCE_SPAWN"


class Connection:
    """One bus connection of our own: its unique name is the "who" of the ledger."""

    def __init__(self, bus: MessageBus) -> None:
        self.bus = bus

    async def call(self, member: str, signature: str = "", *body: Any) -> Message:
        reply = await self.bus.call(
            Message(
                destination=DEST,
                path=PATH,
                interface=IFACE,
                member=member,
                signature=signature,
                body=list(body),
            )
        )
        assert reply is not None
        return reply

    async def spawn(
        self, bind: bool = True, argv: tuple[str, ...] = ("sleep", "600")
    ) -> tuple[int, bytes]:
        options = {"argv": Variant("as", list(argv))}
        if bind:
            options["bind_instance"] = Variant("b", True)
        reply = await self.call("Spawn", "a{sv}", options)
        assert reply.message_type is MessageType.METHOD_RETURN, reply.body
        return int(reply.body[0]), bytes(reply.body[1])

    async def panes(self) -> dict[int, dict[str, Any]]:
        """ListPanes: what exists (listing is no use of a pane)."""
        reply = await self.call("ListPanes")
        return {int(e["id"].value): {k: v.value for k, v in e.items()} for e in reply.body[0]}

    async def alive(self, pane: int) -> bool:
        return pane in await self.panes()

    async def kill_if(self, pane: int, instance: bytes, *conditions: str) -> Message:
        return await self.call("KillIf", "tayas", pane, instance, list(conditions))


@asynccontextmanager
async def connections(service: Service, count: int) -> AsyncIterator[list[Connection]]:
    buses = [
        await MessageBus(bus_address=service.bus_address, negotiate_unix_fd=True).connect()
        for _ in range(count)
    ]
    try:
        yield [Connection(bus) for bus in buses]
    finally:
        for bus in buses:
            bus.disconnect()


def run(service: Service, test: Callable[[list[Connection]], Awaitable[None]], n: int = 2) -> None:
    async def main() -> None:
        async with connections(service, n) as conns:
            await test(conns)

    asyncio.run(main())


def refused(reply: Message, *needles: str) -> None:
    assert reply.message_type is MessageType.ERROR, reply.body
    assert reply.error_name == "org.mux.Mux1.Error.PreconditionFailed", reply.error_name
    for needle in needles:
        assert needle in reply.body[0], reply.body[0]


def killed(reply: Message) -> None:
    assert reply.message_type is MessageType.METHOD_RETURN, reply.body


def test_bound_spawn_returns_the_token_and_unbound_an_empty_one(service: Service) -> None:
    async def test(conns: list[Connection]) -> None:
        (spawner, _) = conns
        _, token = await spawner.spawn(bind=True)
        _, empty = await spawner.spawn(bind=False)
        assert len(token) == 16
        assert empty == b""
        _, again = await spawner.spawn(bind=True)
        assert again == token  # one id space, one token

    run(service, test)


def test_every_refusal_kills_nothing(service: Service) -> None:
    async def test(conns: list[Connection]) -> None:
        spawner, other = conns
        pane, token = await spawner.spawn()
        wrong = bytes(16)
        refused(await spawner.kill_if(pane, wrong), "instance", "restarted")
        refused(await spawner.kill_if(pane, wrong, UNATTACHED), "instance")
        refused(await spawner.kill_if(pane, b"", UNATTACHED), UNATTACHED, "instance token")
        refused(await spawner.kill_if(pane, token, "NO_SUCH_CONDITION"), "NO_SUCH_CONDITION")
        refused(await spawner.kill_if(pane, token, UNATTACHED, "X"), "'X'")
        # Unbound spawn: the exemption needs the token to name the pane.
        unbound, _ = await spawner.spawn(bind=False)
        refused(await spawner.kill_if(unbound, b"", UNATTACHED), UNATTACHED)
        await other.call("GetScreen", "t", pane)  # a glance by another connection
        refused(await spawner.kill_if(pane, token, UNATTACHED), UNATTACHED, "used")
        assert await spawner.alive(pane) and await spawner.alive(unbound)
        # Unconditional forms still work.
        killed(await spawner.kill_if(pane, token))
        killed(await other.kill_if(unbound, b""))
        assert not await spawner.alive(pane) and not await spawner.alive(unbound)

    run(service, test)


def test_every_use_path_marks_and_the_spawners_own_do_not(service: Service) -> None:
    async def test(conns: list[Connection]) -> None:
        spawner, other = conns
        uses: list[tuple[str, str, tuple[Any, ...]]] = [
            ("GetScreen", "t", ()),
            ("SendInput", "tay", (b"x",)),
            ("Resize", "tqq", (30, 90)),
            ("Signal", "ts", ("CONT",)),
        ]
        for member, signature, extra in uses:
            # The spawner's own use: the pane stays unattached since spawn.
            pane, token = await spawner.spawn()
            reply = await spawner.call(member, signature, pane, *extra)
            assert reply.message_type is MessageType.METHOD_RETURN, (member, reply.body)
            # Another connection's use marks it.
            reply = await other.call(member, signature, pane, *extra)
            assert reply.message_type is MessageType.METHOD_RETURN, (member, reply.body)
            refused(await spawner.kill_if(pane, token, UNATTACHED), UNATTACHED)
            assert await spawner.alive(pane), member
        # OpenAttach by another connection marks; an attach socket client marks.
        pane, token = await spawner.spawn()
        reply = await other.call("OpenAttach", "t", pane)
        os.close(reply.unix_fds[0])
        refused(await spawner.kill_if(pane, token, UNATTACHED), UNATTACHED)
        pane, token = await spawner.spawn()
        client = ProtocolClient.connect(service.runtime / "mux.sock")
        await asyncio.to_thread(client.attach, pane)
        await asyncio.to_thread(client.send, proto.Detach())
        await asyncio.to_thread(client.wait_closed)
        refused(await spawner.kill_if(pane, token, UNATTACHED), UNATTACHED, "used")
        # The spawner's own OpenAttach is no use by others, but an open attachment is
        # a resource the kill would close.
        pane, token = await spawner.spawn()
        reply = await spawner.call("OpenAttach", "t", pane)
        fd = reply.unix_fds[0]
        refused(await spawner.kill_if(pane, token, UNATTACHED), UNATTACHED, "attached")
        os.close(fd)
        # Once the service has seen that attachment end, the kill goes through (a
        # refusal kills nothing, so asking again until then is harmless).
        deadline = asyncio.get_running_loop().time() + 15
        while (reply := await spawner.kill_if(pane, token, UNATTACHED)).message_type is not (
            MessageType.METHOD_RETURN
        ):
            refused(reply, "attached")
            assert asyncio.get_running_loop().time() < deadline, "the attachment never ended"
            await asyncio.sleep(0.02)  # poll interval
        assert not await spawner.alive(pane)

    run(service, test)


def test_a_requester_other_than_the_spawner_may_kill_an_untouched_pane(service: Service) -> None:
    async def test(conns: list[Connection]) -> None:
        spawner, other = conns
        pane, token = await spawner.spawn()
        await spawner.call("GetScreen", "t", pane)  # the spawner's own glance
        killed(await other.kill_if(pane, token, UNATTACHED))
        assert not await spawner.alive(pane)

    run(service, test)


def test_the_token_survives_an_upgrade_with_the_ledger(service: Service) -> None:
    async def before(conns: list[Connection]) -> None:
        spawner, other = conns
        untouched, token = await spawner.spawn()
        used, _ = await spawner.spawn()
        await other.call("GetScreen", "t", used)
        service.muxctl("upgrade", check=True)
        pane_after, token_after = await spawner.spawn()
        assert token_after == token  # the same id space
        assert pane_after > used  # ids go on
        refused(await spawner.kill_if(used, token, UNATTACHED), UNATTACHED, "used")
        killed(await spawner.kill_if(untouched, token, UNATTACHED))

    run(service, before)


def test_a_cold_restart_replaces_the_token_and_refuses_the_old_one(
    service: Service, tmp_root: Path
) -> None:
    _, old_token = asyncio.run(_spawn_bound(service))
    assert service.process is not None
    service.process.send_signal(signal.SIGTERM)
    service.process.wait(timeout=30)
    service.start()

    async def test(conns: list[Connection]) -> None:
        (spawner,) = conns
        # The pane came back from the snapshot, in a new id space.
        restored = await spawner.panes()
        (pane,) = [p for p, info in restored.items() if info["argv"] == ["sleep", "600"]]
        new_pane, new_token = await spawner.spawn()
        assert new_token != old_token
        refused(await spawner.kill_if(pane, old_token), "instance", "restarted")
        # Restored: no spawn record, so the exemption refuses even with the new token.
        refused(await spawner.kill_if(pane, new_token, UNATTACHED), UNATTACHED, "Spawn")
        assert await spawner.alive(pane)
        killed(await spawner.kill_if(new_pane, new_token, UNATTACHED))

    run(service, test, n=1)


async def _spawn_bound(service: Service) -> tuple[int, bytes]:
    async with connections(service, 1) as (conn,):
        return await conn.spawn()


def test_a_read_racing_a_kill_never_both_succeed(service: Service) -> None:
    async def test(conns: list[Connection]) -> None:
        spawner, reader = conns
        outcomes = {"read": 0, "killed": 0}
        for attempt in range(60):
            pane, token = await spawner.spawn()
            # Both calls leave before either answer is read; which one mux takes first
            # varies with the order they are sent in (alternated) and with the bus.
            read_call = reader.call("GetScreen", "t", pane)
            kill_call = spawner.kill_if(pane, token, UNATTACHED)
            if attempt % 2:
                kill, read = await asyncio.gather(kill_call, read_call)
            else:
                read, kill = await asyncio.gather(read_call, kill_call)
            read_ok = read.message_type is MessageType.METHOD_RETURN
            kill_ok = kill.message_type is MessageType.METHOD_RETURN
            assert not (read_ok and kill_ok), "a read and the kill both succeeded"
            assert read_ok or kill_ok, (read.body, kill.body)
            outcomes["read" if read_ok else "killed"] += 1
            if read_ok:
                killed(await spawner.kill_if(pane, token))
        # Both orders happened, and each was handled.
        print("race outcomes:", outcomes)
        assert outcomes["read"] and outcomes["killed"], outcomes

    run(service, test)


def test_an_application_connected_to_its_endpoint_is_a_resource_the_kill_would_close(
    service: Service,
) -> None:
    import sys

    notes = (sys.executable, "-m", "mux.demo.notes")

    async def test(conns: list[Connection]) -> None:
        (spawner,) = conns
        pane, token = await spawner.spawn(argv=notes)
        # The spawner's own reads do not count: it watches for the app's hello.
        deadline = asyncio.get_running_loop().time() + 15
        while "a fresh start" not in "\n".join(
            (await spawner.call("GetScreen", "t", pane)).body[0]
        ):
            assert asyncio.get_running_loop().time() < deadline, "the application never said hello"
            await asyncio.sleep(0.02)  # poll interval
        refused(await spawner.kill_if(pane, token, UNATTACHED), UNATTACHED, "resurrection")
        assert await spawner.alive(pane)

    run(service, test, n=1)


def test_conditional_kill_can_be_turned_off(tmp_root: Path) -> None:
    """conditional_kill = false: an older service's behaviour (docs/configuration.md)."""
    svc = Service(tmp_root, bus_address=None, config="conditional_kill = false\n").start()
    try:
        pane = svc.spawn(["sleep", "600"])
        features = svc.busctl(
            "get-property", "org.mux.Mux1", "/org/mux/Mux1", "org.mux.Mux1.Manager", "Features"
        ).stdout.split()
        assert features == ["t", str(FEATURE_LINKS)], "LINKS, not CONDITIONAL_KILL"
        refused = svc.muxctl("kill-if", str(pane))
        assert refused.returncode != 0
        assert "conditional kill is turned off" in refused.stderr
        assert svc.panes()[pane]["state"] == "running", "nothing was killed"
    finally:
        svc.stop()
