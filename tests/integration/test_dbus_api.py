"""docs/dbus-api.md, method by method: through our own client and through busctl and gdbus.

Every pane runs a real program on a real PTY; what a test asserts about a pane
(its cwd, environment, terminal size) it checks inside the pane as well as in
what the service reports.
"""

from __future__ import annotations

import ast
import codecs
import importlib.metadata
import os
import pwd
import re
import shlex
from typing import Any

import pytest
from dbus_fast import Variant

import mux
from tests.harness import (
    BusMonitor,
    Service,
    assert_answers,
    gdbus_refused,
    pid_alive,
    refused,
    wait_for,
    wait_gone,
)

BUS_NAME = "org.mux.Mux1"
ROOT = "/org/mux/Mux1"
MANAGER = "org.mux.Mux1.Manager"
PANE = "org.mux.Mux1.Pane"
PROPERTIES = "org.freedesktop.DBus.Properties"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
CONDITIONAL_KILL = 0x00200000

# docs/dbus-api.md#pane-objects: the pane object's properties and the ListPanes fields,
# with their types.
PANE_PROPERTY_TYPES = {
    "Id": "t",
    "Pid": "u",
    "Argv": "as",
    "Cwd": "s",
    "CwdSource": "s",
    "Title": "s",
    "Window": "t",
    "State": "s",
    "ExitStatus": "i",
    "Rows": "q",
    "Cols": "q",
    "Notice": "s",
}
LIST_PANES_TYPES = {
    "id": "t",
    "pid": "u",
    "argv": "as",
    "cwd": "s",
    "cwd_source": "s",
    "title": "s",
    "window": "t",
    "state": "s",
    "exit_status": "i",
}
# How gdbus prints a value of each type (int32 and strings carry no type prefix).
GDBUS_TYPE_PREFIX = {"t": "uint64 ", "u": "uint32 ", "q": "uint16 ", "i": "", "s": "'", "as": "["}


def pane_path(pane_id: int) -> str:
    return f"{ROOT}/pane/{pane_id}"


def busctl_words(output: str) -> list[str]:
    """busctl's reply split into words; busctl quotes strings and C-escapes non-ASCII bytes."""
    return [codecs.escape_decode(word.encode())[0].decode() for word in shlex.split(output)]


def busctl_manager(service: Service, member: str, *args: str) -> list[str]:
    """busctl call on the Manager, the reply split into words."""
    return busctl_words(service.busctl("call", BUS_NAME, ROOT, MANAGER, member, *args).stdout)


def gdbus_manager(service: Service, member: str, *args: str) -> str:
    return service.gdbus_call(f"{MANAGER}.{member}", *args).stdout.strip()


def gdbus_bytes(text: str) -> bytes:
    """The first `ay` in gdbus output: `[byte 0x01, ...]`, or `b'...'` when it ends in NUL."""
    listed = re.search(r"\[byte ([^\]]*)\]", text)
    if listed:
        return bytes(int(b, 16) for b in listed.group(1).split(", "))
    quoted = re.search(r"""b('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""", text)
    assert quoted, f"no byte array in {text!r}"
    # GVariant prints a NUL-terminated byte string without its NUL; escapes are C's.
    return bytes(ast.literal_eval("b" + quoted.group(1))) + b"\0"


def spawn_reply(service: Service, options: dict[str, Variant]) -> tuple[int, bytes, str]:
    pane_id, instance, path = service.call("Spawn", "a{sv}", [options])
    return int(pane_id), bytes(instance), str(path)


def pane_property(service: Service, pane_id: int, name: str) -> Variant:
    (variant,) = service.call(
        "Get", "ss", [PANE, name], interface=PROPERTIES, path=pane_path(pane_id)
    )
    assert isinstance(variant, Variant)
    return variant


def manager_property(service: Service, name: str) -> Variant:
    (variant,) = service.call("Get", "ss", [MANAGER, name], interface=PROPERTIES)
    assert isinstance(variant, Variant)
    return variant


def list_panes_raw(service: Service) -> dict[int, dict[str, Variant]]:
    (entries,) = service.call("ListPanes")
    return {int(entry["id"].value): entry for entry in entries}


