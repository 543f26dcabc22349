"""A verb that does not attach reaches its answer without what it does not need
(issue: a quick CLI): no asyncio event loop, no dbus-fast, no pydantic -- read from
the interpreter's own import log (-X importtime) of real runs against a real muxd."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jeepney
import pytest

import mux
import muxctl
from tests.harness import Service

HEAVY = ("asyncio", "dbus_fast", "pydantic", "pydantic_settings", "pyroute2", "shtab")
# Each a few ms of every call, so loaded only where needed: json for --json, pathlib
# to find or start a muxd that does not simply answer, shutil nowhere (argparse's help
# would load it for the terminal's width: muxctl.parser finds it).
NOT_FOR_A_PLAIN_CALL = ("json", "pathlib", "shutil")


def _imported(service: Service, *args: str, site: bool = True) -> set[str]:
    """What `muxctl ARGS` imports. Without `site`, under `python -S`: site's .pth files
    (an editable install's finder) load pathlib, shutil and more before muxctl starts,
    so muxctl, mux and jeepney are found on PYTHONPATH instead."""
    env, flags = service.env, []
    if not site:
        dirs = dict.fromkeys(str(Path(str(m.__file__)).parents[1]) for m in (muxctl, mux, jeepney))
        env, flags = {**env, "PYTHONPATH": os.pathsep.join(dirs)}, ["-S"]
    result = subprocess.run(
        [sys.executable, *flags, "-X", "importtime", "-m", "muxctl", *args],
        env=env,
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


@pytest.mark.parametrize("bus", ["service", "private_service"])
def test_ls_and_spawn_load_no_json_pathlib_or_shutil(
    request: pytest.FixtureRequest, bus: str
) -> None:
    service = request.getfixturevalue(bus)
    for verb in (("spawn", "--", "true"), ("ls",)):
        assert not _imported(service, *verb, site=False) & set(NOT_FOR_A_PLAIN_CALL), verb
    assert "json" in _imported(service, "ls", "--json", site=False)  # the probe sees them
