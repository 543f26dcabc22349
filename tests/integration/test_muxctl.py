"""muxctl end to end (docs/paths.md, docs/muxctl.md): every verb, human and JSON output,
exit statuses, autostart of muxd, visible startup failures and the runtime-directory
safety checks.

Everything here runs the real `muxctl` and `muxd` (and a real dbus-daemon) as
separate processes; a muxd that muxctl started in the background is found
through /proc and stopped by the test, so nothing outlives it.
"""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mux.system.muxd_command import muxd_argv
from tests.harness import Service, name_owned, pid_alive, wait_for

VERBS = (
    "status",
    "ls",
    "spawn",
    "kill",
    "kill-if",
    "signal",
    "send",
    "capture",
    "snapshot",
    "upgrade",
)

# docs/dbus-api.md#manager-methods, ListPanes: each entry's fields and their JSON types.
LIST_PANES_FIELDS: dict[str, type] = {
    "id": int,
    "pid": int,
    "argv": list,
    "cwd": str,
    "cwd_source": str,
    "title": str,
    "window": int,
    "state": str,
    "exit_status": int,
}

EX_CONFIG = 78

SLEEPER = ("sh", "-c", "echo ready; exec sleep 60")


# -- helpers -------------------------------------------------------------------


def ok(result: subprocess.CompletedProcess[str]) -> str:
    """A successful muxctl run: status 0, nothing on stderr. Returns stdout."""
    assert result.returncode == 0, f"{result.args[3:]} exited {result.returncode}:\n{result.stderr}"
    assert result.stderr == "", result.stderr
    return result.stdout


def assert_fails(
    result: subprocess.CompletedProcess[str], status: int, *needles: str, usage: bool = False
) -> None:
    """A refused muxctl run: the exit status, stdout empty, a `muxctl: ...` line on stderr
    (or argparse's usage text), every needle in the message, no traceback."""
    where = (
        f"{result.args[3:]} -> {result.returncode}\n"
        f"stdout: {result.stdout!r}\nstderr: {result.stderr!r}"
    )
    assert result.returncode == status, where
    assert result.stdout == "", where
    assert "Traceback" not in result.stderr, where
    assert "unexpected error" not in result.stderr, where
    if usage:
        assert result.stderr.startswith("usage: muxctl"), where
        assert "error:" in result.stderr, where
    else:
        assert result.stderr.startswith("muxctl: "), where
    for needle in needles:
        assert needle in result.stderr, where


def spawn(svc: Service, *args: str, cwd: Path | None = None) -> int:
    out = ok(svc.muxctl("spawn", "--json", *args, cwd=cwd))
    return int(json.loads(out)["id"])


def ls_json(svc: Service) -> dict[int, dict[str, Any]]:
    return {p["id"]: p for p in json.loads(ok(svc.muxctl("ls", "--json")))}


def wait_capture(svc: Service, pane: int, needle: str) -> str:
    """Wait until `muxctl capture PANE` shows `needle`; returns that capture."""

    def shown() -> str:
        result = svc.muxctl("capture", str(pane))
        return result.stdout if result.returncode == 0 and needle in result.stdout else ""

    return wait_for(shown, what=f"{needle!r} in muxctl capture {pane}")


