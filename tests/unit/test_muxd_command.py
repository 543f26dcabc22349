"""The one command line that runs muxd: what it is, and that it really runs muxd."""

import subprocess
import sys

import pytest

from mux import __version__
from mux.system.muxd_command import muxctl_argv, muxd_argv


def test_muxd_runs_with_this_interpreter_never_importing_from_the_working_directory() -> None:
    assert muxd_argv() == [sys.executable, "-P", "-m", "mux"]
    assert muxctl_argv() == [sys.executable, "-P", "-m", "muxctl"]


def test_the_interpreter_is_read_when_asked_not_when_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "executable", "/opt/venv/bin/python")
    assert muxd_argv()[0] == "/opt/venv/bin/python"


def test_the_command_line_starts_muxd() -> None:
    result = subprocess.run(
        [*muxd_argv(), "--version"], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"muxd {__version__}"
