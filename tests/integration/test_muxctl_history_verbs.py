"""The muxctl verbs of SPEC §13 against a real muxd: `snapshots`, `restore GENERATION
[--pane ID...] [--dry-run]`, `start ID|--all`, `forget-contents`.

Written against the Manager interface of SPEC §13 while the service side was being
built: a test whose D-Bus method muxd does not declare yet (mux.protocol.dbus_methods)
is skipped as WAITING, and runs once it does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mux.protocol.dbus_methods import MANAGER_METHODS
from tests.harness import Service, wait_for


def waiting_for(*methods: str) -> pytest.MarkDecorator:
    missing = [m for m in methods if m not in MANAGER_METHODS]
    return pytest.mark.skipif(
        bool(missing), reason=f"WAITING: muxd does not declare {', '.join(missing)} yet"
    )


def _json(service: Service, *args: str) -> Any:
    return json.loads(service.muxctl(*args, "--json", check=True).stdout)


def _panes(service: Service) -> dict[int, dict[str, Any]]:
    return {p["id"]: p for p in _json(service, "ls")}


def _snapshot_holding(service: Service, argv: list[str]) -> int:
    """The generation of the newest snapshot in the history whose restore would start a
    pane running `argv` (a dry run says; a pane still running is never started twice,
    so `argv` must not run now)."""
    for record in _json(service, "snapshots"):
        would = _json(service, "restore", str(record["generation"]), "--dry-run")
        if any(entry["argv"] == argv for entry in would["panes"]):
            return int(record["generation"])
    raise AssertionError(f"no snapshot in the history holds {argv}")


@waiting_for("ListSnapshots")
def test_snapshots_lists_the_history_newest_first(service: Service) -> None:
    service.spawn(["sleep", "621"])
    service.muxctl("snapshot", check=True)
    service.spawn(["sleep", "622"])
    service.muxctl("snapshot", check=True)
    records = _json(service, "snapshots")
    assert records, "the history holds the snapshots just taken"
    for record in records:
        assert set(record) >= {"generation", "time", "panes", "windows", "hosts", "bytes"}
        assert isinstance(record["summary"], str)
    times = [(r["time"], r["generation"]) for r in records]
    assert times == sorted(times, reverse=True), "newest first"
    assert records[0]["panes"] == 2

    lines = service.muxctl("snapshots", check=True).stdout.splitlines()
    assert lines[0].split() == ["GENERATION", "TIME", "PANES", "WINDOWS", "SIZE", "SUMMARY"]
    assert lines[1].split()[0] == str(records[0]["generation"])


@waiting_for("ListSnapshots", "RestoreSnapshot")
def test_restore_a_dry_run_then_one_pane_beside_what_runs(service: Service) -> None:
    keep = service.spawn(["sleep", "623"])
    gone = service.spawn(["sleep", "624"])
    service.muxctl("snapshot", check=True)
    service.muxctl("kill", str(gone), check=True)
    wait_for(lambda: gone not in _panes(service), what="the killed pane to go")
    generation = _snapshot_holding(service, ["sleep", "624"])

    dry = _json(service, "restore", str(generation), "--pane", str(gone), "--dry-run")
    assert dry["dry_run"] is True
    (entry,) = dry["panes"]
    assert entry["argv"] == ["sleep", "624"] and entry["pane"] == 0
    assert set(_panes(service)) == {keep}, "a dry run changes nothing"
    text = service.muxctl("restore", str(generation), "--dry-run", check=True).stdout
    assert f"generation {generation} would start" in text and "sleep 624" in text

    done = _json(service, "restore", str(generation), "--pane", str(gone))
    (started,) = done["panes"]
    assert started["argv"] == ["sleep", "624"] and started["pane"] != 0
    panes = _panes(service)
    assert panes[started["pane"]]["argv"] == ["sleep", "624"]
    assert panes[keep]["state"] == "running", "what ran still runs"
    assert [p for p in panes.values() if p["argv"] == ["sleep", "623"]] == [panes[keep]], (
        "never a second copy of a pane still running from the same launch"
    )


@waiting_for("RestoreSnapshot")
def test_restore_of_a_generation_that_is_not_there(service: Service) -> None:
    result = service.muxctl("restore", "999999")
    assert result.returncode != 0 and result.stderr.startswith("muxctl: ")
    assert "Traceback" not in result.stderr


@waiting_for("Start")
def test_start_the_panes_held_by_restore_ask(make_service: Any) -> None:
    service: Service = make_service('restore = "ask"\n')
    first = service.spawn(["sleep", "625"])
    second = service.spawn(["sleep", "626"])
    assert service.stop() == 0
    service.start()

    def held() -> dict[int, dict[str, Any]]:
        panes = _panes(service)
        return panes if panes and all(p["state"] == "held" for p in panes.values()) else {}

    panes = wait_for(held, what="the restored panes to be held")
    assert set(panes) == {first, second}, "a restored pane keeps its id"
    assert "held" in service.muxctl("ls", check=True).stdout
    status = service.muxctl("status", check=True).stdout
    assert "2 waiting to start" in status
    assert f"waiting to start: pane {first} (sleep 625): muxctl start {first}" in status

    assert service.muxctl("start", str(first), check=True).stdout == f"started pane {first}\n"
    wait_for(lambda: _panes(service)[first]["state"] == "running", what="the started pane")
    assert _panes(service)[second]["state"] == "held"

    assert _json(service, "start", "--all") == {"started": [second]}
    wait_for(lambda: _panes(service)[second]["state"] == "running", what="every pane started")
    assert service.muxctl("start", "--all", check=True).stdout == "no pane is waiting to start\n"


@waiting_for("ForgetContents")
def test_forget_contents(service: Service) -> None:
    service.spawn(["sh", "-c", "echo remembered; sleep 627"])
    service.muxctl("snapshot", check=True)
    assert "wiped" in service.muxctl("forget-contents", check=True).stdout
    assert _json(service, "forget-contents") == {"forgotten": True}