def muxd_directly(svc: Service) -> subprocess.CompletedProcess[str]:
    """Run muxd in the foreground in this environment; for startups that must fail."""
    return subprocess.run(
        muxd_argv(),
        env=svc.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def session_id(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[3])


def login_shell() -> str:
    shell = pwd.getpwuid(os.getuid()).pw_shell or os.environ.get("SHELL") or "/bin/sh"
    return os.path.normpath(shell)


def nothing_started(svc: Service) -> None:
    assert svc.own_processes() == [], "a process was started in the test's environment"
    for leftover in ("bus", "muxd.lock"):
        assert not (svc.runtime / leftover).exists(), f"{leftover} was created"


# -- fixtures ------------------------------------------------------------------


def _stop_everything(svc: Service) -> None:
    leftovers = svc.stop_background()
    assert leftovers == [], f"processes ignored SIGTERM and were SIGKILLed: {leftovers}"


@pytest.fixture
def bare(tmp_root: Path) -> Iterator[Service]:
    """An environment with no session bus and no muxd running (nothing is started)."""
    svc = Service(tmp_root, bus_address=None)
    yield svc
    _stop_everything(svc)


@pytest.fixture(params=["private", "session"])
def idle(request: pytest.FixtureRequest, tmp_root: Path) -> Iterator[Service]:
    """No muxd running; either no bus at all, or the shared session bus with nobody on it."""
    address = None
    if request.param == "session":
        address = request.getfixturevalue("dbus_daemon").address
        assert not name_owned(address), "an earlier test left a muxd on the shared bus"
    svc = Service(tmp_root, bus_address=address)
    yield svc
    _stop_everything(svc)
    if address is not None:
        wait_for(lambda: not name_owned(address), what="org.mux.Mux1 to be released")


def args_id(value: object) -> str:
    """Readable test ids for command lines."""
    assert isinstance(value, tuple)
    return " ".join(value) or "(no arguments)"


def is_session(svc: Service) -> bool:
    return "DBUS_SESSION_BUS_ADDRESS" in svc.env


# -- help ----------------------------------------------------------------------


def test_help_lists_every_verb(bare: Service) -> None:
    out = ok(bare.muxctl("--help"))
    assert out.startswith("usage: muxctl")
    for verb in VERBS:
        assert re.search(rf"^\s+{re.escape(verb)}\s", out, re.MULTILINE), verb
    nothing_started(bare)


@pytest.mark.parametrize("verb", VERBS)
def test_verb_help(bare: Service, verb: str) -> None:
    out = ok(bare.muxctl(verb, "--help"))
    assert out.startswith(f"usage: muxctl {verb}")
    assert "--json" in out
    nothing_started(bare)


# -- status and ls -------------------------------------------------------------


def test_status_human_and_json(service: Service, dbus_daemon: Any) -> None:
    exited = spawn(service, "--", "sh", "-c", "exit 4")
    service.wait_exited(exited)
    spawn(service, "--", *SLEEPER)

    human = ok(service.muxctl("status"))
    assert re.search(r"^mux \S+ is running on the session bus", human, re.MULTILINE), human
    assert dbus_daemon.address in human
    assert "panes: 2 (1 running, 1 exited)" in human

    for args in (("--json", "status"), ("status", "--json")):
        status = json.loads(ok(service.muxctl(*args)))
        assert status["bus"] == "session"
        assert status["bus_address"] == dbus_daemon.address
        assert status["panes"] == 2
        assert status["running"] == 1
        assert isinstance(status["version"], str) and status["version"]
        assert isinstance(status["features"], int)


def test_ls_empty(service: Service) -> None:
    human = ok(service.muxctl("ls"))
    assert human.split() == ["ID", "WIN", "PID", "STATE", "SIZE", "TITLE", "CWD", "COMMAND"]
    assert json.loads(ok(service.muxctl("ls", "--json"))) == []
    assert json.loads(ok(service.muxctl("--json", "ls"))) == []


def test_ls_human_and_json_fields(service: Service, tmp_root: Path) -> None:
    running = spawn(service, "--title", "the title", "--", *SLEEPER, cwd=tmp_root)
    done = spawn(service, "--", "sh", "-c", "exit 3", cwd=tmp_root)
    service.wait_exited(done)

    for args in (("ls", "--json"), ("--json", "ls")):
        entries = json.loads(ok(service.muxctl(*args)))
        assert [e["id"] for e in entries] == [running, done]
        for entry in entries:
            for field, kind in LIST_PANES_FIELDS.items():
                assert isinstance(entry[field], kind), (field, entry)
        first, second = entries
        assert first["argv"] == list(SLEEPER)
        assert first["title"] == "the title"
        assert first["cwd"] == str(tmp_root)
        assert first["state"] == "running"
        assert pid_alive(first["pid"])
        assert second["state"] == "exited"
        assert second["exit_status"] == 3

    rows = ok(service.muxctl("ls")).splitlines()
    assert rows[0].split()[:5] == ["ID", "WIN", "PID", "STATE", "SIZE"]
    assert rows[1].startswith(f"{running} ")
    assert "running" in rows[1] and "80x24" in rows[1] and "the title" in rows[1]
    assert rows[1].endswith("sh -c 'echo ready; exec sleep 60'")
    assert rows[2].startswith(f"{done} ") and "exited(3)" in rows[2]


# -- spawn ---------------------------------------------------------------------


def test_spawn_prints_the_id(service: Service) -> None:
    assert ok(service.muxctl("spawn", "--", *SLEEPER)) == "1\n"
    assert ok(service.muxctl("spawn", "--", *SLEEPER)) == "2\n"
    assert sorted(ls_json(service)) == [1, 2]
    service.wait_screen(1, "ready")


def test_spawn_json_has_id_and_instance_only_when_bound(service: Service) -> None:
    plain = json.loads(ok(service.muxctl("spawn", "--json", "--", *SLEEPER)))
    assert plain["id"] == 1
    assert "instance" not in plain
    also_plain = json.loads(ok(service.muxctl("--json", "spawn", "--", *SLEEPER)))
    assert also_plain["id"] == 2 and "instance" not in also_plain

    bound = json.loads(ok(service.muxctl("spawn", "--json", "--bind-instance", "--", *SLEEPER)))
    assert bound["id"] == 3
    assert re.fullmatch(r"[0-9a-f]{32}", bound["instance"]), bound

    human = ok(service.muxctl("spawn", "--bind-instance", "--", *SLEEPER)).split()
    assert human == ["4", bound["instance"]], "one id space, one token"


def test_spawn_default_cwd_is_muxctls_cwd(service: Service, tmp_root: Path) -> None:
    here = tmp_root / "here dir"
    here.mkdir()
    pane = spawn(service, "--", "sh", "-c", 'echo "pwd=$(pwd)"; exec sleep 60', cwd=here)
    assert ls_json(service)[pane]["cwd"] == str(here)
    wait_capture(service, pane, f"pwd={here}")


def test_spawn_cwd_absolute_and_relative(service: Service, tmp_root: Path) -> None:
    (tmp_root / "a").mkdir()
    (tmp_root / "b").mkdir()
    show = ("--", "sh", "-c", 'echo "pwd=$(pwd)"; exec sleep 60')
    absolute = spawn(service, "--cwd", str(tmp_root / "a"), *show, cwd=tmp_root / "b")
    relative = spawn(service, "--cwd", "../a", *show, cwd=tmp_root / "b")
    panes = ls_json(service)
    assert panes[absolute]["cwd"] == str(tmp_root / "a")
    assert panes[relative]["cwd"] == str(tmp_root / "a"), "relative to muxctl's cwd"
    wait_capture(service, relative, f"pwd={tmp_root / 'a'}")


def test_spawn_title_and_window(service: Service) -> None:
    first = spawn(service, "--title", "first pane", "--", *SLEEPER)
    window = ls_json(service)[first]["window"]
    joined = spawn(service, "--window", str(window), "--", *SLEEPER)
    separate = spawn(service, "--", *SLEEPER)
    panes = ls_json(service)
    assert panes[first]["title"] == "first pane"
    assert panes[joined]["window"] == window
    assert panes[separate]["window"] != window
    assert panes[separate]["title"] == "sh"


def test_spawn_env(service: Service) -> None:
    script = 'echo "foo=$FOO empty=[$EMPTY] spaced=$SPACED pane=$MUX_PANE"; exec sleep 60'
    pane = spawn(
        service,
        "--env", "FOO=bar",
        "--env", "EMPTY=",
        "--env", "SPACED=a b=c",
        "--", "sh", "-c", script,
    )  # fmt: skip
    wait_capture(service, pane, f"foo=bar empty=[] spaced=a b=c pane={pane}")


def test_spawn_rows_cols(service: Service) -> None:
    pane = spawn(
        service, "--rows", "30", "--cols", "100", "--", "sh", "-c", "stty size; exec sleep 60"
    )
    wait_capture(service, pane, "30 100")
    entry = ls_json(service)[pane]
    assert (entry["rows"], entry["cols"]) == (30, 100)
    assert "100x30" in ok(service.muxctl("ls"))


def test_spawn_without_command_starts_the_login_shell(service: Service) -> None:
    shell = login_shell()
    pane = spawn(service)
    entry = ls_json(service)[pane]
    assert entry["argv"] == [shell]
    assert entry["title"] == os.path.basename(shell)
    ok(service.muxctl("send", str(pane), 'echo "zero=$0"', "--enter"))
    # A login shell is started as "-NAME", like a terminal emulator or tmux does;
    # bash, to load mux's integration (--rcfile), runs what a login shell reads
    # itself and keeps its plain name.
    name = os.path.basename(shell)
    wait_capture(service, pane, "zero=bash" if name == "bash" else f"zero=-{name}")


def test_spawn_shell_option(service: Service) -> None:
    pane = spawn(service, "--shell", "/bin/sh")
    assert ls_json(service)[pane]["argv"] == ["/bin/sh"]
    ok(service.muxctl("send", str(pane), 'echo "zero=$0"', "--enter"))
    wait_capture(service, pane, "zero=-sh")


# -- kill, signal, send, capture -----------------------------------------------


def test_kill(service: Service) -> None:
    pane = spawn(service, "--", "sleep", "60")
    other = spawn(service, "--", "sleep", "60")
    panes = ls_json(service)
    pid, other_pid = panes[pane]["pid"], panes[other]["pid"]

    assert ok(service.muxctl("kill", str(pane))) == ""
    assert pane not in ls_json(service)
    wait_for(lambda: not pid_alive(pid), what="the killed pane's process to exit")

    assert json.loads(ok(service.muxctl("kill", "--json", str(other)))) == {
        "id": other,
        "killed": True,
    }
    assert ls_json(service) == {}
    wait_for(lambda: not pid_alive(other_pid), what="the other pane's process to exit")

    assert_fails(service.muxctl("kill", str(pane)), 1, f"no pane {pane}")


def test_signal(service: Service) -> None:
    term = spawn(service, "--", "sleep", "60")
    intr = spawn(service, "--", "sleep", "60")
    assert ok(service.muxctl("signal", str(term), "TERM")) == ""
    assert json.loads(ok(service.muxctl("--json", "signal", str(intr), "int"))) == {
        "id": intr,
        "signal": "int",
    }
    assert service.wait_exited(term)["exit_status"] == -15
    assert service.wait_exited(intr)["exit_status"] == -2
    assert "exited(-15)" in ok(service.muxctl("ls"))


def test_send_text_enter_and_stdin(service: Service) -> None:
    script = 'read a; echo "got:$a"; read b; echo "got2:$b"; exec sleep 60'
    pane = spawn(service, "--", "sh", "-c", script)
    assert ok(service.muxctl("send", str(pane), "abc")) == ""
    assert ok(service.muxctl("send", str(pane), "--enter", "déf")) == ""
    wait_capture(service, pane, "got:abcdéf")

    out = service.muxctl("send", "--json", str(pane), "--stdin", input=b"from-stdin\n")
    assert json.loads(ok(out)) == {"id": pane, "bytes": len(b"from-stdin\n")}
    wait_capture(service, pane, "got2:from-stdin")


def test_send_keys_by_name(service: Service) -> None:
    """`--keys`: names as tmux's send-keys takes them; a word that names no key is typed
    as it is. C-c reaches the program as an interrupt."""
    pane = spawn(service, "--", "bash", "--norc", "--noprofile", "-i")
    ok(service.muxctl("send", str(pane), "--keys", "sleep 600", "Enter"))
    wait_for(lambda: _runs_sleep(service, pane), what="sleep to run in the pane")
    ok(service.muxctl("send", str(pane), "--keys", "C-c"))
    ok(service.muxctl("send", "--keys", str(pane), "echo after-$((6*7))-", "Left", "X", "Enter"))
    wait_capture(service, pane, "after-42X-")
    refused = service.muxctl("send", str(pane), "two", "words")
    assert refused.returncode == 2 and "--keys" in refused.stderr


def _runs_sleep(service: Service, pane: int) -> bool:
    pid = service.panes()[pane]["pid"]
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return any(Path(f"/proc/{c}/comm").read_text().strip() == "sleep" for c in children)


def test_rename_window(service: Service) -> None:
    pane = spawn(service, "--", *SLEEPER)
    window = service.panes()[pane]["window"]
    assert ok(service.muxctl("rename-window", str(window), "build \x1b]2;x\x07 logs")) == ""
    (entry,) = json.loads(ok(service.muxctl("windows", "--json")))
    assert entry["title"] == "build \x1b]2;x\x07 logs"
    assert "build \\x1b]2;x\\x07 logs" in ok(service.muxctl("windows")), "shown escaped"
    missing = service.muxctl("rename-window", "999", "x")
    assert missing.returncode == 2 and "no window 999" in missing.stderr


def title_seen_by_busctl(svc: Service, pane: int) -> str:
    """The pane's Title property, read by busctl (an independent client)."""
    argv = ["busctl", f"--address={svc.bus_address}", "--json=short", "get-property"]
    argv += ["org.mux.Mux1", f"/org/mux/Mux1/pane/{pane}", "org.mux.Mux1.Pane", "Title"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30).stdout
    return str(json.loads(out)["data"])


def test_title_is_kept_over_the_programs_and_given_back(service: Service) -> None:
    """A program retitles itself every time it is told to (a line of input); the title set
    with `muxctl title` stays over it until an empty one gives the title back."""
    retitler = 'while read t; do printf \'\\033]2;%s\\007set %s\\n\' "$t" "$t"; done'
    pane = spawn(service, "--", "sh", "-c", retitler)
    service.call("SendInput", "tay", [pane, b"first\n"])
    wait_for(lambda: title_seen_by_busctl(service, pane) == "first", what="the program's title")
    shown = json.loads(ok(service.muxctl("title", "--json", str(pane), "mine \x1b[31m")))
    assert shown == {"id": pane, "title": "mine [31m"}  # (controls dropped, as a program's)
    assert title_seen_by_busctl(service, pane) == "mine [31m"
    service.call("SendInput", "tay", [pane, b"second\n"])
    service.call("SendInput", "tay", [pane, b"third\n"])
    service.wait_screen(pane, "set third")  # (the title it set just before)
    assert ls_json(service)[pane]["title"] == "mine [31m"
    assert ok(service.muxctl("title", str(pane), "")) == ""
    wait_for(lambda: title_seen_by_busctl(service, pane) == "third", what="the program's again")
    too_long = service.muxctl("title", str(pane), "x" * 2000)
    assert too_long.returncode == 2 and "title" in too_long.stderr, too_long.stderr
    missing = service.muxctl("title", "999", "x")
    assert missing.returncode != 0 and "999" in missing.stderr


def test_capture_human_and_json(service: Service) -> None:
    pane = spawn(service, "--", "sh", "-c", 'printf "line-one\\n  line-two\\n"; exec sleep 60')
    out = wait_capture(service, pane, "line-two")
    assert out == "line-one\n  line-two\n", "trailing blank rows are dropped"
    for args in (("capture", "--json", str(pane)), ("--json", "capture", str(pane))):
        captured = json.loads(ok(service.muxctl(*args)))
        assert captured["id"] == pane
        assert captured["lines"][:2] == ["line-one", "  line-two"]


def test_capture_of_an_exited_pane_keeps_its_last_output(service: Service) -> None:
    pane = spawn(service, "--", "sh", "-c", "echo last-words; exit 0")
    service.wait_exited(pane)
    assert "last-words" in ok(service.muxctl("capture", str(pane)))


# -- kill-if -------------------------------------------------------------------


def test_kill_if(service: Service) -> None:
    bound = json.loads(ok(service.muxctl("spawn", "--json", "--bind-instance", "--", *SLEEPER)))
    pane, instance = str(bound["id"]), bound["instance"]
    # A refusal exits 3, names the condition, and kills nothing.
    other = "00" * 16
    assert_fails(service.muxctl("kill-if", pane, "--instance", other), 3, "instance")
    ok(service.muxctl("capture", pane))  # a glance by another connection (this muxctl)
    assert_fails(
        service.muxctl("kill-if", pane, "--instance", instance, "--unattached-since-spawn"),
        3,
        "UNATTACHED_SINCE_SPAWN",
    )
    assert ls_json(service)[bound["id"]]["state"] == "running", "kill-if killed nothing"
    result = json.loads(ok(service.muxctl("--json", "kill-if", pane, "--instance", instance)))
    assert result == {"id": bound["id"], "killed": True}
    assert bound["id"] not in ls_json(service)


# -- exit statuses (docs/muxctl.md) ---------------------------------------------------

ARGPARSE_ERRORS = [
    (),
    ("bogus-verb",),
    ("--bogus-flag", "ls"),
    ("kill",),
    ("kill", "one"),
    ("signal", "1"),
    ("send",),
    ("capture", "1", "2"),
    ("spawn", "--rows", "many", "--", "true"),
    ("spawn", "--window"),
    ("spawn", "--window", "-1", "--", "true"),
    ("kill", "--", "-1"),
    ("capture", "18446744073709551616"),
]


@pytest.mark.parametrize("args", ARGPARSE_ERRORS, ids=args_id)
def test_argparse_errors_exit_2_and_start_nothing(bare: Service, args: tuple[str, ...]) -> None:
    assert_fails(bare.muxctl(*args), 2, usage=True)
    nothing_started(bare)


# Usage errors muxctl itself detects after parsing.
CLIENT_USAGE_ERRORS = [
    (("spawn", "--rows", "0", "--", "true"), "--rows"),
    (("spawn", "--cols", "70000", "--", "true"), "--cols"),
    (("spawn", "--env", "NOEQUALS", "--", "true"), "NAME=VALUE"),
    (("spawn", "--shell", "/bin/sh", "--", "true"), "--shell"),
    (("send", "1"), "TEXT"),
    (("send", "1", "text", "--stdin"), "TEXT"),
    (("kill-if", "1", "--instance", "nothex"), "hexadecimal"),
]


@pytest.mark.parametrize(
    ("args", "needle"), CLIENT_USAGE_ERRORS, ids=[args_id(a) for a, _ in CLIENT_USAGE_ERRORS]
)
def test_client_usage_errors_exit_2(service: Service, args: tuple[str, ...], needle: str) -> None:
    spawn(service, "--", *SLEEPER)
    assert_fails(service.muxctl(*args), 2, needle)
    assert list(ls_json(service)) == [1], "a refused spawn created nothing"


@pytest.mark.parametrize(
    ("args", "needle"),
    [CLIENT_USAGE_ERRORS[i] for i in (0, 2, 4)],
    ids=[args_id(CLIENT_USAGE_ERRORS[i][0]) for i in (0, 2, 4)],
)
def test_client_usage_errors_do_not_start_muxd(
    bare: Service, args: tuple[str, ...], needle: str
) -> None:
    """A mistyped command line must not leave a daemon behind (main.py: "usage errors
    never load asyncio or D-Bus")."""
    assert_fails(bare.muxctl(*args), 2, needle)
    nothing_started(bare)


# The service answers InvalidArgument: muxctl exits 2 with the service's words.
SERVICE_USAGE_ERRORS = [
    (("spawn", "--rows", "1001", "--", "true"), "rows"),
    (("spawn", "--cols", "2001", "--", "true"), "cols"),
    (("spawn", "--window", "99", "--", "true"), "no window 99"),
    (("spawn", "--env", "=value", "--", "true"), "environment variable name"),
    (("signal", "1", "FOO"), "unknown signal 'FOO'"),
    (("signal", "1", "SIGNOTHING"), "unknown signal"),
]


@pytest.mark.parametrize(
    ("args", "needle"), SERVICE_USAGE_ERRORS, ids=[args_id(a) for a, _ in SERVICE_USAGE_ERRORS]
)
def test_service_invalid_argument_exits_2(
    service: Service, args: tuple[str, ...], needle: str
) -> None:
    spawn(service, "--", *SLEEPER)
    assert_fails(service.muxctl(*args), 2, needle)
    panes = ls_json(service)
    assert list(panes) == [1] and panes[1]["state"] == "running"


@pytest.mark.parametrize(
    "args",
    [
        ("kill", "--", "-1"),
        ("capture", "18446744073709551616"),
        ("signal", "--", "-5", "TERM"),
        ("spawn", "--window", "18446744073709551616", "--", "true"),
    ],
    ids=args_id,
)
def test_ids_outside_the_dbus_range_are_usage_errors(
    service: Service, args: tuple[str, ...]
) -> None:
    """Pane and window ids are D-Bus `t` (0 .. 2**64-1); anything else is a usage error."""
    result = service.muxctl(*args)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert "unexpected error" not in result.stderr, result.stderr


def test_precondition_failed_exits_3(service: Service) -> None:
    pane = spawn(service, "--", "sh", "-c", "exit 0")
    service.wait_exited(pane)
    assert_fails(service.muxctl("send", str(pane), "hello"), 3, f"pane {pane} has exited")
    assert_fails(service.muxctl("send", str(pane), "--stdin", input=b"x"), 3, "has exited")
    assert_fails(service.muxctl("signal", str(pane), "TERM"), 3, f"pane {pane}")


@pytest.mark.parametrize(
    "args",
    [
        ("kill", "99"),
        ("capture", "99"),
        ("--json", "capture", "99"),
        ("signal", "99", "TERM"),
        ("send", "99", "hello"),
        ("kill-if", "99", "--instance", "00"),
    ],
    ids=args_id,
)
def test_no_such_pane_exits_1(service: Service, args: tuple[str, ...]) -> None:
    assert_fails(service.muxctl(*args), 1, "no pane 99")


def test_spawn_failures_exit_1(service: Service, tmp_root: Path) -> None:
    a_file = tmp_root / "a-file"
    a_file.write_text("")
    assert_fails(
        service.muxctl("spawn", "--", "no-such-program-mux-test"),
        1,
        "no-such-program-mux-test",
        "not found",
    )
    assert_fails(service.muxctl("spawn", "--", "./missing-here", cwd=tmp_root), 1, "does not exist")
    assert_fails(
        service.muxctl("spawn", "--cwd", str(tmp_root / "gone"), "--", "true"), 1, "does not exist"
    )
    assert_fails(
        service.muxctl("spawn", "--json", "--cwd", str(a_file), "--", "true"), 1, "not a directory"
    )
    assert ls_json(service) == {}


# -- autostart -----------------------------------------------------------------


def test_autostart(idle: Service) -> None:
    session = is_session(idle)
    out = ok(idle.muxctl("spawn", "--", "sh", "-c", "echo hi; sleep 60"))
    assert out == "1\n"

    (muxd,) = idle.background_muxd()
    assert session_id(muxd) == muxd, "muxd runs in its own session, detached from muxctl"
    if session:
        assert name_owned(idle.env["DBUS_SESSION_BUS_ADDRESS"])
        assert not (idle.runtime / "bus").exists(), "no private bus next to a session bus"
    else:
        assert (idle.runtime / "bus").is_socket(), "muxd started its private bus"
    assert "ready:" in (idle.runtime / "muxd.log").read_text()

    wait_capture(idle, 1, "hi")
    status = json.loads(ok(idle.muxctl("status", "--json")))
    if session:
        assert status["bus"] == "session"
        assert status["bus_address"] == idle.env["DBUS_SESSION_BUS_ADDRESS"]
    else:
        assert status["bus"] == "private"
        assert status["bus_address"] == f"unix:path={idle.runtime / 'bus'}"
    assert status["panes"] == 1
    assert idle.background_muxd() == [muxd], "later calls reuse the running muxd"

    # Stop it the way a user would, and make sure nothing it started outlives it.
    os.kill(muxd, signal.SIGTERM)
    wait_for(lambda: not pid_alive(muxd), what="the background muxd to exit")
    wait_for(lambda: not idle.own_processes(), what="its bus and panes to go as well")
    assert not (idle.runtime / "bus").exists(), "the private bus socket is removed"
    assert_fails(idle.muxctl("status"), 4, "mux is not running", "start it with")
    assert json.loads(idle.muxctl("status", "--json").stdout) == {"active": False}
    assert idle.own_processes() == [], "asking whether it runs does not start it"


def test_no_start_with_nothing_running(idle: Service) -> None:
    assert_fails(idle.muxctl("--no-start", "ls"), 4, "not running", "start it with")
    assert_fails(idle.muxctl("--no-start", "spawn", "--", "true"), 4, "not running", "--no-start")
    nothing_started(idle)
    if is_session(idle):
        assert not name_owned(idle.env["DBUS_SESSION_BUS_ADDRESS"])


def test_autostart_waits_for_a_muxd_that_is_already_starting(idle: Service) -> None:
    """First use from two terminals at once: while one muxd starts (it holds the instance
    lock but is not on the bus yet), the muxd started by a second muxctl exits with
    "another muxd is already running". That muxctl must keep waiting for the service
    rather than fail. (Seen for real with concurrent first calls, intermittently.)"""
    idle.runtime.mkdir(mode=0o700)
    log = idle.runtime / "muxd.log"
    # Hold the lock exactly as a muxd in the middle of its startup holds it.
    with open(idle.runtime / "muxd.lock", "ab") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        client = idle.muxctl_process("where", "--json")
        try:
            wait_for(
                lambda: log.exists() and "already running" in log.read_text(),
                what="the second muxd to give up on the lock",
            )
        except AssertionError:
            client.kill()
            client.communicate()
            raise
    # The "first" muxd finishes starting. (A muxctl that retries the start itself once the
    # lock is free may win that race instead; either way the call must succeed.)
    try:
        idle.start(wait=False)
        stdout, stderr = client.communicate(timeout=30)
    finally:
        idle.stop()
    assert client.returncode == 0, f"muxctl gave up although muxd was starting: {stderr}"
    assert set(json.loads(stdout)) == {"bus", "attach"}


# -- startup failures are visible ----------------------------------------------

BAD_CONFIGS = [
    pytest.param('scrollback_bytes = "lots"\n', ["scrollback_bytes"], id="wrong-type"),
    pytest.param("default_rows = 0\n", ["default_rows"], id="out-of-range"),
    pytest.param("scrollbak_bytes = 5\n", ["unknown setting", "scrollbak_bytes"], id="unknown"),
    pytest.param("scrollback_bytes = = 1\n", ["not valid TOML", "line 1"], id="not-toml"),
]


@pytest.mark.parametrize(("config", "needles"), BAD_CONFIGS)
def test_muxd_refuses_a_malformed_config(tmp_root: Path, config: str, needles: list[str]) -> None:
    svc = Service(tmp_root, bus_address=None, config=config)
    result = muxd_directly(svc)
    assert result.returncode == EX_CONFIG, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith("muxd: ")
    assert "Traceback" not in result.stderr
    assert str(svc.config_home / "mux" / "config.toml") in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr
    nothing_started(svc)


def test_muxd_names_a_bad_environment_override(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, extra_env={"MUX_SCROLLBACK_BYTES": "lots"})
    result = muxd_directly(svc)
    assert result.returncode == EX_CONFIG, result.stderr
    assert "environment variable MUX_SCROLLBACK_BYTES" in result.stderr
    assert "scrollback_bytes" in result.stderr
    assert "Traceback" not in result.stderr
    nothing_started(svc)


@pytest.mark.parametrize(("config", "needles"), BAD_CONFIGS)
def test_autostart_reports_muxd_startup_failure(
    idle: Service, config: str, needles: list[str]
) -> None:
    (idle.config_home / "mux").mkdir()
    (idle.config_home / "mux" / "config.toml").write_text(config)
    # Well under muxctl's own 15-second start deadline: it must notice muxd's exit.
    result = idle.muxctl("spawn", "--", "true", timeout=10)
    config_file = str(idle.config_home / "mux" / "config.toml")
    assert_fails(result, 1, "muxd exited with status 78", config_file, *needles[-1:])
    assert idle.own_processes() == []
    if is_session(idle):
        assert not name_owned(idle.env["DBUS_SESSION_BUS_ADDRESS"])


# -- runtime directory safety (docs/paths.md) ----------------------------------------


def _shared_mode(runtime: Path, mode: int) -> str:
    runtime.mkdir()
    runtime.chmod(mode)
    return f"accessible to other users (mode {mode:04o})"


UNSAFE_RUNTIME = [
    pytest.param(lambda d: _shared_mode(d, 0o755), id="0755"),
    pytest.param(lambda d: _shared_mode(d, 0o750), id="0750"),
    pytest.param(lambda d: _shared_mode(d, 0o701), id="0701"),
]


@pytest.mark.parametrize("make_unsafe", UNSAFE_RUNTIME)
def test_muxd_refuses_a_shared_runtime_dir(tmp_root: Path, make_unsafe: Any) -> None:
    svc = Service(tmp_root, bus_address=None)
    needle = make_unsafe(svc.runtime)
    mode_before = svc.runtime.stat().st_mode
    result = muxd_directly(svc)
    assert result.returncode != 0
    assert result.stderr.startswith("muxd: "), result.stderr
    assert str(svc.runtime) in result.stderr
    assert needle in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert svc.runtime.stat().st_mode == mode_before, "muxd must not 'fix' the mode itself"
    assert os.listdir(svc.runtime) == []
    nothing_started(svc)


@pytest.mark.parametrize("make_unsafe", UNSAFE_RUNTIME[:1])
def test_muxctl_autostart_refuses_a_shared_runtime_dir(bare: Service, make_unsafe: Any) -> None:
    needle = make_unsafe(bare.runtime)
    assert_fails(bare.muxctl("ls"), 1, str(bare.runtime), needle)
    nothing_started(bare)


def test_muxd_refuses_a_runtime_dir_of_another_user(tmp_root: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to give the directory to another user")
    svc = Service(tmp_root, bus_address=None)
    svc.runtime.mkdir(mode=0o700)
    os.chown(svc.runtime, 65534, 65534)
    result = muxd_directly(svc)
    assert result.returncode != 0
    assert "owned by uid 65534" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    nothing_started(svc)


def test_muxctl_never_talks_to_a_bus_in_a_shared_runtime_dir(bare: Service) -> None:
    """Whoever can write to the runtime dir could run a bus there with a fake mux on it
    and read every argv, env and keystroke muxctl sends. muxctl checks the directory
    before it connects, as muxd does, even when a bus answers there."""
    bare.runtime.mkdir(mode=0o700)
    impostor_bus = subprocess.Popen(
        [
            "dbus-daemon",
            "--session",
            "--nofork",
            "--nopidfile",
            f"--address=unix:path={bare.runtime / 'bus'}",
            "--print-address=1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert impostor_bus.stdout is not None and impostor_bus.stdout.readline()
        bare.runtime.chmod(0o777)
        for args in (("--no-start", "ls"), ("spawn", "--env", "TOKEN=secret", "--", "true")):
            assert_fails(
                bare.muxctl(*args),
                1,
                "refusing to use the private bus",
                "accessible to other users",
            )
    finally:
        impostor_bus.terminate()
        impostor_bus.wait()


def test_doctor_without_systemd(bare: Service) -> None:
    healthy = bare.muxctl("doctor", "--json")
    assert healthy.returncode == 0, healthy.stdout
    checks = {f["check"]: f["status"] for f in json.loads(healthy.stdout)}
    assert checks["configuration"] == "ok"
    assert checks["service"] == "warn", "not running is worth knowing, not a failure"
    nothing_started(bare)
    config = bare.config_home / "mux" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("scrollback_bytes = 'lots'\n")
    broken = bare.muxctl("doctor")
    assert broken.returncode == 1
    assert "fail  configuration" in broken.stdout and "scrollback_bytes" in broken.stdout


def test_ls_shows_what_an_integrated_shell_runs(service: Service) -> None:
    pane = spawn(service, "--shell", "bash")
    wait_for(lambda: ls_json(service)[pane]["shell_state"] == "prompt", what="the prompt")
    ok(service.muxctl("send", str(pane), "sleep 321", "--enter"))
    wait_for(lambda: ls_json(service)[pane]["shell_state"] == "command", what="sleep running")
    (row,) = [r for r in ok(service.muxctl("ls")).splitlines() if r.startswith(str(pane))]
    assert row.endswith("sleep 321")
