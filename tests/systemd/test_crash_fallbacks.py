"""When a crashed muxd cannot re-adopt its panes, the snapshot brings them back
(docs/systemd.md#crash-survival): nothing is lost, nothing runs twice.

Two ways to get there under a real systemd --user: muxd serving on its own
private bus (no user bus, so no service manager to put panes in scopes: the
panes die with mux.service's cgroup), and a record in the fd store that no
longer reads (the terminals systemd hands back are hung up, the scopes of the
old instance stopped).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
from pathlib import Path

from mux.protocol.names import EXIT_STATUS_NOT_STARTED
from tests.harness import pid_alive, wait_for
from tests.systemd.conftest import UserSystemd
from tests.systemd.test_crash_survival import _tail, install, listed, restarted, scopes, spawn

# A program that a hang-up does not end: only stopping its scope does.
DEAF = "trap '' HUP; exec sleep 960"


def _snapshot(sd: UserSystemd) -> None:
    result = sd.muxctl("snapshot")
    assert result.returncode == 0, result.stderr


def _titles(panes: dict[int, dict[str, object]]) -> dict[str, object]:
    return {str(pane["title"]): pane["state"] for pane in panes.values()}


def test_a_crash_on_the_private_bus_restores_the_panes_from_the_snapshot(
    user_systemd: UserSystemd,
) -> None:
    sd = user_systemd
    # A user manager without a user bus: no dbus.socket, no socket file (a stopped
    # socket unit leaves it behind), no address in the services' environment.
    sd.systemctl("stop", "dbus.socket", "dbus.service")
    (sd.runtime / "bus").unlink(missing_ok=True)
    sd.systemctl("unset-environment", "DBUS_SESSION_BUS_ADDRESS")
    log = install(sd, "Environment=MUX_LOG_LEVEL=DEBUG")
    first_ids = [spawn(sd, "--title", f"p{n}", "--", "sleep", f"{940 + n}") for n in range(3)]
    # Its output is saved (sealed) with the snapshot and shown again after the crash.
    printed = "printf '%s%s\\n' CRASH-CONTENTS -MARKER; exec sleep 950"
    first_ids.append(spawn(sd, "--title", "printer", "--", "sh", "-c", printed))
    wait_for(
        lambda: "CRASH-CONTENTS-MARKER" in sd.muxctl("capture", str(first_ids[-1])).stdout,
        what="the printer's output",
    )
    before = listed(sd)
    assert sorted(before) == first_ids
    status = sd.muxctl("status")
    assert "private" in status.stdout, status.stdout
    assert scopes(sd) == [], "no service manager on the private bus: no scope"
    _snapshot(sd)
    first = sd.main_pid()

    os.kill(first, signal.SIGKILL)
    restarted(sd, first, log)
    after = wait_for(lambda: listed(sd), what=f"muxctl to answer\n{_tail(log)}")
    assert _titles(after) == _titles(before), _tail(log)
    assert sorted(after) == first_ids, "each pane keeps its id"
    screen = sd.muxctl("capture", str(first_ids[-1])).stdout
    old, marker = screen.find("CRASH-CONTENTS-MARKER"), screen.find("── restored")
    assert 0 <= old < marker, screen
    # The programs were in mux.service's cgroup, which systemd killed: started again.
    for pane in before.values():
        assert not pid_alive(int(pane["pid"]))
    assert all(pid_alive(int(pane["pid"])) for pane in after.values())
    assert sd.show("mux.service", "NRestarts") == "1"
    assert "re-adopting 0 of its 4 panes" in _tail(log)

    pids = [int(pane["pid"]) for pane in after.values()]
    sd.systemctl("stop", "mux.service")
    wait_for(lambda: not any(map(pid_alive, pids)), what="every pane's process to end")


def _spoil_record(muxd: int) -> int:
    """Overwrite both slots of the record muxd keeps in the fd store; how many."""
    spoiled = 0
    for fd in os.listdir(f"/proc/{muxd}/fd"):
        link = os.readlink(f"/proc/{muxd}/fd/{fd}")
        if link.startswith("/memfd:mux-record-"):
            with open(f"/proc/{muxd}/fd/{fd}", "r+b") as slot:
                slot.write(b"not a record" * 8)
            spoiled += 1
    return spoiled


def test_a_damaged_record_falls_back_to_the_snapshot_and_runs_nothing_twice(
    user_systemd: UserSystemd, tmp_path: Path
) -> None:
    sd = user_systemd
    log = install(sd, "Environment=MUX_LOG_LEVEL=DEBUG")
    spawn(sd, "--title", "plain", "--", "sleep", "950")
    spawn(sd, "--title", "deaf", "--", "sh", "-c", DEAF)
    before = listed(sd)
    wait_for(lambda: len(scopes(sd)) == 2, what=f"two pane scopes\n{_tail(log)}")
    wait_for(
        lambda: sd.show("mux.service", "NFileDescriptorStore") == "6",
        what="the store to keep both panes",
    )
    _snapshot(sd)
    first = sd.main_pid()
    old_scopes = scopes(sd)

    assert _spoil_record(first) == 2
    os.kill(first, signal.SIGKILL)
    restarted(sd, first, log)
    wait_for(lambda: "damaged" in _tail(log), what="the log to say the record is damaged")
    after = wait_for(lambda: listed(sd), what=f"muxctl to answer\n{_tail(log)}")
    assert _titles(after) == _titles(before), _tail(log)
    # The terminals systemd handed back were hung up, the old scopes stopped: the
    # old programs are gone, even one that ignores a hang-up, and only the
    # restored ones run.
    old_pids = [int(pane["pid"]) for pane in before.values()]
    wait_for(lambda: not any(map(pid_alive, old_pids)), what="the old programs to end")
    assert all(pid_alive(int(pane["pid"])) for pane in after.values())
    wait_for(
        lambda: len(scopes(sd)) == 2 and not set(scopes(sd)) & set(old_scopes),
        what=f"only the restored panes' scopes\n{_tail(log)}",
    )
    # The restored panes are kept from now on; nothing of the old ones is.
    wait_for(
        lambda: sd.show("mux.service", "NFileDescriptorStore") == "6",
        what="the store to hold the restored panes and a new record",
    )
    # And the next crash re-adopts them as usual.
    second = sd.main_pid()
    os.kill(second, signal.SIGKILL)
    restarted(sd, second, log)
    again = listed(sd)
    assert {k: v["pid"] for k, v in again.items()} == {k: v["pid"] for k, v in after.items()}

    pids = [int(pane["pid"]) for pane in again.values()]
    sd.systemctl("stop", "mux.service")
    wait_for(lambda: not any(map(pid_alive, pids)), what="every pane's process to end")
    assert scopes(sd) == []


def _shape(sd: UserSystemd) -> list[str]:
    """Every window's layout with its panes named by their argv (ids change at a restore)."""
    argv = {pane_id: " ".join(pane["argv"]) for pane_id, pane in listed(sd).items()}
    windows = json.loads(sd.muxctl("windows", "--json").stdout)
    return sorted(
        re.sub(r'"pane": ?(\d+)', lambda m: f'"pane": "{argv[int(m[1])]}"', json.dumps(w["layout"]))
        for w in windows
    )


