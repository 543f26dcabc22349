"""A hub muxd drives a satellite muxd over a real sshd in another network namespace
(docs/federation.md): hosts, links, host objects, the hub's ledger and KillIf."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from mux.protocol.names import host_path
from tests.federation.conftest import TwoHosts
from tests.harness import BusMonitor, Service, wait_for

UNATTACHED = "UNATTACHED_SINCE_SPAWN"
MANAGER = "org.mux.Mux1.Manager"
ERROR = "org.mux.Mux1.Error."


def hub_service(net: TwoHosts, config: str = "", *, configured: bool = True) -> Service:
    """The hub's muxd, in the hub's network namespace, with `sat` in its configuration."""
    text = f"ssh_command = {json.dumps(net.ssh_command)}\nlog_level = 'DEBUG'\n{config}"
    if configured:
        text += f"[hosts.sat]\ndestination = {json.dumps(net.destination)}\n"
    return Service(net.hub_root, bus_address=None, config=text, argv_prefix=net.hub_prefix)


@pytest.fixture
def linked(two_hosts: TwoHosts) -> Iterator[tuple[TwoHosts, Service]]:
    """A satellite muxd, and a hub whose host `sat` is up."""
    two_hosts.satellite.start()
    hub = hub_service(two_hosts).start()
    try:
        wait_state(hub, "sat", "up")
        yield two_hosts, hub
    finally:
        hub.stop()
        two_hosts.satellite.stop()


def hosts(hub: Service) -> dict[str, dict[str, Any]]:
    result = hub.muxctl("hosts", "--json", check=True)
    return {host["name"]: host for host in json.loads(result.stdout)}


def wait_state(hub: Service, name: str, state: str, timeout: float = 20) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        host = hosts(hub).get(name)
        return host if host is not None and host["state"] == state else None

    try:
        return wait_for(reached, timeout, what=f"host {name} to be {state}")
    except AssertionError:
        raise AssertionError(f"{hosts(hub)}\n{hub.log()[-3000:]}") from None


class Consumer:
    """One connection to the hub's bus: one consumer of the hub, for its ledger."""

    def __init__(self, bus: MessageBus, host: str = "sat") -> None:
        self.bus = bus
        self.path = host_path(host)

    async def call(self, member: str, signature: str = "", *body: Any) -> Message:
        reply = await self.bus.call(
            Message(
                destination="org.mux.Mux1",
                path=self.path,
                interface=MANAGER,
                member=member,
                signature=signature,
                body=list(body),
            )
        )
        assert reply is not None
        return reply

    async def spawn(self, *argv: str, bind: bool = True) -> tuple[int, bytes]:
        options = {"argv": Variant("as", list(argv or ("sleep", "600")))}
        if bind:
            options["bind_instance"] = Variant("b", True)
        reply = await self.call("Spawn", "a{sv}", options)
        assert reply.message_type is MessageType.METHOD_RETURN, reply.body
        return int(reply.body[0]), bytes(reply.body[1])

    async def kill_if(self, pane: int, token: bytes, *conditions: str) -> Message:
        return await self.call("KillIf", "tayas", pane, token, list(conditions))


def with_consumers(hub: Service, count: int, test: Any) -> None:
    async def main() -> None:
        buses = [await MessageBus(bus_address=hub.bus_address).connect() for _ in range(count)]
        try:
            await test([Consumer(bus) for bus in buses])
        finally:
            for bus in buses:
                bus.disconnect()

    asyncio.run(main())


def error(reply: Message, name: str, *needles: str) -> None:
    assert reply.message_type is MessageType.ERROR, reply.body
    assert reply.error_name == ERROR + name, (reply.error_name, reply.body)
    for needle in needles:
        assert needle in reply.body[0], reply.body[0]


def satellite_panes(net: TwoHosts) -> dict[int, dict[str, Any]]:
    return net.satellite.panes()


# -- a host, up, driven through the hub --------------------------------------------------


