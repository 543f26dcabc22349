"""A pane's working directory and title from what its program prints (OSC 7, 9;9, 0/2)
and from the process table, with the precedence of the nested-shell case."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harness import Service, wait_for

OSC7 = r"printf '\033]7;file://%s%s\007' '{host}' '{path}'"


def wait_cwd(service: Service, pane: int, expected: tuple[str, str]) -> None:
    wait_for(lambda: service.cwd(pane) == expected, what=f"pane {pane} at {expected}")


def test_osc_7_and_9_9_are_shell_reports_for_local_hosts(service: Service, tmp_root: Path) -> None:
    spaced = tmp_root / "a dir"
    spaced.mkdir()
    script = (
        OSC7.format(host="", path="/tmp")
        + "; read x; "
        + OSC7.format(host="elsewhere.example", path="/usr")
        + "; "
        + r"printf '\033]9;9;/var\033\\'; read y; "
        + OSC7.format(host="localhost", path=str(spaced).replace(" ", "%20"))
        + "; exec cat"
    )
    pane = service.spawn(["sh", "-c", script])
    wait_cwd(service, pane, ("/tmp", "shell"))
    # The same through an independent client, as the Pane object's properties.
    props = service.cwd_properties(pane)
    assert '"/tmp"' in props and '"shell"' in props
    service.call("SendInput", "tay", [pane, b"\n"])
    wait_cwd(service, pane, ("/var", "shell"))  # the remote host's report was ignored
    service.call("SendInput", "tay", [pane, b"\n"])
    wait_cwd(service, pane, (str(spaced), "shell"))


def test_titles_follow_osc_0_and_2_unless_set_by_the_user(service: Service) -> None:
    script = r"printf '\033]2;first title\007'; read x; printf '\033]0;second\033\\'; exec cat"
    pane = service.spawn(["sh", "-c", script])
    wait_for(lambda: service.panes()[pane]["title"] == "first title", what="the OSC 2 title")
    service.call("SendInput", "tay", [pane, b"\n"])
    wait_for(lambda: service.panes()[pane]["title"] == "second", what="the OSC 0 title")
    fixed = service.spawn(
        ["sh", "-c", script.replace("exec cat", "echo done; exec cat")], title="mine"
    )
    service.call("SendInput", "tay", [fixed, b"\n"])
    service.wait_screen(fixed, "done")  # both titles went by
    assert service.panes()[fixed]["title"] == "mine"


def test_a_root_capture_follows_the_program(sampling_service: Service) -> None:
    pane = sampling_service.spawn(["sh", "-c", "cd /usr && exec cat"], cwd="/tmp")
    wait_cwd(sampling_service, pane, ("/usr", "process"))


def test_a_newer_child_capture_supersedes_the_shell_report(sampling_service: Service) -> None:
    # The "integrated shell" reports /tmp, then runs a child that works in /usr.
    script = OSC7.format(host="", path="/tmp") + "; read x; sh -c 'cd /usr && exec cat'"
    pane = sampling_service.spawn(["sh", "-c", script], cwd="/")
    wait_cwd(sampling_service, pane, ("/tmp", "shell"))
    sampling_service.call("SendInput", "tay", [pane, b"\n"])
    wait_cwd(sampling_service, pane, ("/usr", "process"))


def test_a_root_capture_never_supersedes_the_shell_report(sampling_service: Service) -> None:
    # The program itself moves to /usr but its last report says /tmp: the report stands.
    script = OSC7.format(host="", path="/tmp") + "; cd /usr; echo moved; exec cat"
    pane = sampling_service.spawn(["sh", "-c", script], cwd="/")
    sampling_service.wait_screen(pane, "moved")
    wait_cwd(sampling_service, pane, ("/tmp", "shell"))
    # A snapshot samples every pane right before it captures: the report still stands.
    sampling_service.call("Snapshot")
    assert sampling_service.cwd(pane) == ("/tmp", "shell")


def test_the_snapshot_keeps_the_source_and_the_capture_time(service: Service) -> None:
    pane = service.spawn(["sh", "-c", OSC7.format(host="", path="/tmp") + "; exec cat"])
    wait_cwd(service, pane, ("/tmp", "shell"))
    path, _generation = service.call("Snapshot")
    saved = json.loads(Path(path).read_text())
    (record,) = [p for p in saved["panes"] if p["id"] == pane]
    assert record["cwd"]["path"] == "/tmp"
    assert record["cwd"]["source"] == "shell"
    assert record["cwd"]["captured_at"] > 1.7e9  # when the report came, not 0