# Always there besides the panes: the desktops' search objects (docs/desktop.md#pane-search).
SEARCH_OBJECTS = {
    "/org/mux/Mux1/SearchProvider": {"org.gnome.Shell.SearchProvider2": {}},
    "/org/mux/Mux1/KRunner": {"org.kde.krunner1": {}},
}


def managed_objects(service: Service) -> dict[str, dict[str, dict[str, Variant]]]:
    """The pane objects of GetManagedObjects (the search objects checked and left out)."""
    (objects,) = service.call("GetManagedObjects", interface=OBJECT_MANAGER)
    for path, interfaces in SEARCH_OBJECTS.items():
        assert objects.pop(path) == interfaces
    return dict(objects)


def cmdline(pid: int) -> list[bytes]:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().split(b"\0")[:-1]


def send_text(service: Service, pane_id: int, text: str) -> None:
    service.call("SendInput", "tay", [pane_id, text.encode()])


def stty_size_after(service: Service, pane_id: int, rows: int, cols: int) -> None:
    """Ask the `while read` loop in the pane for `stty size`; wait for `rows cols` to show."""
    send_text(service, pane_id, "\n")
    service.wait_screen(pane_id, f"size={rows} {cols}")


# A pane that answers every line of input with its terminal's size, as the
# kernel reports it (`stty size` reads TIOCGWINSZ on its stdin).
STTY_LOOP = ["sh", "-c", 'stty -echo; while read -r _; do echo "size=$(stty size)"; done']


# -- Spawn ----------------------------------------------------------------------


def test_spawn_explicit_argv_runs_exactly_that_argv(service: Service) -> None:
    argv = ["sh", "-c", 'echo "args:$0:$1:$2"; exec sleep 60', "zero", "one two", "three"]
    pane_id, instance, path = spawn_reply(service, {"argv": Variant("as", argv)})
    assert pane_id == 1, "pane ids start at 1 in a new id space"
    assert instance == b"", "without bind_instance the instance is an empty ay"
    assert path == pane_path(pane_id)
    service.wait_screen(pane_id, "args:zero:one two:three")
    pane = service.panes()[pane_id]
    assert pane["argv"] == argv
    # The real process is the one the service names: it goes on to exec sleep.
    wait_for(lambda: cmdline(pane["pid"]) == [b"sleep", b"60"], what="the pane's exec of sleep")
    second, _, second_path = spawn_reply(service, {"argv": Variant("as", ["sleep", "60"])})
    assert second == pane_id + 1
    assert second_path == pane_path(second)


def test_spawn_cwd_env_title(service: Service) -> None:
    work = service.root / "work dir"
    work.mkdir()
    pane_id = service.spawn(
        ["sh", "-c", 'pwd; echo "var=$MUX_TEST_VAR term=$TERM"; exec sleep 60'],
        cwd=str(work),
        env={"MUX_TEST_VAR": "hello world", "TERM": "vt100"},
        title="my title",
    )
    service.wait_screen(pane_id, "var=hello world term=vt100")
    assert str(work) in service.screen(pane_id)
    pane = service.panes()[pane_id]
    assert pane["cwd"] == str(work)
    assert pane["title"] == "my title"
    assert os.readlink(f"/proc/{pane['pid']}/cwd") == str(work)
    with open(f"/proc/{pane['pid']}/environ", "rb") as f:
        environ = f.read().split(b"\0")
    assert b"MUX_TEST_VAR=hello world" in environ
    assert b"TERM=vt100" in environ, "an env override wins over the service's TERM"
    assert pane_property(service, pane_id, "Cwd").value == str(work)
    assert pane_property(service, pane_id, "Title").value == "my title"


def test_spawn_defaults(service: Service) -> None:
    first = service.spawn(["sh", "-c", 'echo "size=$(stty size) dir=$(pwd)"; exec sleep 60'])
    second = service.spawn(["sleep", "60"])
    service.wait_screen(first, f"size=24 80 dir={service.home}")
    panes = service.panes()
    assert panes[first]["cwd"] == str(service.home), "no cwd: the home directory"
    assert panes[first]["cwd_source"] == "launch"
    assert panes[first]["title"] == "sh", "no title: the program's name"
    assert panes[second]["title"] == "sleep"
    assert panes[first]["window"] != panes[second]["window"], "no window: a new window each"
    assert panes[first]["window"] >= 1
    assert (panes[first]["rows"], panes[first]["cols"]) == (24, 80)