def test_a_host_is_driven_through_the_hub(linked: tuple[TwoHosts, Service]) -> None:
    net, hub = linked
    host = hosts(hub)["sat"]
    assert host["destination"] == "sat" and host["last_error"] == ""
    assert host["features"] & 0x00600000 == 0x00600000  # CONDITIONAL_KILL | LINKS
    spawned = hub.muxctl("--host", "sat", "spawn", "--title", "far", "--", "cat", check=True)
    pane = int(spawned.stdout.split()[0])
    on_satellite = satellite_panes(net)[pane]
    assert on_satellite["title"] == "far" and on_satellite["state"] == "running"
    assert on_satellite["cwd"] == str(net.satellite.home), "the satellite's home, not ours"
    listed = json.loads(hub.muxctl("--host", "sat", "ls", "--json", check=True).stdout)
    assert [p["id"] for p in listed] == [pane]
    hub.muxctl("--host", "sat", "send", str(pane), "hello from the hub", "--enter", check=True)
    wait_for(
        lambda: "hello from the hub" in hub.muxctl("--host", "sat", "capture", str(pane)).stdout,
        what="the echo through the hub",
    )
    # An independent client sees the host object and its methods.
    out = hub.busctl("call", "org.mux.Mux1", host_path("sat"), MANAGER, "ListPanes").stdout
    assert '"far"' in out
    doctor = json.loads(hub.muxctl("doctor", "--json").stdout)
    assert {"check": "host sat", "status": "ok"}.items() <= doctor[-1].items()
    every = hub.muxctl("ls", "--all-hosts", check=True).stdout
    assert "HOST" in every and "sat" in every and "far" in every
    bound = hub.muxctl("--host", "sat", "spawn", "--bind-instance", "--", "sleep", "600")
    other, token = bound.stdout.split()[:2]
    hub.muxctl(
        "--host",
        "sat",
        "kill-if",
        other,
        "--instance",
        token,
        "--unattached-since-spawn",
        check=True,
    )
    assert int(other) not in satellite_panes(net)
    hub.muxctl("--host", "sat", "signal", str(pane), "TERM", check=True)
    wait_for(lambda: satellite_panes(net)[pane]["state"] == "exited", what="cat to end")
    hub.muxctl("--host", "sat", "kill", str(pane), check=True)
    assert pane not in satellite_panes(net)


def test_host_states_are_signalled(two_hosts: TwoHosts) -> None:
    net = two_hosts
    net.satellite.start()
    hub = hub_service(net, configured=False).start()
    try:
        with BusMonitor(hub.bus_address) as monitor:
            hub.muxctl("hosts", "add", "sat", net.destination, check=True)
            for state in ("dialing", "up"):
                monitor.wait_signal(
                    "HostStateChanged", lambda m, s=state: m.body == ["sat", s], timeout=20
                )
    finally:
        hub.stop()
        net.satellite.stop()


def test_added_hosts_are_kept_and_removing_one_leaves_its_panes(two_hosts: TwoHosts) -> None:
    net = two_hosts
    net.satellite.start()
    hub = hub_service(net, configured=False).start()
    try:
        assert hosts(hub) == {}
        hub.muxctl("hosts", "add", "sat", net.destination, check=True)
        wait_state(hub, "sat", "up")
        pane = int(hub.muxctl("--host", "sat", "spawn", "--", "sleep", "600", check=True).stdout)
        hub.stop()
        hub.start()  # a cold start: the added host is read back and dialed
        wait_state(hub, "sat", "up")
        hub.muxctl("hosts", "rm", "sat", check=True)
        assert hosts(hub) == {}
        refused = hub.muxctl("--host", "sat", "ls")
        assert refused.returncode != 0 and "there is no host 'sat'" in refused.stderr
        assert satellite_panes(net)[pane]["state"] == "running", "the satellite's panes stay"
        assert not (net.hub_root / "run" / "mux" / "hosts" / "sat").exists()
    finally:
        hub.stop()
        net.satellite.stop()


