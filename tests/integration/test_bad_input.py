"""Bad input of every kind: each is refused with the right error name and a readable
message, and the service keeps running and answering afterwards (`refused` checks it).

Also: inputs that are not wrong but heavy (10 MB of input, a pane flooding its
terminal) must arrive intact without making the service unresponsive.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Callable

import pytest
from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from muxctl.errors import RemoteError
from tests.harness import (
    Service,
    assert_answers,
    gdbus_refused,
    pid_alive,
    refused,
    wait_for,
    wait_gone,
)

MANAGER = "org.mux.Mux1.Manager"
SPAWN = f"{MANAGER}.Spawn"
SLEEP = Variant("as", ["sleep", "60"])


def refuse_spawn(service: Service, error: str, options: dict[str, Variant]) -> str:
    return refused(service, error, "Spawn", "a{sv}", [options]).message


# -- Spawn options -------------------------------------------------------------------------


def test_unknown_option(service: Service) -> None:
    message = refuse_spawn(
        service, "InvalidArgument", {"argv": SLEEP, "colour": Variant("s", "red")}
    )
    assert "colour" in message
    message = gdbus_refused(
        service, "InvalidArgument", SPAWN, "{'argv': <['sleep', '60']>, 'Cwd': <'/'>}"
    )
    assert "Cwd" in message
    assert service.panes() == {}, "a refused Spawn starts nothing"


WRONG_TYPES = [
    ("rows", Variant("i", 10)),
    ("rows", Variant("u", 10)),
    ("cols", Variant("t", 80)),
    ("argv", Variant("s", "sleep 60")),
    ("cwd", Variant("as", ["/"])),
    ("env", Variant("a{sv}", {"A": Variant("s", "b")})),
    ("title", Variant("ay", b"title")),
    ("window", Variant("i", 1)),
    ("bind_instance", Variant("s", "yes")),
    ("resurrection", Variant("i", 1)),
]


def test_wrong_variant_type(service: Service) -> None:
    for name, variant in WRONG_TYPES:
        options = {"argv": SLEEP, name: variant}
        message = refuse_spawn(service, "InvalidArgument", options)
        assert name in message, message
    assert service.panes() == {}


def test_wrong_variant_type_through_gdbus(service: Service) -> None:
    # `<10>` is an int32 in GVariant text; rows must be a uint16.
    message = gdbus_refused(
        service, "InvalidArgument", SPAWN, "{'argv': <['sleep', '60']>, 'rows': <10>}"
    )
    assert "rows" in message
    message = gdbus_refused(
        service, "InvalidArgument", SPAWN, "{'argv': <['sleep', '60']>, 'bind_instance': <'true'>}"
    )
    assert "bind_instance" in message


def test_empty_argv(service: Service) -> None:
    assert "argv" in refuse_spawn(service, "InvalidArgument", {"argv": Variant("as", [])})
    gdbus_refused(service, "InvalidArgument", SPAWN, "{'argv': <@as []>}")


def test_argv_with_empty_program_name(service: Service) -> None:
    refuse_spawn(service, "InvalidArgument", {"argv": Variant("as", ["", "x"])})
    gdbus_refused(service, "InvalidArgument", SPAWN, "{'argv': <['']>}")


def test_empty_shell(service: Service) -> None:
    refuse_spawn(service, "InvalidArgument", {"shell": Variant("s", "")})


def test_argv_and_shell_together(service: Service) -> None:
    message = refuse_spawn(
        service, "InvalidArgument", {"argv": SLEEP, "shell": Variant("s", "bash")}
    )
    assert "argv" in message and "shell" in message


def test_relative_cwd(service: Service) -> None:
    for cwd in ("tmp", "./here", "../up", "~/home", ""):
        message = refuse_spawn(
            service, "InvalidArgument", {"argv": SLEEP, "cwd": Variant("s", cwd)}
        )
        assert "cwd" in message, message


def test_nonexistent_cwd(service: Service) -> None:
    missing = service.root / "no-such-dir"
    message = refuse_spawn(
        service, "SpawnFailed", {"argv": SLEEP, "cwd": Variant("s", str(missing))}
    )
    assert str(missing) in message and "not exist" in message


def test_cwd_that_is_a_file(service: Service) -> None:
    a_file = service.root / "a-file"
    a_file.write_text("not a directory\n")
    message = refuse_spawn(
        service, "SpawnFailed", {"argv": SLEEP, "cwd": Variant("s", str(a_file))}
    )
    assert "not a directory" in message


def test_missing_program(service: Service) -> None:
    for program in ("no-such-program-for-mux", "/nonexistent/bin/prog", "./relative-missing"):
        message = refuse_spawn(service, "SpawnFailed", {"argv": Variant("as", [program])})
        assert program in message, message


def test_missing_shell(service: Service) -> None:
    refuse_spawn(service, "SpawnFailed", {"shell": Variant("s", "/nonexistent/zsh")})


def test_non_executable_file(service: Service) -> None:
    script = service.root / "not-executable"
    script.write_text("#!/bin/sh\necho should-not-run\n")
    script.chmod(0o644)
    message = refuse_spawn(service, "SpawnFailed", {"argv": Variant("as", [str(script)])})
    assert "not executable" in message


def test_directory_as_program(service: Service) -> None:
    refuse_spawn(service, "SpawnFailed", {"argv": Variant("as", [str(service.root)])})


def test_executable_that_cannot_be_executed(service: Service) -> None:
    garbage = service.root / "garbage"
    garbage.write_bytes(b"\x7fELF-not-really\x00\x01\x02")
    garbage.chmod(0o755)
    refuse_spawn(service, "SpawnFailed", {"argv": Variant("as", [str(garbage)])})
    no_interpreter = service.root / "bad-shebang"
    no_interpreter.write_text("#!/nonexistent/interpreter\n")
    no_interpreter.chmod(0o755)
    refuse_spawn(service, "SpawnFailed", {"argv": Variant("as", [str(no_interpreter)])})
    assert service.panes() == {}


def test_bad_environment_variable_name(service: Service) -> None:
    for key in ("A=B", "=A", ""):
        env = Variant("a{ss}", {"GOOD": "1", key: "value"})
        message = refuse_spawn(service, "InvalidArgument", {"argv": SLEEP, "env": env})
        assert "environment" in message, message
    gdbus_refused(
        service, "InvalidArgument", SPAWN, "{'argv': <['sleep', '60']>, 'env': <{'X=Y': 'z'}>}"
    )


def test_spawn_size_out_of_range(service: Service) -> None:
    for name, value in (
        ("rows", 0),
        ("cols", 0),
        ("rows", 1001),
        ("cols", 2001),
        ("rows", 65535),
        ("cols", 65535),
    ):
        message = refuse_spawn(
            service, "InvalidArgument", {"argv": SLEEP, name: Variant("q", value)}
        )
        assert name in message, message


def test_title_too_long(service: Service) -> None:
    message = refuse_spawn(
        service, "InvalidArgument", {"argv": SLEEP, "title": Variant("s", "x" * 5000)}
    )
    assert "title" in message


def test_unknown_window(service: Service) -> None:
    refuse_spawn(service, "InvalidArgument", {"argv": SLEEP, "window": Variant("t", 77)})
    pane_id = service.spawn(["sleep", "60"])
    window = service.panes()[pane_id]["window"]
    service.call("Kill", "t", [pane_id])
    # The window went with its last pane.
    refuse_spawn(service, "InvalidArgument", {"argv": SLEEP, "window": Variant("t", window)})


# -- pane ids, signals, sizes ------------------------------------------------------------


def test_unknown_pane_id(service: Service) -> None:
    live = service.spawn(["sleep", "60"])
    for pane_id in (0, 7, 2**64 - 1):
        for member, signature, body in (
            ("Kill", "t", [pane_id]),
            ("Signal", "ts", [pane_id, "TERM"]),
            ("SendInput", "tay", [pane_id, b"x"]),
            ("Resize", "tqq", [pane_id, 10, 10]),
            ("GetScreen", "t", [pane_id]),
            ("KillIf", "tayas", [pane_id, b"", []]),
            ("OpenAttach", "t", [pane_id]),
        ):
            message = refused(service, "NoSuchPane", member, signature, body).message
            assert str(pane_id) in message, message
        gdbus_refused(service, "NoSuchPane", f"{MANAGER}.Kill", str(pane_id))
        result = service.busctl(
            "get-property",
            "org.mux.Mux1",
            f"/org/mux/Mux1/pane/{pane_id}",
            "org.mux.Mux1.Pane",
            "State",
            check=False,
        )
        assert result.returncode != 0
    assert service.panes()[live]["state"] == "running", "no other pane was touched"


def test_unknown_signal_name(service: Service) -> None:
    pane_id = service.spawn(["sleep", "60"])
    for name in ("FOO", "", "SIG", "RTMIN", "9", "TERM; true", "KILL\x7f"):
        message = refused(service, "InvalidArgument", "Signal", "ts", [pane_id, name]).message
        assert "signal" in message, message
    gdbus_refused(service, "InvalidArgument", f"{MANAGER}.Signal", str(pane_id), "'SIGFOO'")
    assert service.panes()[pane_id]["state"] == "running"


def test_resize_to_nothing(service: Service) -> None:
    pane_id = service.spawn(["sleep", "60"])
    for rows, cols in ((0, 80), (24, 0), (0, 0)):
        refused(service, "InvalidArgument", "Resize", "tqq", [pane_id, rows, cols])
    assert (service.panes()[pane_id]["rows"], service.panes()[pane_id]["cols"]) == (24, 80)


@pytest.mark.parametrize(("rows", "cols"), [(1001, 80), (24, 2001)])
def test_resize_beyond_what_spawn_accepts(service: Service, rows: int, cols: int) -> None:
    """Spawn refuses more than 1000 rows or 2000 columns; Resize must refuse them too.

    Without the bound any client can ask for 65535x65535, which makes the
    emulator allocate ~100 GB: muxd aborts (or the machine runs out of memory).
    This test asks only for a size just past the limit, which is harmless.
    """
    pane_id = service.spawn(["sleep", "60"])
    refused(service, "InvalidArgument", "Resize", "tqq", [pane_id, rows, cols])
    assert (service.panes()[pane_id]["rows"], service.panes()[pane_id]["cols"]) == (24, 80)


def test_wrong_method_signature(service: Service) -> None:
    pane_id = service.spawn(["sleep", "60"])
    result = service.busctl(
        "call", "org.mux.Mux1", "/org/mux/Mux1", MANAGER, "Kill", "s", str(pane_id), check=False
    )
    assert result.returncode != 0
    # Our client refuses to send a signature other than the declared one, so a raw
    # message carries it.
    reply = asyncio.run(_raw_call(service.bus_address, "Resize", "tuu", [pane_id, 10, 10]))
    assert reply.message_type is MessageType.ERROR
    assert reply.error_name is not None
    assert reply.error_name.startswith("org.freedesktop.DBus.Error.")
    with pytest.raises(RemoteError):
        service.call("NoSuchMethod", "t", [pane_id])
    assert_answers(service)
    assert service.panes()[pane_id]["state"] == "running"


async def _raw_call(address: str, member: str, signature: str, body: list[object]) -> Message:
    bus = await MessageBus(bus_address=address).connect()
    try:
        return await bus.call(
            Message(
                destination="org.mux.Mux1",
                path="/org/mux/Mux1",
                interface=MANAGER,
                member=member,
                signature=signature,
                body=body,
            )
        )
    finally:
        bus.disconnect()


# -- heavy input and output ------------------------------------------------------------


TEN_MB = 10 * 1024 * 1024


def test_ten_megabytes_of_input_arrive_intact(service: Service) -> None:
    """10 MB in one SendInput reach the program byte for byte; the service answers meanwhile.

    The program holds off reading until the test opens a FIFO, so the input is
    certainly still queued in the service while the test makes its other calls.
    """
    received = service.root / "received"
    gate = service.root / "gate"
    os.mkfifo(gate)
    script = (
        f"stty raw -echo -iexten; echo ready; read _ < '{gate}'; "
        f"head -c {TEN_MB} > '{received}'; echo; echo transfer-done"
    )
    pane_id = service.spawn(["sh", "-c", script])
    service.wait_screen(pane_id, "ready")
    data = os.urandom(TEN_MB)

    assert service.call("SendInput", "tay", [pane_id, data]) == []
    # The input is queued behind a program that does not read: the service answers.
    assert service.panes()[pane_id]["state"] == "running"
    assert "ready" in service.screen_text(pane_id)
    other = service.spawn(["sh", "-c", "echo other-pane-works; exec sleep 60"])
    service.wait_screen(other, "other-pane-works")

    with open(gate, "w") as g:
        g.write("go\n")
    service.wait_screen(pane_id, "transfer-done", timeout=60)
    assert received.stat().st_size == TEN_MB
    assert hashlib.sha256(received.read_bytes()).digest() == hashlib.sha256(data).digest()
    assert_answers(service)


def test_input_backlog_limit_answers_unavailable(make_service: Callable[[str], Service]) -> None:
    service = make_service("max_input_backlog_bytes = 65536\n")
    # In raw mode the terminal stops taking input once its buffer is full, so the
    # service must hold the rest; past the configured limit it refuses.
    pane_id = service.spawn(["sh", "-c", "stty raw -echo; echo raw; exec sleep 60"])
    service.wait_screen(pane_id, "raw")
    chunk = b"z" * 16384
    refusals: list[RemoteError] = []

    def send_until_refused() -> bool:
        try:
            service.call("SendInput", "tay", [pane_id, chunk])
        except RemoteError as e:
            refusals.append(e)
            return True
        return False

    wait_for(send_until_refused, what="SendInput to be refused once the backlog is full")
    error = refusals[0]
    assert error.name == "Unavailable", error
    assert "try again" in error.message
    assert_answers(service)
    assert service.panes()[pane_id]["state"] == "running"


def test_flooding_pane_does_not_starve_the_service(service: Service) -> None:
    flood = service.spawn(["yes", "flood-line"])
    flood_pid = service.panes()[flood]["pid"]
    service.wait_screen(flood, "flood-line")
    worker = service.spawn(["sh", "-c", 'while read -r line; do echo "echo:$line"; done'])

    # Calls of every kind keep answering while `yes` writes as fast as the terminal
    # takes it, and the other pane keeps working.
    for n in range(10):
        assert flood in service.panes()
        assert "flood-line" in service.screen_text(flood)
        service.call("SendInput", "tay", [worker, f"line-{n}\n".encode()])
        service.wait_screen(worker, f"echo:line-{n}")
    service.call("Resize", "tqq", [flood, 30, 100])
    assert service.panes()[flood]["rows"] == 30
    assert service.panes()[flood]["state"] == "running"
    assert pid_alive(flood_pid)
    assert "flood-line" in service.screen_text(flood)

    service.call("Kill", "t", [flood])
    wait_for(lambda: not pid_alive(flood_pid), what="the flooding process to end")
    assert flood not in service.panes()
    service.call("SendInput", "tay", [worker, b"after-flood\n"])
    service.wait_screen(worker, "echo:after-flood")
    assert_answers(service)


def test_rapid_spawn_and_kill(service: Service) -> None:
    """Many panes opened and closed back to back leave no process and no pane behind."""
    pids = []
    for _ in range(20):
        pane_id = service.spawn(["sh", "-c", "exec sleep 60"])
        pids.append(service.panes()[pane_id]["pid"])
        service.call("Kill", "t", [pane_id])
    assert service.panes() == {}
    for pid in pids:
        wait_gone(pid)
    assert_answers(service)


def test_emulator_failures_cost_the_screen_not_the_service(service: Service) -> None:
    """The emulator (avt) panics on a wide character squeezed into one column, whether a
    client resizes the pane or the program prints it. The pane keeps working with a reset
    screen, the sizes stay consistent, and no error name outside docs/dbus-api.md#errors
    reaches a client."""
    wide = service.spawn(["sh", "-c", "printf '漢字'; exec sleep 60"])
    service.wait_screen(wide, "漢字")
    out = service.busctl(
        "call", "org.mux.Mux1", "/org/mux/Mux1", MANAGER, "Resize", "tqq", str(wide), "24", "1"
    )
    assert out.returncode == 0, out.stderr
    assert (service.panes()[wide]["rows"], service.panes()[wide]["cols"]) == (24, 1)
    assert len(service.screen(wide)) == 24
    narrow = service.spawn(
        ["sh", "-c", "printf '\\033[?7l\\360\\237\\230\\200'; echo; echo still-here; sleep 60"],
        cols=1,
    )
    wait_for(lambda: service.panes()[narrow]["state"] == "running", what="the narrow pane")
    service.call("Resize", "tqq", [narrow, 24, 40])
    service.wait_screen(narrow, "")
    service.call("SendInput", "tay", [narrow, b"x"])
    assert_answers(service)


def test_input_larger_than_the_limit_is_refused_whole(
    make_service: Callable[[str], Service],
) -> None:
    """One SendInput larger than the backlog limit is InvalidArgument (no part of it is
    typed); one that fits is taken whole by a pane whose queue is empty, even if the
    terminal can take only part of it at once."""
    service = make_service("max_input_backlog_bytes = 65536\n")
    pane_id = service.spawn(["sh", "-c", "stty raw -echo; echo raw; exec sleep 60"])
    service.wait_screen(pane_id, "raw")
    error = refused(service, "InvalidArgument", "SendInput", "tay", [pane_id, b"y" * 65537])
    assert "send it in parts" in error.message
    service.call("SendInput", "tay", [pane_id, b"y" * 65536])  # more than the tty buffer
    assert_answers(service)