def test_spawn_into_existing_window(service: Service) -> None:
    first = service.spawn(["sleep", "60"])
    window = service.panes()[first]["window"]
    same = service.spawn(["sleep", "60"], window=window)
    other = service.spawn(["sleep", "60"], window=0)
    words = busctl_manager(
        service, "Spawn", "a{sv}", "2", "argv", "as", "2", "sleep", "60", "window", "t", str(window)
    )
    assert words[0] == "tayo"
    by_busctl = int(words[1])
    panes = service.panes()
    assert panes[same]["window"] == window
    assert panes[by_busctl]["window"] == window
    assert panes[other]["window"] not in (0, window), "window 0 means a new window"
    assert pane_property(service, same, "Window").value == window


def test_spawn_rows_cols_reach_the_terminal(service: Service) -> None:
    pane_id = service.spawn(STTY_LOOP, rows=10, cols=40)
    stty_size_after(service, pane_id, 10, 40)
    assert len(service.screen(pane_id)) == 10
    assert pane_property(service, pane_id, "Rows") == Variant("q", 10)
    assert pane_property(service, pane_id, "Cols") == Variant("q", 40)


def test_bind_instance_returns_the_16_byte_token(service: Service) -> None:
    argv = Variant("as", ["sleep", "60"])
    _, token, _ = spawn_reply(service, {"argv": argv, "bind_instance": Variant("b", True)})
    assert len(token) == 16
    assert token != bytes(16)
    _, again, _ = spawn_reply(service, {"argv": argv, "bind_instance": Variant("b", True)})
    assert again == token, "one id space, one token"
    _, unbound, _ = spawn_reply(service, {"argv": argv, "bind_instance": Variant("b", False)})
    assert unbound == b""

    words = busctl_manager(
        service,
        "Spawn",
        "a{sv}",
        "2",
        "argv",
        "as",
        "2",
        "sleep",
        "60",
        "bind_instance",
        "b",
        "true",
    )
    assert words[0] == "tayo"
    assert words[2] == "16"
    assert bytes(int(b) for b in words[3:19]) == token
    words = busctl_manager(service, "Spawn", "a{sv}", "1", "argv", "as", "2", "sleep", "60")
    assert words[2] == "0", "without bind_instance busctl sees an empty ay"

    out = gdbus_manager(service, "Spawn", "{'argv': <['sleep', '60']>, 'bind_instance': <true>}")
    assert gdbus_bytes(out) == token


def test_spawn_shell_launches(service: Service) -> None:
    sh = service.spawn(shell="sh")
    pane = service.panes()[sh]
    assert os.path.isabs(pane["argv"][0])
    assert os.path.samefile(pane["argv"][0], "/bin/sh")
    send_text(service, sh, "echo result=$((6*7))\n")
    service.wait_screen(sh, "result=42")

    login = service.spawn()  # neither argv nor shell: the user's login shell
    login_shell = pwd.getpwuid(os.getuid()).pw_shell
    assert os.path.samefile(service.panes()[login]["argv"][0], login_shell)
    send_text(service, login, "echo login=$((6*7))\n")
    service.wait_screen(login, "login=42")


def test_spawn_through_busctl_and_gdbus(service: Service) -> None:
    words = busctl_manager(
        service,
        "Spawn",
        "a{sv}",
        "3",
        "argv",
        "as",
        "3",
        "sh",
        "-c",
        'echo "from-busctl $(stty size)"; exec sleep 60',
        "title",
        "s",
        "busctl pane",
        "rows",
        "q",
        "12",
    )
    assert words[0] == "tayo"
    by_busctl = int(words[1])
    assert words[2:] == ["0", pane_path(by_busctl)]
    service.wait_screen(by_busctl, "from-busctl 12 80")
    assert service.panes()[by_busctl]["title"] == "busctl pane"

    cwd = service.root / "gdbus-cwd"
    cwd.mkdir()
    out = gdbus_manager(
        service,
        "Spawn",
        "{'argv': <['sh', '-c', 'echo \"$A in $(pwd) $(stty size)\"; exec sleep 60']>, "
        f"'env': <{{'A': 'from-gdbus'}}>, 'cwd': <'{cwd}'>, 'cols': <uint16 50>}}",
    )
    match = re.fullmatch(r"\(uint64 (\d+), @ay \[\], objectpath '(.+)'\)", out)
    assert match, out
    by_gdbus = int(match.group(1))
    assert match.group(2) == pane_path(by_gdbus)
    service.wait_screen(by_gdbus, f"from-gdbus in {cwd} 24 50")


