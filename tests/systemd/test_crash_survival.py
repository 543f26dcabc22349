"""Panes outlive a crash of muxd under a real systemd --user (docs/systemd.md#crash-survival).

Each pane runs in a scope of its own; its terminal and a record of the panes
sit in the service manager's fd store; systemd restarts a muxd that was
killed (SIGKILL, SIGSEGV, the watchdog) and the new one re-adopts every pane:
same ids, pids, titles, directories, token, and what the programs wrote while
no muxd ran.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from mux.protocol.names import EXIT_STATUS_UNKNOWN
from tests.attach_client import ProtocolClient
from tests.harness import pid_alive, wait_for
from tests.systemd.conftest import UserSystemd

COUNTER = "i=0; while :; do i=$((i+1)); echo count-$i; sleep 0.1; done"


def install(sd: UserSystemd, *service_lines: str) -> Path:
    """Install the units with a drop-in that logs muxd to a file (no journald runs
    here), plus `service_lines`; start the socket. Returns the log."""
    result = sd.muxctl("install")
    assert result.returncode == 0, result.stderr
    log = sd.root / "muxd.log"
    dropin = sd.home / ".config/systemd/user/mux.service.d"
    dropin.mkdir(parents=True)
    lines = [f"StandardError=append:{log}", *service_lines]
    (dropin / "test.conf").write_text("[Service]\n" + "\n".join(lines) + "\n")
    sd.systemctl("daemon-reload")
    sd.systemctl("start", "mux.socket")
    return log


def spawn(sd: UserSystemd, *args: str) -> int:
    result = sd.muxctl("spawn", *args)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split()[0])


def listed(sd: UserSystemd) -> dict[int, dict[str, Any]]:
    result = sd.muxctl("ls", "--json")
    assert result.returncode == 0, result.stderr
    return {pane["id"]: pane for pane in json.loads(result.stdout)}


def scopes(sd: UserSystemd) -> list[str]:
    out = sd.systemctl("list-units", "--all", "--plain", "--no-legend", "mux-pane-*").stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def restarted(sd: UserSystemd, old: int, log: Path) -> int:
    wait_for(
        lambda: sd.main_pid() not in (0, old) and sd.show("mux.service", "ActiveState") == "active",
        timeout=40,
        what=f"mux.service to be restarted\n{_tail(log)}",
    )
    return sd.main_pid()


def captured(sd: UserSystemd, pane_id: int) -> str:
    return sd.muxctl("capture", str(pane_id)).stdout


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:] if log.exists() else ""


def _last_count(text: str) -> int:
    counts = [int(w.split("-")[1]) for w in text.split() if w.startswith("count-")]
    return max(counts, default=0)


def _crash(sd: UserSystemd, how: str, pid: int) -> None:
    if how == "watchdog":
        # A stopped process feeds no watchdog, just like a stuck event loop.
        os.kill(pid, signal.SIGSTOP)
    else:
        os.kill(pid, signal.SIGKILL if how == "kill" else signal.SIGSEGV)


@pytest.mark.parametrize("how", ["kill", "segv", "watchdog"])
def test_a_crashed_muxd_is_restarted_and_readopts_every_pane(
    user_systemd: UserSystemd, tmp_path: Path, how: str
) -> None:
    sd = user_systemd
    extra = ["WatchdogSec=2", "TimeoutAbortSec=1"] if how == "watchdog" else []
    log = install(sd, *extra, "Environment=MUX_LOG_LEVEL=DEBUG")
    work = tmp_path / "work dir"
    work.mkdir()
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    token = sd.muxctl("spawn", "--bind-instance", "--title", "counter", "--", "sh", "-c", COUNTER)
    assert token.returncode == 0, token.stderr
    counter, instance = int(token.stdout.split()[0]), token.stdout.split()[1]
    window = str(listed(sd)[counter]["window"])
    sleeper = spawn(
        sd, "--title", "sleeper", "--cwd", str(work), "--window", window, "--", "sleep", "900"
    )
    goner = spawn(sd, "--title", "goner", "--", "sleep", "901")
    big = spawn(
        sd,
        "--",
        "sh",
        "-c",
        f"read go < '{fifo}'; head -c 2000000 /dev/zero | tr '\\0' x; echo; echo LAST-LINE; "
        "exec sleep 902",
    )
    wait_for(lambda: _last_count(captured(sd, counter)) >= 3, what="the counter to count")
    before = listed(sd)
    windows_before = json.loads(sd.muxctl("windows", "--json").stdout)
    assert len(windows_before) == 3, "the sleeper is in the counter's window"
    wait_for(lambda: len(scopes(sd)) == 4, what=f"four pane scopes\n{_tail(log)}")
    status = sd.systemctl("status", "mux.service").stdout
    for pane in before.values():
        assert f"{pane['pid']} " not in status, "no pane runs in mux.service's cgroup"
    first = sd.main_pid()

    _crash(sd, how, first)
    if how != "watchdog":
        wait_for(lambda: not pid_alive(first), what="muxd to be gone")
    os.kill(before[goner]["pid"], signal.SIGTERM)  # ends while no muxd runs (or hangs)
    with open(fifo, "w") as go:  # 2 MB while muxd is down: the writer blocks, not lost
        go.write("go\n")
    second = restarted(sd, first, log)

    after = listed(sd)
    assert set(after) == set(before), _tail(log)
    for pane_id in (counter, sleeper, big):
        for key in ("pid", "title", "cwd", "window", "argv", "state"):
            assert after[pane_id][key] == before[pane_id][key], (pane_id, key, _tail(log))
        assert pid_alive(after[pane_id]["pid"])
    assert after[sleeper]["cwd"] == str(work)
    assert json.loads(sd.muxctl("windows", "--json").stdout) == windows_before, "layouts too"
    wait_for(lambda: listed(sd)[goner]["state"] == "exited", what="the goner listed exited")
    assert listed(sd)[goner]["exit_status"] == EXIT_STATUS_UNKNOWN
    # Three running panes' terminals and endpoints, the record's two slots: the
    # goner's terminal, handed back, has nothing left to keep and left the store.
    wait_for(
        lambda: sd.show("mux.service", "NFileDescriptorStore") == "8",
        what="the store to hold what the running panes need",
    )
    wait_for(lambda: "LAST-LINE" in captured(sd, big), what="the last line of the 2 MB")
    seen = _last_count(captured(sd, counter))
    wait_for(lambda: _last_count(captured(sd, counter)) > seen, what="the counter to go on")
    assert sd.show("mux.service", "NRestarts") == "1"
    assert second != first
    # The same id space: the same token, and the next id goes on from the last.
    again = sd.muxctl("spawn", "--bind-instance", "--", "sleep", "903")
    assert again.stdout.split()[1] == instance
    assert int(again.stdout.split()[0]) == big + 1
    # No spawn record survives a crash: a conditional kill cannot prove "unattached".
    refused = sd.muxctl("kill-if", str(sleeper), "--instance", instance, "--unattached-since-spawn")
    assert refused.returncode != 0 and "come from Spawn" in refused.stderr, refused.stderr
    assert pid_alive(after[sleeper]["pid"])
    # The re-adopted pane can be attached to and typed into.
    client = ProtocolClient.connect(sd.runtime / "mux" / "mux.sock")
    try:
        client.attach(counter)
        client.wait_until(lambda: "count-" in client.output_text(), what="the counter's screen")
    finally:
        client.close()

    pids = [pane["pid"] for pane in after.values()]
    sd.systemctl("stop", "mux.service")
    wait_for(lambda: not any(map(pid_alive, pids)), what="every pane's process to end")
    assert scopes(sd) == [], "a clean stop leaves no pane scope"
    assert sd.show("mux.service", "NFileDescriptorStore") == "0"


def test_twenty_crashes_in_a_row_lose_nothing_and_leak_no_fd(user_systemd: UserSystemd) -> None:
    sd = user_systemd
    # Twenty restarts in a row are more than the default start limit allows.
    log = install(sd, "RestartSec=100ms")
    dropin = sd.home / ".config/systemd/user/mux.service.d" / "limit.conf"
    dropin.write_text("[Unit]\nStartLimitIntervalSec=0\n")
    sd.systemctl("daemon-reload")
    ids = [spawn(sd, "--title", f"p{n}", "--", "sleep", f"{1000 + n}") for n in range(50)]
    before = listed(sd)
    assert sorted(before) == ids
    wait_for(lambda: len(scopes(sd)) == 50, what="fifty pane scopes")
    baseline = len(os.listdir(f"/proc/{sd.main_pid()}/fd"))
    for crash in range(20):
        old = sd.main_pid()
        os.kill(old, signal.SIGKILL)
        restarted(sd, old, log)
        after = listed(sd)
        assert {k: (v["pid"], v["title"]) for k, v in after.items()} == {
            k: (v["pid"], v["title"]) for k, v in before.items()
        }, (crash, _tail(log))
    fds = len(os.listdir(f"/proc/{sd.main_pid()}/fd"))
    assert fds <= baseline + 2, (baseline, fds, "fds leaked across crashes")
    # Each pane's terminal and resurrection endpoint, and the record's two slots.
    assert int(sd.show("mux.service", "NFileDescriptorStore")) == 50 * 2 + 2
    assert sd.show("mux.service", "NRestarts") == "20"
    sd.systemctl("stop", "mux.service")
    assert scopes(sd) == []
    assert sd.show("mux.service", "NFileDescriptorStore") == "0"
    pids = [pane["pid"] for pane in before.values()]
    wait_for(lambda: not any(map(pid_alive, pids)), what="every pane's process to end")
