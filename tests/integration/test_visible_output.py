"""SPEC §12, docs/muxctl.md#what-muxctl-prints: text from panes, clients and satellites that
muxctl shows a person has its control characters escaped (`\\x1b`, `\\u202e`); `--json` keeps
the exact string; OSC 7 and 9;9 paths with control characters are refused by the scanner, and
titles lose C0, DEL and C1 (bidi controls stay: they belong to right-to-left text).

Each test runs the real muxctl against a real muxd, and asserts on the bytes muxctl wrote.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbus_fast import Variant

from tests.harness import DBusDaemon, Service, wait_for

# What a terminal obeys: ESC, BEL, a C1 control encoded as UTF-8 (U+009B is CSI), DEL, and
# the bidi override U+202E, which reorders what a person reads.
RAW_CONTROLS = (b"\x1b", b"\x07", b"\x7f", "\u009b".encode(), "\u202e".encode())
PWNED_DIR = "d\x1b]0;PWNED\x07\x1b[2J"
ESCAPED_PWNED_DIR = "d\\x1b]0;PWNED\\x07\\x1b[2J"


def muxctl(service: Service, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """muxctl's exact bytes (not decoded: a terminal gets bytes)."""
    result = subprocess.run(
        [sys.executable, "-m", "muxctl", *args],
        check=False,
        env=service.env,
        capture_output=True,
        timeout=30,
    )
    if check:
        assert result.returncode == 0, (args, result.stderr)
    return result


def assert_no_raw_controls(output: bytes) -> None:
    """Only newlines (and a table's spaces) between the words: nothing a terminal obeys."""
    for control in RAW_CONTROLS:
        assert control not in output, (control, output)
    assert not any(byte < 0x20 and byte not in b"\n\t" for byte in output), output


def test_osc_7_with_control_bytes_is_refused_and_titles_lose_c1(service: Service) -> None:
    # The program has no shell token: any program may send OSC 7.
    script = (
        r"printf '\033]7;file:///tmp/%%1b]52;c;SGVsbG8=%%07\007'; "
        r"printf '\033]9;9;/tmp/\302\233x\007'; "
        r"printf '\033]7;file:///tmp/%%ffx\007'; "  # no UTF-8: ListPanes could not carry it
        r"printf '\033]2;a\302\233b\342\200\256c\007'; exec cat"
    )
    pane = service.spawn(["sh", "-c", script], cwd="/")
    # Output is scanned in order: once the title is there, the three paths went by.
    wait_for(lambda: "\u202e" in service.panes()[pane]["title"], what="the OSC 2 title")
    info = service.panes()[pane]
    assert info["title"] == "ab\u202ec"  # C1 gone, as C0 is; the bidi control stays
    assert (info["cwd"], info["cwd_source"]) == ("/", "launch")  # no path was taken

    listed = muxctl(service, "ls")
    assert_no_raw_controls(listed.stdout)
    assert "ab\\u202ec" in listed.stdout.decode()
    (entry,) = json.loads(muxctl(service, "ls", "--json").stdout)
    assert entry["title"] == "ab\u202ec"  # the exact string


def test_a_process_cwd_with_escapes_is_shown_escaped(
    tmp_root: Path, dbus_daemon: DBusDaemon
) -> None:
    directory = tmp_root / PWNED_DIR
    directory.mkdir()
    config = "cwd_sample_seconds = 0.2\n"
    service = Service(tmp_root, bus_address=dbus_daemon.address, config=config).start()
    try:
        pane = service.spawn(["sh", "-c", 'cd "$0" && exec cat', str(directory)], cwd="/")
        wait_for(lambda: service.cwd(pane) == (str(directory), "process"), what="the sample")
        listed = muxctl(service, "ls")
        assert_no_raw_controls(listed.stdout)
        assert ESCAPED_PWNED_DIR in listed.stdout.decode()
        (entry,) = json.loads(muxctl(service, "ls", "--json").stdout)
        assert entry["cwd"] == str(directory)
    finally:
        service.stop()


def test_an_integrated_shell_cd_into_such_a_directory_reports_nothing(
    service: Service, tmp_root: Path
) -> None:
    directory = tmp_root / PWNED_DIR
    directory.mkdir()
    pane = service.spawn(shell="bash", cwd=str(tmp_root))
    wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="bash's prompt")
    # Typed as printable text (readline would take a typed ESC as a key).
    line = r"""cd "$(printf 'd\033]0;PWNED\007\033[2J')" && echo cd-$((1+1))ok"""
    service.call("SendInput", "tay", [pane, line.encode() + b"\r"])
    service.wait_screen(pane, "cd-2ok")
    # The prompt after the cd (its OSC 7 included) went by before this title comes.
    service.call("SendInput", "tay", [pane, b"printf '\\033]2;%s\\007' after-cd\r"])
    wait_for(lambda: service.panes()[pane]["title"] == "after-cd", what="the title after cd")
    assert service.cwd(pane) == (str(tmp_root), "shell")
    assert_no_raw_controls(muxctl(service, "ls").stdout)