# -- Kill, Signal, SendInput, Resize, GetScreen -------------------------------------


def test_kill_closes_the_pane(service: Service) -> None:
    ours = service.spawn(["sleep", "60"])
    by_busctl = service.spawn(["sleep", "60"])
    by_gdbus = service.spawn(["sleep", "60"])
    pids = {pane_id: pane["pid"] for pane_id, pane in service.panes().items()}

    assert service.call("Kill", "t", [ours]) == []
    busctl_manager(service, "Kill", "t", str(by_busctl))
    assert gdbus_manager(service, "Kill", str(by_gdbus)) == "()"

    assert service.panes() == {}
    assert managed_objects(service) == {}
    for pane_id, pid in pids.items():
        wait_gone(pid, what=f"pane {pane_id}'s process to end")
        result = service.busctl(
            "get-property", BUS_NAME, pane_path(pane_id), PANE, "State", check=False
        )
        assert result.returncode != 0, "a killed pane's object is gone from the bus"
    refused(service, "NoSuchPane", "Kill", "t", [ours])
    gdbus_refused(service, "NoSuchPane", f"{MANAGER}.Kill", str(by_gdbus))


def test_kill_closes_an_exited_pane(service: Service) -> None:
    pane_id = service.spawn(["true"])
    service.wait_exited(pane_id)
    service.call("Kill", "t", [pane_id])
    assert pane_id not in service.panes()


def test_signal_through_each_client(service: Service) -> None:
    ours = service.spawn(["sleep", "60"])
    by_busctl = service.spawn(["sleep", "60"])
    by_gdbus = service.spawn(["sleep", "60"])
    service.call("Signal", "ts", [ours, "TERM"])
    busctl_manager(service, "Signal", "ts", str(by_busctl), "INT")
    gdbus_manager(service, "Signal", str(by_gdbus), "'SIGKILL'")
    assert service.wait_exited(ours)["exit_status"] == -15
    assert service.wait_exited(by_busctl)["exit_status"] == -2
    assert service.wait_exited(by_gdbus)["exit_status"] == -9


def test_send_input_through_each_client(service: Service) -> None:
    reader = ["sh", "-c", 'while read -r line; do echo "got:$line."; done']
    ours = service.spawn(reader)
    by_busctl = service.spawn(reader)
    by_gdbus = service.spawn(reader)
    service.call("SendInput", "tay", [ours, "héllo ✓\n".encode()])
    data = b"busctl\n"
    busctl_manager(
        service, "SendInput", "tay", str(by_busctl), str(len(data)), *(str(b) for b in data)
    )
    data = b"gdbus\n"
    gdbus_manager(
        service, "SendInput", str(by_gdbus), "[" + ", ".join(f"byte 0x{b:02x}" for b in data) + "]"
    )
    service.wait_screen(ours, "got:héllo ✓.")
    service.wait_screen(by_busctl, "got:busctl.")
    service.wait_screen(by_gdbus, "got:gdbus.")
    assert service.call("SendInput", "tay", [ours, b""]) == [], "empty input is a no-op"


def test_resize_reaches_the_terminal_and_the_properties(service: Service) -> None:
    pane_id = service.spawn(STTY_LOOP)
    stty_size_after(service, pane_id, 24, 80)
    path = pane_path(pane_id)
    with BusMonitor(service.bus_address) as monitor:
        assert service.call("Resize", "tqq", [pane_id, 30, 100]) == []
        stty_size_after(service, pane_id, 30, 100)
        assert pane_property(service, pane_id, "Rows").value == 30
        assert pane_property(service, pane_id, "Cols").value == 100
        assert len(service.screen(pane_id)) == 30
        changed = monitor.wait_signal(
            "PropertiesChanged", lambda m: "Rows" in m.body[1], interface=PROPERTIES, path=path
        )
        assert changed.body[0] == PANE
        assert changed.body[1]["Rows"] == Variant("q", 30)
        assert changed.body[1]["Cols"] == Variant("q", 100)

    busctl_manager(service, "Resize", "tqq", str(pane_id), "12", "60")
    stty_size_after(service, pane_id, 12, 60)
    assert service.busctl("get-property", BUS_NAME, path, PANE, "Rows", "Cols").stdout.split() == [
        "q",
        "12",
        "q",
        "60",
    ]
    gdbus_manager(service, "Resize", str(pane_id), "20", "70")
    stty_size_after(service, pane_id, 20, 70)
    assert service.panes()[pane_id]["rows"] == 20
    assert service.panes()[pane_id]["cols"] == 70


