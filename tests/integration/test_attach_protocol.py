"""The attach socket at the protocol level: repaint, stream, several clients, a client
that stops reading, bad input, another uid, and OpenAttach from an independent D-Bus
client (jeepney)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from avt import Vt

from mux.protocol import attach as proto
from tests.attach_client import ProtocolClient
from tests.harness import Service, wait_for


def connect(service: Service) -> ProtocolClient:
    return ProtocolClient.connect(service.runtime / "mux.sock")


def emulate(data: bytes, rows: int, cols: int) -> Vt:
    vt = Vt(cols, rows, scrollback_limit=0)
    vt.feed_str(data.decode(errors="replace"))
    return vt


def visible(vt: Vt) -> list[str]:
    return [line.text.rstrip() for line in vt.view()]


def test_repaint_shows_the_screen_colours_cursor_and_alternate_screen(service: Service) -> None:
    pane = service.spawn(
        ["sh", "-c", r"printf 'plain\n\033[1;31mred\033[0m\n\033[?1049hALT'; exec cat"],
        rows=10,
        cols=40,
    )
    service.wait_screen(pane, "ALT")
    client = connect(service)
    attached = client.attach(pane)
    assert (attached.pane, attached.rows, attached.cols) == (pane, 10, 40)
    repaint = client.wait_for(proto.Repaint)
    # A terminal in any state shows the pane's screen once it has been fed the repaint.
    terminal = Vt(40, 10, scrollback_limit=0)
    terminal.feed_str("garbage\x1b[?1049h\x1b[5;8r\x1b[31mmore")
    terminal.feed_str(repaint.data.decode())
    assert visible(terminal) == service.screen(pane)
    assert (terminal.cursor.row, terminal.cursor.col) == (2, 3)  # after "ALT" on row 3
    assert "\x1b[?1047h" in repaint.data.decode()  # the alternate screen is on
    assert "\x1b[0;1;31mred" in repaint.data.decode() or "\x1b[0;31;1mred" in repaint.data.decode()
    assert b"\x9b" not in repaint.data and "\x9b" not in repaint.data.decode()


def test_nothing_lost_or_repeated_between_the_repaint_and_the_stream(service: Service) -> None:
    # The pane counts without pause while clients attach, one after another. It prints
    # 0 once its echo is off, then waits for a line before it counts from 1.
    count = 60000
    counter = (
        "import os, sys, termios\n"
        "mode = termios.tcgetattr(0); mode[3] &= ~termios.ECHO\n"
        "termios.tcsetattr(0, termios.TCSANOW, mode)\n"
        "os.write(1, b'0\\n'); sys.stdin.readline()\n"
        f"for i in range(1, {count + 1}): os.write(1, b'%d\\n' % i)\n"
    )
    pane = service.spawn([sys.executable, "-c", counter], rows=8, cols=20)
    service.wait_screen(pane, "0")
    clients = [connect(service)]
    clients[0].attach(pane)
    service.call("SendInput", "tay", [pane, b"go\r"])
    for _ in range(3):
        # The next one attaches once the count has moved on for the previous one.
        previous = clients[-1]
        previous.wait_until(
            lambda c=previous: any(isinstance(f, proto.Output) for f in c.frames),  # type: ignore[misc]
            "the count moving on",
        )
        clients.append(connect(service))
        clients[-1].attach(pane)
    for client in clients:
        client.wait_for(proto.Exited, timeout=60)
    for client in clients:
        repaint = client.wait_for(proto.Repaint).data
        later = b"".join(
            f.data
            for f in client.frames[client.frames.index(proto.Repaint(repaint)) + 1 :]
            if isinstance(f, proto.Output)
        )
        screen = emulate(repaint, 8, 20)
        rows = visible(screen)
        cursor = screen.cursor
        complete = [int(r) for r in rows[: cursor.row] if r]
        stream = (rows[cursor.row][: cursor.col] + later.decode()).split("\r\n")
        assert stream[-1] == ""
        numbers = [int(n) for n in stream[:-1]]
        first = complete[-1] + 1 if complete else 0
        assert numbers == list(range(first, count + 1)), "a gap or a repeat at the attach"


def test_two_clients_get_the_same_stream_and_either_can_type(service: Service) -> None:
    pane = service.spawn(["sh", "-c", "echo ready; exec cat"])
    service.wait_screen(pane, "ready")
    first, second = connect(service), connect(service)
    first.attach(pane)
    second.attach(pane)
    first.send(proto.Input(b"from-first\r"))
    second.send(proto.Input(b"from-second\r"))
    for client in (first, second):
        client.wait_until(
            lambda c=client: (
                c.output_text().count("from-second\r\n") == 2  # type: ignore[misc]
                and c.output_text().count("from-first\r\n") == 2
            ),
            "both echoes, twice each (the terminal's echo and cat's)",
        )

    def outputs(c: ProtocolClient) -> bytes:
        return b"".join(f.data for f in c.frames if isinstance(f, proto.Output))

    assert outputs(first) == outputs(second)
    first.send(proto.Detach())
    first.wait_for(proto.Detached)
    first.wait_closed()
    second.send(proto.Input(b"after-detach\r"))
    second.wait_until(lambda: "after-detach" in second.output_text(), "the echo")
    assert service.panes()[pane]["state"] == "running"


def test_a_client_that_stops_reading_never_blocks_the_pane(service: Service) -> None:
    # 40 MB of output; the stalled client's buffer is bounded (1 MiB by default).
    pane = service.spawn(
        ["sh", "-c", "read go; head -c 40000000 /dev/zero | tr '\\0' x; echo; echo FLOOD-DONE"],
        rows=10,
        cols=50,
    )
    stalled, reader = connect(service), connect(service)
    stalled.attach(pane)
    stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader.attach(pane)
    rss_before = _rss_kib(service)
    reader.send(proto.Input(b"go\r"))
    # The pane finishes although one client reads nothing at all.
    service.wait_screen(pane, "FLOOD-DONE", timeout=60)
    reader.wait_until(lambda: "FLOOD-DONE" in reader.output_text()[-200:], "the end", timeout=60)
    assert _rss_kib(service) - rss_before < 24 * 1024, "memory grew with the stalled client"
    # When the stalled client reads again it is resynchronised with a repaint and
    # ends up showing exactly the pane's screen.
    stalled.wait_until(
        lambda: sum(isinstance(f, proto.Repaint) for f in stalled.frames) >= 2, "a second repaint"
    )

    def shows_final_screen() -> bool:
        stalled.receive(0.05)
        return visible(emulate(stalled.screen_bytes(), 10, 50)) == service.screen(pane)

    wait_for(shows_final_screen, what="the stalled client to show the final screen")
    assert "fell behind" in service.log()


def test_input_is_never_dropped_for_a_pane_that_reads_slowly(service: Service) -> None:
    pane = service.spawn(
        ["sh", "-c", "stty raw -echo; echo raw; sleep 1; head -c 3000000 | wc -c"],
        rows=5,
        cols=40,
    )
    # (Before `stty raw`, a canonical-mode line would cap what the terminal takes.)
    service.wait_screen(pane, "raw")
    client = connect(service)
    client.attach(pane)
    chunk = b"y" * 60000
    for _ in range(50):
        client.send(proto.Input(chunk))
    service.wait_screen(pane, "3000000", timeout=60)


def test_protocol_errors_are_answered_and_the_service_goes_on(service: Service) -> None:
    pane = service.spawn(["sh", "-c", "echo ready; exec cat"])
    service.wait_screen(pane, "ready")
    cases: list[tuple[bytes, str]] = [
        (b"\x7f\x00\x00\x00\x00", "ProtocolError"),  # unknown type
        (proto.HEADER.pack(proto.FrameType.INPUT, 1 << 30), "ProtocolError"),  # too long
        (proto.encode(proto.Attach(pane)), "ProtocolError"),  # before HELLO
        (proto.encode(proto.Hello(2)), "VersionUnsupported"),
        (proto.HEADER.pack(proto.FrameType.HELLO, 3) + b"{{{", "ProtocolError"),
        (proto.encode(proto.Hello()) + proto.encode(proto.Input(b"x")), "ProtocolError"),
        (proto.encode(proto.Hello()) + proto.encode(proto.Welcome()), "ProtocolError"),
    ]
    for data, code in cases:
        client = connect(service)
        client.sock.sendall(data)
        error = client.wait_for(proto.Error)
        assert error.code == code, (data, error)
        assert "/" not in error.message
        client.wait_closed()
    # Refusals that leave the connection open: a missing pane, a bad size.
    client = connect(service)
    client.send(proto.Hello(), proto.Attach(4242))
    assert client.wait_for(proto.Error) == proto.Error("NoSuchPane", "there is no pane 4242")
    client.send(proto.Resize(0, 80))
    client.wait_until(
        lambda: len([f for f in client.frames if isinstance(f, proto.Error)]) == 2,
        "the second refusal",
    )
    assert [f for f in client.frames if isinstance(f, proto.Error)][1].code == "InvalidArgument"
    client.send(proto.Attach(pane))
    client.wait_for(proto.Attached)
    client.send(proto.Input(b"still-fine\r"))
    client.wait_until(lambda: "still-fine" in client.output_text(), "the echo")


def test_exit_and_kill_end_the_attached_clients(service: Service) -> None:
    exiting = service.spawn(["sh", "-c", "read x; echo last-words; exit 5"])
    killed = service.spawn(["sleep", "60"])
    watcher, victim = connect(service), connect(service)
    watcher.attach(exiting)
    victim.attach(killed)
    watcher.send(proto.Input(b"\r"))
    assert watcher.wait_for(proto.Exited).status == 5
    assert "last-words" in watcher.output_text()  # all output comes before EXITED
    watcher.wait_closed()
    service.call("Kill", "t", [killed])
    assert victim.wait_for(proto.Error) == proto.Error("PaneClosed", f"pane {killed} was closed")
    victim.wait_closed()
    # Attaching to an exited pane shows its last screen, then EXITED.
    late = connect(service)
    late.attach(exiting)
    assert late.wait_for(proto.Exited).status == 5
    assert "last-words" in late.output_text()


def test_attach_zero_means_the_pane_used_last(service: Service) -> None:
    first = service.spawn(["sh", "-c", "echo one; exec cat"])
    second = service.spawn(["sh", "-c", "echo two; exec cat"])
    service.wait_screen(second, "two")
    client = connect(service)
    assert client.attach(0).pane == second
    client.close()
    client = connect(service)
    client.attach(first)
    client.close()
    assert connect(service).attach(0).pane == first


def test_a_peer_of_another_uid_is_refused(service: Service, tmp_root: Path) -> None:
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a client as another user")
    # A second name for the socket, reachable by everyone, so that only the
    # peer-credential check stands between `nobody` and the service.
    shared = tmp_root / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    tmp_root.chmod(0o755)
    reachable = shared / "mux.sock"
    os.link(service.runtime / "mux.sock", reachable)
    reachable.chmod(0o666)
    probe = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1])\n"
        "try:\n"
        f"    s.sendall({proto.encode(proto.Hello())!r})\n"
        "    s.settimeout(10)\n"
        "    print(repr(s.recv(100)))\n"
        "except OSError as e:\n"
        "    print(type(e).__name__)\n"
    )
    result = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            sys.executable,
            "-c",
            probe,
            str(reachable),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # Closed without a word (before or after the HELLO got there).
    assert result.stdout.strip() in ("b''", "BrokenPipeError", "ConnectionResetError")
    assert "attach connection from uid 65534" in service.log()
    reachable.chmod(0o600)  # the same inode as the service's socket
    # The owner is still served on the same socket.
    owner = connect(service)
    owner.send(proto.Hello())
    owner.wait_for(proto.Welcome)


def test_open_attach_from_an_independent_client(service: Service) -> None:
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    pane = service.spawn(["sh", "-c", "echo shown-before; exec cat"], rows=6, cols=30)
    service.wait_screen(pane, "shown-before")
    manager = DBusAddress(
        "/org/mux/Mux1", bus_name="org.mux.Mux1", interface="org.mux.Mux1.Manager"
    )
    with open_dbus_connection(service.bus_address, enable_fds=True) as bus:
        fds_before = _open_fds(service)
        reply = bus.send_and_get_reply(new_method_call(manager, "OpenAttach", "t", (pane,)))
        assert reply.header.message_type.name == "method_return", reply.body
        client = ProtocolClient(reply.body[0].to_socket())
        # Already attached: no HELLO, no ATTACH.
        assert client.wait_for(proto.Attached) == proto.Attached(pane, 6, 30)
        assert "shown-before" in client.wait_for(proto.Repaint).data.decode()
        client.send(proto.Input(b"typed-over-openattach\r"))
        client.wait_until(lambda: "typed-over-openattach" in client.output_text(), "the echo")
        service.wait_screen(pane, "typed-over-openattach")
        client.send(proto.Detach())
        client.wait_for(proto.Detached)
        client.wait_closed()
        # The service kept no copy of the client's end (and closed its own).
        wait_for(lambda: _open_fds(service) <= fds_before, what="the service's fds back")

        error = bus.send_and_get_reply(new_method_call(manager, "OpenAttach", "t", (pane + 99,)))
        assert error.header.fields[4] == "org.mux.Mux1.Error.NoSuchPane"  # ERROR_NAME


def test_fds_sent_to_the_service_unasked_are_closed(service: Service) -> None:
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    manager = DBusAddress(
        "/org/mux/Mux1", bus_name="org.mux.Mux1", interface="org.mux.Mux1.Manager"
    )
    with open_dbus_connection(service.bus_address, enable_fds=True) as bus:
        bus.send_and_get_reply(new_method_call(manager, "ListPanes"))
        before = _open_fds(service)
        for _ in range(20):
            with open(os.devnull, "rb") as f:
                _send_with_fd(bus, manager, f.fileno())
        wait_for(lambda: _open_fds(service) <= before, what="no fd kept by the service")


def _send_with_fd(bus: object, manager: object, fd: int) -> None:
    from jeepney import new_method_call

    message = new_method_call(manager, "GetScreen", "th", (1, fd))  # type: ignore[arg-type]
    reply = bus.send_and_get_reply(message, timeout=10)  # type: ignore[attr-defined]
    assert reply.header.message_type.name == "error"


def _open_fds(service: Service) -> int:
    assert service.process is not None
    return len(os.listdir(f"/proc/{service.process.pid}/fd"))


def _rss_kib(service: Service) -> int:
    assert service.process is not None
    for line in Path(f"/proc/{service.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_any_resize_repaints_every_client(service: Service) -> None:
    pane = service.spawn(["sh", "-c", "echo sized; exec cat"], rows=10, cols=40)
    service.wait_screen(pane, "sized")
    client = connect(service)
    client.attach(pane)
    client.wait_for(proto.Repaint)
    service.call("Resize", "tqq", [pane, 12, 50])  # not through this client
    client.wait_until(
        lambda: sum(isinstance(f, proto.Repaint) for f in client.frames) == 2, "a second repaint"
    )
    assert visible(emulate(client.screen_bytes(), 12, 50))[0] == "sized"


def test_a_character_split_at_the_attach_is_whole_on_the_client(service: Service) -> None:
    # The pane writes the first byte of "é", the client attaches, then the rest comes.
    pane = service.spawn(
        ["sh", "-c", r"stty -echo; printf 'half:\303'; read x; printf '\251 whole\n'; exec cat"],
        rows=5,
        cols=30,
    )
    service.wait_screen(pane, "half:")
    client = connect(service)
    client.attach(pane)
    client.send(proto.Input(b"\r"))
    client.wait_until(lambda: "whole" in client.output_text(), "the rest of the line")
    assert "half:é whole" in "\n".join(visible(emulate(client.screen_bytes(), 5, 30)))


def test_switching_panes_while_behind_keeps_the_bound(service: Service) -> None:
    flood = "read go; head -c 30000000 /dev/zero | tr '\\0' y; echo; echo FLOOD-DONE; exec cat"
    first = service.spawn(["sh", "-c", flood], rows=10, cols=50)
    second = service.spawn(["sh", "-c", flood], rows=10, cols=50)
    client = connect(service)
    client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.attach(first)
    rss_before = _rss_kib(service)
    service.call("SendInput", "tay", [first, b"\r"])
    service.wait_screen(first, "FLOOD-DONE", timeout=60)
    client.send(proto.Attach(second))  # while far behind, never reading
    service.call("SendInput", "tay", [second, b"\r"])
    service.wait_screen(second, "FLOOD-DONE", timeout=60)
    assert _rss_kib(service) - rss_before < 24 * 1024, "memory grew with the stalled client"

    def shows_second() -> bool:
        client.receive(0.05)
        attached = [f for f in client.frames if isinstance(f, proto.Attached)]
        return len(attached) == 2 and "FLOOD-DONE" in client.output_text()[-300:]

    wait_for(shows_second, what="the client to catch up on the second pane")


def test_open_attach_racing_a_kill_ends_with_pane_closed(service: Service) -> None:
    from jeepney import DBusAddress, HeaderFields, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    manager = DBusAddress(
        "/org/mux/Mux1", bus_name="org.mux.Mux1", interface="org.mux.Mux1.Manager"
    )
    with open_dbus_connection(service.bus_address, enable_fds=True) as bus:
        for _ in range(5):
            pane = service.spawn(["sleep", "60"])
            # Both calls leave before the first answer is read.
            serial = next(bus.outgoing_serial)
            bus.send_message(new_method_call(manager, "OpenAttach", "t", (pane,)), serial=serial)
            bus.send_message(new_method_call(manager, "Kill", "t", (pane,)))
            reply = bus.receive(timeout=10)
            while reply.header.fields.get(HeaderFields.reply_serial) != serial:
                reply = bus.receive(timeout=10)
            client = ProtocolClient(reply.body[0].to_socket())
            error = client.wait_for(proto.Error)
            assert error == proto.Error("PaneClosed", f"pane {pane} was closed")
            client.wait_closed()


def test_the_repaint_sets_mouse_and_bracketed_paste_again(service: Service) -> None:
    pane = service.spawn(["sh", "-c", r"printf '\033[?1002;1006h\033[?2004hset'; exec cat"])
    service.wait_screen(pane, "set")
    client = connect(service)
    client.attach(pane)
    repaint = client.wait_for(proto.Repaint).data
    for mode in (b"1002", b"1006", b"2004"):
        assert b"\x1b[?" + mode + b"h" in repaint
    assert b"\x1b[?1000l" in repaint  # and the ones the program left off are off
