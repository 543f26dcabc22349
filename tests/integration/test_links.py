"""A satellite's side of federation (docs/federation.md#links): RegisterLink makes every
connection of one hub one caller for spawns and uses, so that a redial keeps the
spawner's exemption, and nobody else gets it."""

from __future__ import annotations

from dbus_fast import MessageType

from mux.protocol.names import FEATURE_CONDITIONAL_KILL, FEATURE_LINKS
from tests.harness import Service
from tests.integration.test_kill_if import UNATTACHED, Connection, killed, refused, run

HUB = bytes(range(16))
OTHER_HUB = bytes(range(1, 17))


async def _register(conn: Connection, hub_id: bytes) -> None:
    reply = await conn.call("RegisterLink", "ay", hub_id)
    assert reply.message_type is MessageType.METHOD_RETURN, reply.body


def test_features_say_links(service: Service) -> None:
    features = service.muxctl("status", "--json", check=True).stdout
    assert f'"features":{FEATURE_CONDITIONAL_KILL | FEATURE_LINKS}' in features


def test_a_redialed_link_keeps_the_spawners_exemption(service: Service) -> None:
    async def test(conns: list[Connection]) -> None:
        first_dial, redial, plain = conns
        await _register(first_dial, HUB)
        pane, token = await first_dial.spawn()
        await _register(redial, HUB)  # the link came back: a new connection
        reply = await redial.call("GetScreen", "t", pane)  # the spawner's own read
        assert reply.message_type is MessageType.METHOD_RETURN
        killed(await redial.kill_if(pane, token, UNATTACHED))
        assert not await plain.alive(pane)

    run(service, test, n=3)


def test_another_hub_or_a_plain_client_still_counts_as_use(service: Service) -> None:
    async def test(conns: list[Connection]) -> None:
        hub, other_hub, plain = conns
        await _register(hub, HUB)
        await _register(other_hub, OTHER_HUB)
        read_by_hub, token = await hub.spawn()
        read_by_plain, _ = await hub.spawn()
        await other_hub.call("GetScreen", "t", read_by_hub)
        await plain.call("GetScreen", "t", read_by_plain)
        for pane in (read_by_hub, read_by_plain):
            refused(await hub.kill_if(pane, token, UNATTACHED), "used by another client")
            assert await plain.alive(pane)

    run(service, test, n=3)


def test_a_hub_id_of_the_wrong_size_is_refused_by_name(service: Service) -> None:
    async def test(conns: list[Connection]) -> None:
        (conn,) = conns
        reply = await conn.call("RegisterLink", "ay", b"short")
        assert reply.message_type is MessageType.ERROR
        assert reply.error_name == "org.mux.Mux1.Error.InvalidArgument"
        assert "16 bytes, not 5" in reply.body[0]

    run(service, test, n=1)