def test_a_place_holder_and_its_problem_outlive_a_crash(
    user_systemd: UserSystemd, tmp_path: Path
) -> None:
    sd = user_systemd
    log = install(sd, "Environment=MUX_LOG_LEVEL=DEBUG")
    program = tmp_path / "vanishing"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    first_keeper = spawn(sd, "--title", "keeper", "--", "sleep", "970")
    split = sd.muxctl("split", str(first_keeper), "--horizontal", "--", str(program), "971")
    assert split.returncode == 0, split.stderr
    shape = _shape(sd)
    sd.systemctl("stop", "mux.service")
    program.unlink()
    sd.systemctl("start", "mux.service")
    before = wait_for(lambda: listed(sd), what=f"muxctl to answer\n{_tail(log)}")
    (keeper,) = [p for p in before.values() if p["state"] == "running"]
    (holder,) = [p for p in before.values() if p["state"] == "exited"]
    assert (holder["pid"], holder["exit_status"]) == (0, EXIT_STATUS_NOT_STARTED)
    assert _shape(sd) == shape, "the place held"
    wait_for(lambda: len(scopes(sd)) == 1, what=f"the keeper's scope\n{_tail(log)}")
    _snapshot(sd)
    first = sd.main_pid()

    os.kill(first, signal.SIGKILL)
    restarted(sd, first, log)
    after = wait_for(lambda: listed(sd), what=f"muxctl to answer\n{_tail(log)}")
    assert after[keeper["id"]]["pid"] == keeper["pid"], "the keeper re-adopted"
    assert after[holder["id"]] == holder, "the place holder as it was"
    assert _shape(sd) == shape
    problems = sd.busctl(
        "call", "org.mux.Mux1", "/org/mux/Mux1", "org.mux.Mux1.Manager", "ListRestoreProblems"
    )
    assert problems.stdout.startswith("aa{sv} 1 "), problems
    assert str(program) in problems.stdout and "does not exist" in problems.stdout, problems

    sd.systemctl("stop", "mux.service")
    wait_for(lambda: not pid_alive(int(keeper["pid"])), what="the keeper to end")