def test_bad_host_input_is_refused_by_name(linked: tuple[TwoHosts, Service]) -> None:
    _net, hub = linked
    for args, needle in [
        (("hosts", "add", "bad name", "x"), "host name 'bad name' is not valid"),
        (("hosts", "add", "x", "--", "-oProxyCommand=sh"), "not an ssh destination"),
        (("hosts", "add", "sat", "elsewhere"), "exists already"),
        (("hosts", "rm", "sat"), "config.toml"),
        (("hosts", "rm", "nowhere"), "there is no host 'nowhere'"),
        (("--host", "nowhere", "ls"), "there is no host 'nowhere'"),
        (("--host", "a/b", "ls"), "host name 'a/b' is not valid"),
        (("--host", "sat", "snapshot"), "--host goes with a pane verb"),
    ]:
        result = hub.muxctl(*args)
        assert result.returncode != 0, args
        assert needle in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr and str(hub.root) not in result.stderr
    busctl = hub.busctl(
        "call",
        "org.mux.Mux1",
        "/org/mux/Mux1",
        MANAGER,
        "AddHost",
        "sa{sv}",
        "y",
        "1",
        "muxctl",
        "s",
        "rm -rf ~",
        check=False,
    )
    assert "unknown AddHost option 'muxctl'" in busctl.stderr


# -- conditional kill through the hub ----------------------------------------------------


def test_the_spawner_may_kill_through_the_hub_and_another_consumer_may_not(
    linked: tuple[TwoHosts, Service],
) -> None:
    net, hub = linked

    async def test(consumers: list[Consumer]) -> None:
        spawner, other = consumers
        mine, token = await spawner.spawn()
        read, _ = await spawner.spawn()
        unbound, empty = await spawner.spawn(bind=False)
        assert len(token) == 16 and empty == b""
        reply = await spawner.call("GetScreen", "t", mine)  # the spawner's own read
        assert reply.message_type is MessageType.METHOD_RETURN
        assert (await spawner.kill_if(mine, token, UNATTACHED)).message_type is (
            MessageType.METHOD_RETURN
        )
        await other.call("GetScreen", "t", read)
        # The satellite sees one link for both consumers, and would kill: the hub refuses.
        error(await spawner.kill_if(read, token, UNATTACHED), "PreconditionFailed", "another")
        error(await other.kill_if(unbound, b"", UNATTACHED), "PreconditionFailed", "token")
        panes = await asyncio.to_thread(satellite_panes, net)
        assert mine not in panes
        assert panes[read]["state"] == "running" and panes[unbound]["state"] == "running"

    with_consumers(hub, 2, test)


