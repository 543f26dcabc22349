"""A verb that does not attach reaches its answer without what it does not need
(issue: a quick CLI): no asyncio event loop, no dbus-fast, no pydantic -- read from
the interpreter's own import log (-X importtime) of real runs against a real muxd."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.harness import Service

HEAVY = ("asyncio", "dbus_fast", "pydantic", "pydantic_settings", "pyroute2", "shtab")


def _imported(service: Service, *args: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "muxctl", *args],
        env=service.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    names = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


@pytest.mark.parametrize(
    "verb",
    [("ls",), ("status",), ("ls", "--json"), ("snapshot",), ("completion", "bash")],
    ids=" ".join,
)
def test_a_verb_loads_nothing_heavy(service: Service, verb: tuple[str, ...]) -> None:
    imported = _imported(service, *verb)
    assert "muxctl" in imported
    assert not imported & set(HEAVY) - ({"shtab"} if verb[0] == "completion" else set())


def test_spawn_capture_and_kill_load_nothing_heavy(service: Service) -> None:
    pane = service.spawn(["sleep", "600"])
    for verb in (("capture", str(pane)), ("kill", str(pane)), ("spawn", "--", "true")):
        assert not _imported(service, *verb) & set(HEAVY), verb