def test_a_spawn_title_loses_controls_and_ls_shows_no_raw_ones(service: Service) -> None:
    spawned = muxctl(service, "spawn", "--title", "x\x1b]0;PWNED\x07\u009by\u202e", "--", "cat")
    pane = int(spawned.stdout)
    assert service.panes()[pane]["title"] == "x]0;PWNEDy\u202e"
    listed = muxctl(service, "ls")
    assert_no_raw_controls(listed.stdout)
    assert "x]0;PWNEDy\\u202e" in listed.stdout.decode()


def test_windows_escapes_a_window_title(service: Service) -> None:
    pane = service.spawn(["cat"])
    window = service.panes()[pane]["window"]
    title = "w\x1b]0;PWNED\x07\u202e"
    service.call("SetWindow", "ta{sv}", [window, {"title": Variant("s", title)}])
    shown = muxctl(service, "windows")
    assert_no_raw_controls(shown.stdout)
    assert "w\\x1b]0;PWNED\\x07\\u202e" in shown.stdout.decode()
    (entry,) = json.loads(muxctl(service, "windows", "--json").stdout)
    assert entry["title"] == title


def test_capture_escapes_unless_raw(service: Service) -> None:
    pane = service.spawn(["sh", "-c", r"printf 'left\342\200\256right\n'; exec cat"])
    service.wait_screen(pane, "right")
    shown = muxctl(service, "capture", str(pane))
    assert_no_raw_controls(shown.stdout)
    assert shown.stdout.decode().splitlines()[0] == "left\\u202eright"
    raw = muxctl(service, "capture", "--raw", str(pane))
    assert raw.stdout.decode().splitlines()[0] == "left\u202eright"
    assert json.loads(muxctl(service, "capture", "--json", str(pane)).stdout)["lines"][0] == (
        "left\u202eright"
    )


def test_an_error_from_muxd_is_escaped(service: Service) -> None:
    # muxd's message names the directory as it was given.
    refused = muxctl(service, "spawn", "--cwd", "/nope\x1b]0;PWNED\x07", "--", "true", check=False)
    assert refused.returncode != 0
    assert_no_raw_controls(refused.stderr)
    assert b"/nope\\x1b]0;PWNED\\x07 does not exist" in refused.stderr


