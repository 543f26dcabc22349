"""KDE's own runner library (libKF5Runner, what krunner uses) against mux's D-Bus runner
(docs/desktop.md#pane-search): it discovers the runner from the plugin file mux ships,
queries it, opens a match and runs its `kill` action. Optional, as it builds a C++
program (tests/desktop/krunner/) against Debian's KF5 packages: set MUX_TEST_KRUNNER=1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.desktop.conftest import recorder_script
from tests.harness import Service, outside_environment, pids_with_env, wait_for

SOURCES = Path(__file__).parent / "krunner"
PLUGIN = Path(__file__).parents[2] / "desktop" / "krunner" / "org.mux.Mux.desktop"
RUNNER_ID = "org.mux.Mux"  # the plugin file's X-KDE-PluginInfo-Name
PACKAGES = ("libkf5runner-dev", "qtbase5-dev", "g++", "cmake", "pkg-config")
ENSURE_PACKAGES = Path(__file__).parents[2] / "scripts" / "ensure-system-packages"


def _missing_packages() -> list[str]:
    missing = []
    for package in PACKAGES:
        status = subprocess.run(
            ["dpkg-query", "--show", "--showformat=${Status}", package],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        if status != "install ok installed":
            missing.append(package)
    return missing


@pytest.fixture(scope="module")
def krunner_query(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/desktop/krunner/query.cpp built against libKF5Runner."""
    if os.environ.get("MUX_TEST_KRUNNER") != "1":
        print("SKIPPED KRunner library check: set MUX_TEST_KRUNNER=1")
        pytest.skip("KRunner library check: set MUX_TEST_KRUNNER=1")
    if shutil.which("dpkg-query") is None:
        pytest.fail("the KRunner library check installs Debian's KF5 packages: no dpkg here")
    missing = _missing_packages()
    if missing:
        print(f"KRunner library check: installing {' '.join(missing)}")
        subprocess.run([str(ENSURE_PACKAGES), "--packages", *missing], check=True, timeout=900)
    else:
        print(f"KRunner library check: {', '.join(PACKAGES)} already installed")
    build = tmp_path_factory.mktemp("krunner-build")
    started = time.monotonic()
    for argv in (
        ["cmake", "-S", str(SOURCES), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
        ["cmake", "--build", str(build)],
    ):
        result = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
        assert result.returncode == 0, f"{argv} failed:\n{result.stdout}\n{result.stderr}"
    print(f"KRunner library check: built krunner-query in {time.monotonic() - started:.1f}s")
    return build / "krunner-query"


class Krunner:
    """Runs krunner-query as a desktop session would run krunner: on the service's
    bus, with mux's plugin file in the user's krunner/dbusplugins."""

    def __init__(self, program: Path, service: Service, root: Path) -> None:
        self.program = program
        self.data_home = root / "kde-data"
        plugins = self.data_home / "krunner" / "dbusplugins"
        plugins.mkdir(parents=True)
        shutil.copy(PLUGIN, plugins / PLUGIN.name)
        runtime = root / "kde-run"
        runtime.mkdir(mode=0o700)
        self.env = outside_environment()
        self.env.update(
            DBUS_SESSION_BUS_ADDRESS=service.bus_address,
            HOME=str(root / "kde-home"),
            XDG_DATA_HOME=str(self.data_home),
            XDG_CONFIG_HOME=str(root / "kde-config"),
            XDG_CACHE_HOME=str(root / "kde-cache"),
            XDG_RUNTIME_DIR=str(runtime),
            QT_QPA_PLATFORM="offscreen",
        )

    def query(self, query: str, *, run: str | None = None) -> list[dict[str, Any]]:
        """The program's lines, parsed; `run`: the action to run on the first match."""
        argv = [str(self.program), query, "--runner", RUNNER_ID]
        if run is not None:
            argv += ["--run", run]
        started = time.monotonic()
        result = subprocess.run(
            argv, env=self.env, capture_output=True, text=True, check=False, timeout=60
        )
        took = time.monotonic() - started
        for line in result.stdout.splitlines():
            print(f"krunner-query {query!r} run={run!r} ({took:.2f}s): {line}")
        assert result.returncode == 0, f"krunner-query exited {result.returncode}:\n{result}"
        # Nothing it started (a KDE helper, say) outlives it.
        assert not pids_with_env("XDG_DATA_HOME", str(self.data_home))
        return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.fixture
def searched(
    krunner_query: Path, tmp_root: Path
) -> Iterator[tuple[Service, Krunner, Path, dict[str, int]]]:
    terminal, record = recorder_script(tmp_root)
    root = tmp_root / "mux"
    root.mkdir()
    config = f"terminal_command = [{json.dumps(str(terminal))}]\n"
    service = Service(root, bus_address=None, config=config).start()
    try:
        panes = {
            "zebra": service.spawn(["sleep", "600"], title="zebra-pane"),
            "yak": service.spawn(["sleep", "600"], title="yak-pane"),
        }
        yield service, Krunner(krunner_query, service, tmp_root), record, panes
    finally:
        service.stop()


def test_krunner_library_finds_opens_and_kills_a_pane(
    searched: tuple[Service, Krunner, Path, dict[str, int]],
) -> None:
    service, krunner, record, panes = searched
    zebra = panes["zebra"]

    runners, *matches = krunner.query("zebra")
    assert runners == {"runners": [RUNNER_ID]}, "the runner is found from its plugin file"
    assert len(matches) == 1, matches
    (match,) = matches
    # KRunner prefixes the runner's id to a match's (the plugin file does not say
    # X-Plasma-Runner-Unique-Results) and takes it off again for Run.
    assert match["id"] == f"{RUNNER_ID}_{zebra}"
    assert match["text"] == f"Pane {zebra}: zebra-pane"
    assert match["subtext"].startswith("sleep 600 — ")
    assert match["type"] == 30  # possible: the query is not the whole title
    # KRunner raises the relevance of what was run before (its launch counts, kept in
    # XDG_CONFIG_HOME): 1.0 holds for this first query only.
    assert match["relevance"] == 1.0
    assert match["runner"] == RUNNER_ID
    assert match["actions"] == ["kill"]

    (_, exact) = krunner.query("zebra-pane")
    assert exact["id"] == f"{RUNNER_ID}_{zebra}" and exact["type"] == 100
    assert krunner.query("nothing-like-this") == [{"runners": [RUNNER_ID]}]

    *_, ran = krunner.query("zebra", run="")
    assert ran == {"ran": f"{RUNNER_ID}_{zebra}", "action": ""}
    wait_for(record.exists, what="mux to open a terminal")
    argv = record.read_text().splitlines()  # the recorder writes it whole, then renames
    assert argv[-2:] == ["attach", str(zebra)]
    assert zebra in service.panes(), "opening a terminal leaves the pane alone"

    *_, ran = krunner.query("zebra", run="kill")
    assert ran == {"ran": f"{RUNNER_ID}_{zebra}", "action": "kill"}
    wait_for(lambda: zebra not in service.panes(), what=f"pane {zebra} to be closed")
    assert panes["yak"] in service.panes()
    assert krunner.query("zebra") == [{"runners": [RUNNER_ID]}]