def test_get_screen_through_each_client(service: Service) -> None:
    pane_id = service.spawn(
        ["sh", "-c", "printf 'line1\\nline2   \\n  héllo ✓\\n'; exec sleep 60"], rows=6, cols=30
    )
    service.wait_screen(pane_id, "héllo")
    lines = service.screen(pane_id)
    assert lines == ["line1", "line2", "  héllo ✓", "", "", ""], "one row each, blanks trimmed"

    words = busctl_manager(service, "GetScreen", "t", str(pane_id))
    assert words == ["as", "6", "line1", "line2", "  héllo ✓", "", "", ""]
    out = gdbus_manager(service, "GetScreen", str(pane_id))
    assert out == "(['line1', 'line2', '  héllo ✓', '', '', ''],)"


# -- ListPanes and properties -------------------------------------------------------------


def test_list_panes_has_every_documented_field(service: Service) -> None:
    argv = ["sh", "-c", "exit 5"]
    running = service.spawn(["sleep", "60"], title="t1")
    exited = service.spawn(argv)
    service.wait_exited(exited)
    entries = list_panes_raw(service)
    assert set(entries) == {running, exited}
    for entry in entries.values():
        for field, signature in LIST_PANES_TYPES.items():
            assert field in entry, f"ListPanes lacks {field}"
            assert entry[field].signature == signature, f"{field} is not '{signature}'"
    live = {k: v.value for k, v in entries[running].items()}
    assert live["id"] == running
    assert pid_alive(live["pid"])
    assert cmdline(live["pid"]) == [b"sleep", b"60"]
    assert live["argv"] == ["sleep", "60"]
    assert live["cwd"] == str(service.home)
    assert live["cwd_source"] == "launch"
    assert live["title"] == "t1"
    assert live["window"] >= 1
    assert live["state"] == "running"
    assert live["exit_status"] == 0
    dead = {k: v.value for k, v in entries[exited].items()}
    assert (dead["state"], dead["exit_status"], dead["argv"]) == ("exited", 5, argv)

    out = service.busctl("call", BUS_NAME, ROOT, MANAGER, "ListPanes").stdout
    assert out.startswith("aa{sv} 2 ")
    for needle in (
        f'"id" t {running}',
        f'"pid" u {live["pid"]}',
        '"argv" as 2 "sleep" "60"',
        f'"cwd" s "{service.home}"',
        '"cwd_source" s "launch"',
        '"title" s "t1"',
        f'"window" t {live["window"]}',
        '"state" s "running"',
        '"exit_status" i 0',
        '"state" s "exited"',
        '"exit_status" i 5',
    ):
        assert needle in out, f"busctl ListPanes lacks {needle}: {out}"

    out = gdbus_manager(service, "ListPanes")
    for needle in (
        f"'id': <uint64 {running}>",
        f"'pid': <uint32 {live['pid']}>",
        "'argv': <['sleep', '60']>",
        f"'cwd': <'{service.home}'>",
        "'cwd_source': <'launch'>",
        "'title': <'t1'>",
        f"'window': <uint64 {live['window']}>",
        "'state': <'running'>",
        "'exit_status': <0>",
        "'exit_status': <5>",
    ):
        assert needle in out, f"gdbus ListPanes lacks {needle}: {out}"


def test_manager_properties_version_and_features(service: Service) -> None:
    version = manager_property(service, "Version")
    assert version.signature == "s"
    assert version.value == mux.__version__ == importlib.metadata.version("mux")
    features = manager_property(service, "Features")
    assert features.signature == "t"
    # KillIf is there: the bit is advertised.
    assert features.value & CONDITIONAL_KILL

    assert service.busctl(
        "get-property", BUS_NAME, ROOT, MANAGER, "Version", "Features"
    ).stdout.split() == ["s", f'"{mux.__version__}"', "t", str(features.value)]
    out = service.gdbus_call(f"{PROPERTIES}.GetAll", MANAGER).stdout
    assert f"'Version': <'{mux.__version__}'>" in out
    assert f"'Features': <uint64 {features.value}>" in out