def test_where_and_status_escape_paths(tmp_root: Path) -> None:
    # Its private bus and attach socket are in a runtime dir whose name holds escapes.
    runtime = tmp_root / "r\x1b]0;PWNED\x07"
    runtime.mkdir(mode=0o700)
    service = Service(tmp_root, bus_address=None, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
    service.start()
    try:
        shown = muxctl(service, "where")
        assert_no_raw_controls(shown.stdout)
        assert "attach: " + str(tmp_root) + "/r\\x1b]0;PWNED\\x07/mux/" in shown.stdout.decode()
        # A D-Bus address is percent-escaped already (%1b): status shows it as it is.
        assert_no_raw_controls(muxctl(service, "status").stdout)
        exact = json.loads(muxctl(service, "where", "--json").stdout)
        assert exact["attach"].startswith(str(runtime) + "/")
    finally:
        service.stop()


@pytest.fixture
def failing_host(tmp_root: Path, dbus_daemon: DBusDaemon) -> Iterator[Service]:
    """A hub whose one host's ssh says something with escapes in it, and fails."""
    ssh = tmp_root / "fake-ssh"
    complaint = r"boom \033]52;c;SGVsbG8=\007 \302\233 \342\200\256\n"
    ssh.write_text(f"#!/bin/sh\nprintf '{complaint}' >&2\nexit 255\n")
    ssh.chmod(stat.S_IRWXU)
    config = f'ssh_command = ["{ssh}"]\n[hosts.sat]\ndestination = "sat.example"\n'
    service = Service(tmp_root, bus_address=dbus_daemon.address, config=config).start()
    try:
        yield service
    finally:
        service.stop()


def _last_error(service: Service) -> str:
    (hosts,) = service.call("ListHosts")
    (host,) = [{k: v.value for k, v in h.items()} for h in hosts]
    return str(host["last_error"])


def test_hosts_and_doctor_escape_ssh_complaints(failing_host: Service) -> None:
    service = failing_host
    wait_for(lambda: "boom" in _last_error(service), what="ssh's complaint in last_error")
    exact = _last_error(service)
    assert "\x1b]52;c;SGVsbG8=\x07" in exact

    shown = muxctl(service, "hosts")
    assert_no_raw_controls(shown.stdout)
    assert "boom \\x1b]52;c;SGVsbG8=\\x07 \\x9b \\u202e" in shown.stdout.decode()
    (entry,) = json.loads(muxctl(service, "hosts", "--json").stdout)
    assert "boom \x1b]52;c;SGVsbG8=\x07 \u009b \u202e" in entry["last_error"]

    doctor = muxctl(service, "doctor", check=False)
    assert_no_raw_controls(doctor.stdout + doctor.stderr)
    assert "boom \\x1b]52;c;SGVsbG8=\\x07" in doctor.stdout.decode()
    found = json.loads(muxctl(service, "doctor", "--json", check=False).stdout)
    (host,) = [f for f in found if f["check"] == "host sat"]
    assert "\x1b]52;c;SGVsbG8=\x07" in host["detail"]


# A stand-in for ssh that reaches a second muxd on this machine: the master holds its control
# socket, the remote command is that muxd's `muxctl where --json`, and a forward is a hard
# link to the satellite's socket (it reaches the same listener). What the hub does
# with what comes through is what it does over real ssh (tests/federation does that part).
LOCAL_SSH = r"""
import json, os, signal, socket, sys

args = sys.argv[1:]
control = args[args.index("-S") + 1]
if "-M" in args:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(control)
    listener.listen()
    while True:
        listener.accept()[0].close()
elif "-O" in args:
    for at, arg in enumerate(args):
        if arg == "-L":
            local, remote = args[at + 1].split(":", 1)
            # A hard link reaches the same listening socket, and is a socket of the
            # user's where the hub looks (a symbolic link is refused: socket_trust).
            os.link(remote, local)
else:
    with open(os.path.join(os.path.dirname(__file__), "satellite-env.json")) as f:
        env = json.load(f)
    os.execve(sys.executable, [sys.executable, "-m", "muxctl", "where", "--json"], env)
"""


@pytest.fixture
def satellite_and_hub(tmp_root: Path, dbus_daemon: DBusDaemon) -> Iterator[tuple[Service, Service]]:
    """A satellite muxd (its own bus) and a hub whose host `sat` is up, through LOCAL_SSH."""
    satellite_root, hub_root = tmp_root / "s", tmp_root / "h"
    satellite_root.mkdir()
    hub_root.mkdir()
    satellite = Service(satellite_root, bus_address=None, config="cwd_sample_seconds = 0.2\n")
    ssh = tmp_root / "local-ssh.py"
    ssh.write_text(LOCAL_SSH)
    (tmp_root / "satellite-env.json").write_text(json.dumps(satellite.env))
    config = (
        f"ssh_command = {json.dumps([sys.executable, str(ssh)])}\n"
        '[hosts.sat]\ndestination = "sat.example"\n'
    )
    hub = Service(hub_root, bus_address=dbus_daemon.address, config=config)
    satellite.start()
    try:
        hub.start()
        try:
            wait_for(lambda: _host(hub)["state"] == "up", what=f"sat up\n{hub.log()[-2000:]}")
            yield satellite, hub
        finally:
            hub.stop()
    finally:
        satellite.stop()


def _host(service: Service) -> dict[str, object]:
    (hosts,) = service.call("ListHosts")
    (host,) = [{k: v.value for k, v in h.items()} for h in hosts]
    return host


def test_ls_all_hosts_escapes_a_satellites_panes(
    satellite_and_hub: tuple[Service, Service], tmp_root: Path
) -> None:
    satellite, hub = satellite_and_hub
    directory = tmp_root / PWNED_DIR
    directory.mkdir()
    pane = satellite.spawn(["sh", "-c", 'cd "$0" && exec cat', str(directory)], title="s\u202et")
    wait_for(lambda: satellite.cwd(pane) == (str(directory), "process"), what="the sample")

    for args in (("ls", "--all-hosts"), ("--host", "sat", "ls")):
        shown = muxctl(hub, *args)
        assert_no_raw_controls(shown.stdout)
        assert ESCAPED_PWNED_DIR in shown.stdout.decode() and "s\\u202et" in shown.stdout.decode()
    entries = json.loads(muxctl(hub, "ls", "--all-hosts", "--json").stdout)
    (entry,) = [e for e in entries if e["host"] == "sat"]
    assert (entry["cwd"], entry["title"]) == (str(directory), "s\u202et")
