"""The issue's 'done when': a pane spawned through busctl shows its output in muxctl capture."""

from pathlib import Path

from tests.harness import Service, wait_for


def test_busctl_spawn_then_muxctl_capture(service: Service) -> None:
    out = service.busctl(
        "call",
        "org.mux.Mux1",
        "/org/mux/Mux1",
        "org.mux.Mux1.Manager",
        "Spawn",
        "a{sv}",
        "1",
        "argv",
        "as",
        "3",
        "sh",
        "-c",
        "echo hello-from-busctl; exec sleep 60",
    ).stdout
    assert out.startswith("tayo 1 0 ")
    wait_for(
        lambda: "hello-from-busctl" in service.muxctl("capture", "1").stdout,
        what="the output in muxctl capture",
    )


def test_private_bus_when_no_session_bus(private_service: Service) -> None:
    assert (private_service.runtime / "bus").is_socket()
    pane = private_service.spawn(["sh", "-c", "echo on-private-bus; exec sleep 60"])
    private_service.wait_screen(pane, "on-private-bus")
    status = private_service.muxctl("status", "--json", check=True).stdout
    assert '"bus":"private"' in status


def test_a_runtime_path_with_spaces_and_commas(tmp_root: Path) -> None:
    """D-Bus addresses escape such bytes; mux must too, for its private bus."""
    root = tmp_root / "my dir,1"
    root.mkdir()
    svc = Service(root, bus_address=None).start()
    try:
        pane = svc.muxctl("spawn", "--", "sh", "-c", "echo spaced-out; exec sleep 60", check=True)
        wait_for(
            lambda: "spaced-out" in svc.muxctl("capture", pane.stdout.strip()).stdout,
            what="the pane's output",
        )
    finally:
        svc.stop()