def _expected_properties(service: Service, pane_id: int) -> dict[str, Any]:
    pane = service.panes()[pane_id]
    return {
        "Id": pane_id,
        "Pid": pane["pid"],
        "Argv": pane["argv"],
        "Cwd": pane["cwd"],
        "CwdSource": pane["cwd_source"],
        "Title": pane["title"],
        "Window": pane["window"],
        "State": pane["state"],
        "ExitStatus": pane["exit_status"],
        "Rows": 15,
        "Cols": 70,
        "Notice": "",
    }


@pytest.mark.parametrize("exits", [False, True], ids=["running", "exited"])
def test_pane_object_properties(service: Service, exits: bool) -> None:
    argv = ["sh", "-c", "exit 3"] if exits else ["sleep", "60"]
    pane_id = service.spawn(argv, title="props", rows=15, cols=70)
    if exits:
        service.wait_exited(pane_id)
    expected = _expected_properties(service, pane_id)
    assert expected["State"] == ("exited" if exits else "running")
    assert expected["ExitStatus"] == (3 if exits else 0)
    path = pane_path(pane_id)

    (everything,) = service.call("GetAll", "s", [PANE], interface=PROPERTIES, path=path)
    assert set(everything) == set(PANE_PROPERTY_TYPES)
    for name, signature in PANE_PROPERTY_TYPES.items():
        assert everything[name] == Variant(signature, expected[name]), name
        assert pane_property(service, pane_id, name) == Variant(signature, expected[name])

    for name, signature in PANE_PROPERTY_TYPES.items():
        words = busctl_words(service.busctl("get-property", BUS_NAME, path, PANE, name).stdout)
        assert words[0] == signature, f"busctl: {name} has type {words[0]}"
        value = expected[name]
        if signature == "as":
            assert words[1:] == [str(len(value)), *value]
        else:
            assert words[1:] == [str(value)], f"busctl: {name} = {words[1:]}"

    out = service.gdbus_call(f"{PROPERTIES}.GetAll", PANE, path=path).stdout
    for name, signature in PANE_PROPERTY_TYPES.items():
        assert f"'{name}': <{GDBUS_TYPE_PREFIX[signature]}" in out, f"gdbus: {name} in {out}"
    assert f"'Pid': <uint32 {expected['Pid']}>" in out
    assert f"'State': <'{expected['State']}'>" in out
    assert f"'ExitStatus': <{expected['ExitStatus']}>" in out
    out = service.gdbus_call(f"{PROPERTIES}.Get", PANE, "Rows", path=path).stdout.strip()
    assert out == "(<uint16 15>,)"


# -- ObjectManager ------------------------------------------------------------------------


def test_get_managed_objects_through_each_client(service: Service) -> None:
    first = service.spawn(["sleep", "60"], title="one")
    second = service.spawn(["sh", "-c", "exit 4"], title="two")
    service.wait_exited(second)
    objects = managed_objects(service)
    windows = {
        pane_id: f"{ROOT}/window/{service.panes()[pane_id]['window']}"
        for pane_id in (first, second)
    }
    assert set(objects) == {pane_path(first), pane_path(second), *windows.values()}
    assert objects[windows[first]]["org.mux.Mux1.Window"]["Layout"] == Variant(
        "s", f'{{"pane":{first}}}'
    )
    for pane_id in (first, second):
        interfaces = objects[pane_path(pane_id)]
        assert set(interfaces) == {PANE}
        props = interfaces[PANE]
        assert set(props) == set(PANE_PROPERTY_TYPES)
        assert props["Id"] == Variant("t", pane_id)
    assert objects[pane_path(first)][PANE]["Title"].value == "one"
    assert objects[pane_path(second)][PANE]["State"].value == "exited"
    assert objects[pane_path(second)][PANE]["ExitStatus"] == Variant("i", 4)

    out = service.busctl("call", BUS_NAME, ROOT, OBJECT_MANAGER, "GetManagedObjects").stdout
    assert out.startswith("a{oa{sa{sv}}} 6 "), "two panes, their windows, the two search objects"
    assert f'"{pane_path(first)}" 1 "{PANE}" {len(PANE_PROPERTY_TYPES)} ' in out
    assert '"Title" s "two"' in out and '"ExitStatus" i 4' in out
    out = service.gdbus_call(f"{OBJECT_MANAGER}.GetManagedObjects").stdout
    assert f"'{pane_path(first)}': {{'{PANE}': {{" in out
    assert "'State': <'exited'>" in out

    service.call("Kill", "t", [first])
    assert set(managed_objects(service)) == {pane_path(second), windows[second]}


