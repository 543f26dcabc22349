"""The session keeper's start, without a muxd: what it makes of the file the last muxd
left (absent, refused, unreadable), and what it then reports."""

import asyncio
import json
from pathlib import Path

import pytest

from mux.config import Settings
from mux.lifecycle.session_keeper import SessionKeeper
from mux.protocol.errors import Unavailable
from mux.resurrection.checkpoints import CheckpointStore
from mux.system.paths import Paths


def make_keeper(tmp_path: Path) -> tuple[SessionKeeper, Paths]:
    paths = Paths(runtime=tmp_path / "run", state=tmp_path / "state", config_file=tmp_path / "c")
    paths.state.mkdir()
    keeper = SessionKeeper(
        Settings(),
        paths,
        None,  # type: ignore[arg-type]  # (loading never touches the pane table)
        CheckpointStore(paths.checkpoints),
        resumed_generation=None,
        saved=lambda generation: None,
        failed=lambda reason: None,
    )
    return keeper, paths


def test_no_snapshot_is_no_problem(tmp_path: Path) -> None:
    keeper, _ = make_keeper(tmp_path)
    assert keeper.load() is None
    assert keeper.unrestored_panes() == []
    assert keeper.notes == []


def test_a_malformed_snapshot_is_quarantined_reported_and_its_generation_respected(
    tmp_path: Path,
) -> None:
    keeper, paths = make_keeper(tmp_path)
    paths.session_file.write_text(json.dumps({"version": 1, "generation": 41, "panes": "?"}))
    assert keeper.load() is None
    assert not paths.session_file.exists()
    (moved,) = paths.quarantine.iterdir()
    [whole] = keeper.unrestored_panes()
    assert whole.pane_id == 0 and moved.name in whole.reason
    assert keeper.notes == [keeper.session_problem]

    async def start() -> int:
        keeper.start_saving(asyncio.get_running_loop(), None)
        return keeper.generation

    assert asyncio.run(start()) == 41  # generations only grow, even past a refused file


def test_an_unreadable_snapshot_is_moved_aside_not_replaced(tmp_path: Path) -> None:
    keeper, paths = make_keeper(tmp_path)
    paths.session_file.mkdir()  # reading it fails with an OSError (EISDIR)
    assert keeper.load() is None
    assert not paths.session_file.exists()
    assert [p.is_dir() for p in paths.quarantine.iterdir()] == [True]
    assert "cannot be read" in keeper.session_problem


def test_a_snapshot_before_saving_started_is_refused_in_words(tmp_path: Path) -> None:
    keeper, _ = make_keeper(tmp_path)
    with pytest.raises(Unavailable, match="still starting"):
        asyncio.run(keeper.snapshot())