def test_a_satellite_without_conditional_kill_gets_no_kill_if(two_hosts: TwoHosts) -> None:
    net = two_hosts
    net.satellite = Service(
        net.satellite.root, bus_address=None, config="conditional_kill = false\n"
    )
    net.satellite.start()
    hub = hub_service(net).start()
    monitor = subprocess.Popen(
        [
            "dbus-monitor",
            "--address",
            net.satellite.bus_address,
            "type='method_call',member='KillIf'",
            "type='method_call',member='Kill'",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        wait_state(hub, "sat", "up")

        async def test(consumers: list[Consumer]) -> None:
            (spawner,) = consumers
            pane, token = await spawner.spawn()
            error(
                await spawner.kill_if(pane, token, UNATTACHED), "NotSupported", "nothing was sent"
            )
            # A call the monitor does see: it is listening.
            await spawner.call("Kill", "t", pane)

        with_consumers(hub, 1, test)
    finally:
        monitor.terminate()
        seen, _ = monitor.communicate(timeout=10)
        hub.stop()
        net.satellite.stop()
    assert "member=Kill\n" in seen, "the monitor heard the Kill that followed"
    assert "member=KillIf" not in seen


def test_a_cold_restarted_satellite_is_not_killed_by_an_old_token(
    linked: tuple[TwoHosts, Service],
) -> None:
    net, hub = linked

    spawned: list[tuple[int, bytes]] = []

    async def spawn(consumers: list[Consumer]) -> None:
        spawned.append(await consumers[0].spawn())

    with_consumers(hub, 1, spawn)
    (old_pane, old_token) = spawned[0]
    net.satellite.stop()
    (net.satellite.state / "mux" / "session.json").unlink(missing_ok=True)  # nothing restored
    net.satellite.start()
    wait_state(hub, "sat", "up", timeout=40)

    async def test(consumers: list[Consumer]) -> None:
        (consumer,) = consumers
        new_pane, new_token = await consumer.spawn()
        assert new_pane == old_pane and new_token != old_token  # ids start again at 1
        error(
            await consumer.kill_if(old_pane, old_token, UNATTACHED),
            "PreconditionFailed",
            "instance",
        )

    with_consumers(hub, 1, test)
    assert satellite_panes(net)[old_pane]["state"] == "running"


def test_the_hub_forgets_the_oldest_of_1025_spawns(linked: tuple[TwoHosts, Service]) -> None:
    _net, hub = linked

    async def test(consumers: list[Consumer]) -> None:
        (spawner,) = consumers
        spawned = [await spawner.spawn("true") for _ in range(1025)]
        (oldest, token), (newest, _) = spawned[0], spawned[-1]
        error(await spawner.kill_if(oldest, token, UNATTACHED), "PreconditionFailed", "no record")
        reply = await spawner.kill_if(newest, token, UNATTACHED)
        assert reply.message_type is MessageType.METHOD_RETURN, reply.body

    with_consumers(hub, 1, test)


# -- refusals and faults ----------------------------------------------------------------


def test_a_changed_host_key_refuses_the_host_and_relays_nothing(
    linked: tuple[TwoHosts, Service],
) -> None:
    net, hub = linked
    net.replace_host_key()
    net.drop_connections()  # the link in place outlives sshd's restart, as it would anywhere
    host = wait_state(hub, "sat", "refused", timeout=40)
    assert "host key" in host["last_error"]
    refused = hub.muxctl("--host", "sat", "spawn", "--", "sleep", "1")
    assert refused.returncode != 0 and "not connected (refused)" in refused.stderr
    assert satellite_panes(net) == {}
    doctor = hub.muxctl("doctor", "--json")
    assert doctor.returncode == 1
    (finding,) = [f for f in json.loads(doctor.stdout) if f["check"] == "host sat"]
    assert finding["status"] == "fail" and "accept it" in finding["fix"]


def test_refused_forwarding_is_named(two_hosts: TwoHosts) -> None:
    net = two_hosts
    net.restart_sshd(allow_forwarding=False)
    net.satellite.start()
    hub = hub_service(net).start()
    try:
        wait_for(
            lambda: "AllowStreamLocalForwarding" in hosts(hub)["sat"]["last_error"],
            timeout=20,
            what=f"the refused forward in last_error\n{hub.log()[-2000:]}",
        )
        assert hosts(hub)["sat"]["state"] in ("down", "dialing")
    finally:
        hub.stop()
        net.satellite.stop()


def test_a_satellite_without_mux_is_named(two_hosts: TwoHosts) -> None:
    net = two_hosts
    config = "muxctl = '/nonexistent/muxctl'\n"
    hub = Service(
        net.hub_root,
        bus_address=None,
        config=f"ssh_command = {json.dumps(net.ssh_command)}\n[hosts.sat]\n"
        f"destination = {json.dumps(net.destination)}\n{config}",
        argv_prefix=net.hub_prefix,
    ).start()
    try:
        wait_for(
            lambda: "mux is not installed on sat" in hosts(hub)["sat"]["last_error"],
            timeout=20,
            what="the missing muxctl in last_error",
        )
    finally:
        hub.stop()


def test_a_link_flap_heals_by_itself_and_keeps_the_spawners_exemption(
    linked: tuple[TwoHosts, Service],
) -> None:
    net, hub = linked

    async def test(consumers: list[Consumer]) -> None:
        (spawner,) = consumers
        pane, token = await spawner.spawn()
        net.link_down()
        await asyncio.to_thread(wait_state, hub, "sat", "down")
        reply = await spawner.call("GetScreen", "t", pane)
        error(reply, "Unavailable", "not connected")
        net.link_up()
        await asyncio.to_thread(wait_state, hub, "sat", "up")
        # Through a new connection at the satellite: RegisterLink keeps it the spawner's.
        assert (await spawner.call("GetScreen", "t", pane)).message_type is (
            MessageType.METHOD_RETURN
        )
        reply = await spawner.kill_if(pane, token, UNATTACHED)
        assert reply.message_type is MessageType.METHOD_RETURN, reply.body

    with_consumers(hub, 1, test)


def test_an_address_change_redials_at_once(linked: tuple[TwoHosts, Service]) -> None:
    net, hub = linked
    net.change_hub_address()
    wait_for(lambda: "link lost" in hub.log(), timeout=10, what="the hub to notice")
    wait_state(hub, "sat", "up", timeout=10)
    assert hub.muxctl("--host", "sat", "ls").returncode == 0