def test_object_manager_signals_come_from_the_root(service: Service) -> None:
    rule = f"type='signal',sender='{BUS_NAME}',interface='{OBJECT_MANAGER}'"
    with BusMonitor(service.bus_address, [rule]) as monitor:
        pane_id = service.spawn(["sleep", "60"], title="watched")
        added = monitor.wait_signal("InterfacesAdded", lambda m: m.body[0] == pane_path(pane_id))
        assert added.path == ROOT, "ObjectManager signals are emitted by the manager object"
        assert added.body[1][PANE]["Title"] == Variant("s", "watched")
        assert set(added.body[1][PANE]) == set(PANE_PROPERTY_TYPES)
        service.call("Kill", "t", [pane_id])
        removed = monitor.wait_signal(
            "InterfacesRemoved", lambda m: m.body[0] == pane_path(pane_id)
        )
        assert removed.path == ROOT
        assert removed.body[1] == [PANE]


# -- refusals, and every error name --------------------------------------------------------


def test_refusals_for_missing_panes(service: Service) -> None:
    pane_id = service.spawn(["sleep", "60"])
    refused(service, "NoSuchPane", "KillIf", "tayas", [pane_id + 100, b"", []])
    refused(service, "NoSuchPane", "OpenAttach", "t", [pane_id + 100])
    gdbus_refused(
        service, "NoSuchPane", f"{MANAGER}.KillIf", "999", "@ay []", "['UNATTACHED_SINCE_SPAWN']"
    )
    gdbus_refused(service, "NoSuchPane", f"{MANAGER}.OpenAttach", "999")
    # Refusing changed nothing: the pane still runs.
    assert service.panes()[pane_id]["state"] == "running"


def test_every_error_name_this_version_produces(service: Service) -> None:
    # NoSuchPane
    e = refused(service, "NoSuchPane", "GetScreen", "t", [42])
    assert "42" in e.message
    # InvalidArgument
    e = refused(
        service,
        "InvalidArgument",
        "Spawn",
        "a{sv}",
        [{"argv": Variant("as", ["true"]), "colour": Variant("s", "red")}],
    )
    assert "colour" in e.message
    # SpawnFailed
    e = refused(
        service,
        "SpawnFailed",
        "Spawn",
        "a{sv}",
        [{"argv": Variant("as", ["no-such-program-for-mux"])}],
    )
    assert "no-such-program-for-mux" in e.message
    # PreconditionFailed: the pane has exited, so there is no terminal to act on.
    pane_id = service.spawn(["sh", "-c", "exit 2"])
    service.wait_exited(pane_id)
    for member, signature, body in (
        ("SendInput", "tay", [pane_id, b"x"]),
        ("Signal", "ts", [pane_id, "TERM"]),
        ("Resize", "tqq", [pane_id, 10, 10]),
    ):
        e = refused(service, "PreconditionFailed", member, signature, body)
        assert "exited" in e.message
    # (NotSupported: nothing answers it in this version with every part in place.)

    # The same names reach an independent client.
    gdbus_refused(service, "NoSuchPane", f"{MANAGER}.GetScreen", "42")
    gdbus_refused(
        service, "InvalidArgument", f"{MANAGER}.Spawn", "{'argv': <['true']>, 'colour': <'red'>}"
    )
    gdbus_refused(
        service, "SpawnFailed", f"{MANAGER}.Spawn", "{'argv': <['no-such-program-for-mux']>}"
    )
    gdbus_refused(
        service, "PreconditionFailed", f"{MANAGER}.SendInput", str(pane_id), "[byte 0x78]"
    )
    gdbus_refused(service, "PreconditionFailed", f"{MANAGER}.Signal", str(pane_id), "'HUP'")
    # The exited pane is still listed until Kill closes it.
    assert service.panes()[pane_id]["state"] == "exited"
    assert_answers(service)
