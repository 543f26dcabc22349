"""Finding the program to run the way execvp would, from the pane's directory."""

import os
from pathlib import Path

import pytest

from mux.panes.process import resolve_program
from mux.protocol.errors import SpawnFailed


def _program(path: Path, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    return path


def test_path_search_from_the_panes_directory(tmp_path: Path) -> None:
    tool = _program(tmp_path / "bin" / "tool")
    assert resolve_program("tool", cwd=str(tmp_path), path="bin") == str(tool)
    assert resolve_program("tool", cwd=str(tmp_path), path=f"/nonexistent:{tmp_path}/bin") == str(
        tool
    )
    with pytest.raises(SpawnFailed, match="was not found in PATH"):
        resolve_program("tool", cwd="/", path="bin")


def test_dot_dot_is_resolved_by_the_kernel_through_symlinks(tmp_path: Path) -> None:
    _program(tmp_path / "real" / "prog")
    (tmp_path / "real" / "sub").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "link").symlink_to(tmp_path / "real" / "sub")
    _program(tmp_path / "work" / "prog")  # what a textual normpath would pick instead
    found = resolve_program("./link/../prog", cwd=str(tmp_path / "work"), path=None)
    assert os.path.realpath(found) == str(tmp_path / "real" / "prog")


def test_not_executable_and_directories(tmp_path: Path) -> None:
    _program(tmp_path / "bin" / "plain", mode=0o644)
    (tmp_path / "bin" / "adir").mkdir()
    with pytest.raises(SpawnFailed, match="not executable"):
        resolve_program("plain", cwd=str(tmp_path), path="bin")
    with pytest.raises(SpawnFailed, match="not executable"):
        resolve_program("./bin/plain", cwd=str(tmp_path), path=None)
    with pytest.raises(SpawnFailed, match="is a directory"):
        resolve_program("bin/adir", cwd=str(tmp_path), path=None)
    with pytest.raises(SpawnFailed, match="was not found in PATH"):
        resolve_program("adir", cwd=str(tmp_path), path="bin")
    with pytest.raises(SpawnFailed, match="does not exist"):
        resolve_program("./missing", cwd=str(tmp_path), path=None)
