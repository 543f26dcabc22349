"""A satellite's pane in a real terminal, through the hub: `muxctl --host sat attach`
(OpenAttach on the host object, the satellite's attach socket forwarded by ssh),
and `muxctl --host sat new`. A tmux window plays the user's terminal. Also: an
upgrade of the hub keeps its id and ledger (docs/federation.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from dbus_fast import MessageType

from tests.federation.conftest import TwoHosts
from tests.federation.test_hub import UNATTACHED, Consumer, hub_service, wait_state, with_consumers
from tests.harness import Service, wait_for
from tests.outer_tmux import OuterTmux

BASH = ["bash", "--norc", "--noprofile", "-i"]


@pytest.fixture
def hub(two_hosts: TwoHosts) -> Iterator[Service]:
    two_hosts.satellite.start()
    service = hub_service(two_hosts).start()
    try:
        wait_state(service, "sat", "up")
        yield service
    finally:
        service.stop()
        two_hosts.satellite.stop()


def test_a_satellites_pane_in_a_terminal_through_the_hub(two_hosts: TwoHosts, hub: Service) -> None:
    satellite = two_hosts.satellite
    pane = satellite.spawn(BASH, env={"PS1": "far$ "})
    satellite.wait_screen(pane, "far$")
    satellite.call("SendInput", "tay", [pane, b"echo before-$((6*7))\r"])
    satellite.wait_screen(pane, "before-42")
    terminal = OuterTmux(hub.root, hub)
    try:
        window = terminal.open(terminal.muxctl_line("--host", "sat", "attach", str(pane)))
        terminal.wait_shown(window, "before-42")  # the repaint, across ssh
        # The status line on the last row: the pane as the host lists it, and the host.
        shown = terminal.wait_shown(window, f"{pane}: bash · ")
        assert shown.rstrip().splitlines()[-1].endswith("@ sat"), shown
        satellite.wait_size(pane, 29, 100, what="the satellite's pane a row shorter")
        terminal.type_line(window, "echo typed-$((6*7))")
        terminal.wait_shown(window, "typed-42")
        satellite.wait_screen(pane, "typed-42")
        terminal.send_keys(window, "C-\\")
        shown = terminal.wait_shown(window, "STATUS=0")
        assert f"[detached from pane {pane}" in shown
        assert satellite.panes()[pane]["state"] == "running"

        new = terminal.open(terminal.muxctl_line("--host", "sat", "new", "--", *BASH))
        terminal.type_line(new, "echo new-$((6*7)) on $XDG_RUNTIME_DIR")
        terminal.wait_shown(new, f"new-42 on {satellite.xdg_runtime}")
        terminal.type_line(new, "exit 3")
        terminal.wait_shown(new, "exited with status 3")
    finally:
        terminal.kill()


def test_an_upgraded_hub_keeps_its_ledger_and_its_id(hub: Service) -> None:
    # The spawner's connection outlives the upgrade: it is the ledger's "who". The
    # redial after it registers the same hub id: the satellite's exemption holds too.
    async def around_the_upgrade(consumers: list[Consumer]) -> None:
        (spawner,) = consumers
        pane, token = await spawner.spawn()
        upgraded = await asyncio.to_thread(hub.muxctl, "upgrade")
        assert upgraded.returncode == 0, upgraded.stderr
        await asyncio.to_thread(wait_state, hub, "sat", "up")
        reply = await spawner.kill_if(pane, token, UNATTACHED)
        assert reply.message_type is MessageType.METHOD_RETURN, reply.body

    with_consumers(hub, 1, around_the_upgrade)
    assert "host sat is up" in hub.log()


def test_a_satellites_upgrade_keeps_the_spawners_exemption(
    two_hosts: TwoHosts, hub: Service
) -> None:
    satellite = two_hosts.satellite

    async def around_the_upgrade(consumers: list[Consumer]) -> None:
        (spawner,) = consumers
        pane, token = await spawner.spawn()
        upgraded = await asyncio.to_thread(satellite.muxctl, "upgrade")
        assert upgraded.returncode == 0, upgraded.stderr
        await asyncio.to_thread(
            wait_for,
            lambda: "registered again" in hub.log(),
            what="the hub to register its link with the new muxd",
        )
        # The spawner's read after the upgrade is still the spawner's at the satellite.
        reply = await spawner.call("GetScreen", "t", pane)
        assert reply.message_type is MessageType.METHOD_RETURN, reply.body
        reply = await spawner.kill_if(pane, token, UNATTACHED)
        assert reply.message_type is MessageType.METHOD_RETURN, reply.body

    with_consumers(hub, 1, around_the_upgrade)
