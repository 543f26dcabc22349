"""pace_the_collector: young collections paced, what exists at start frozen, garbage not."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from mux.system.memory import YOUNG_COLLECTION_THRESHOLD, pace_the_collector


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def collector() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_what_exists_is_frozen_and_garbage_is_collected_first(collector: None) -> None:
    kept = Node()
    garbage = Node()
    garbage.other = Node()
    garbage.other.other = garbage  # a cycle only the collector frees
    gone = weakref.ref(garbage)
    del garbage
    pace_the_collector()
    assert gone() is None  # collected, not frozen for good
    assert gc.get_freeze_count() > 0
    assert gc.is_tracked(kept)
    assert gc.get_threshold()[0] == YOUNG_COLLECTION_THRESHOLD
    # What comes later is still seen by the collector.
    late = Node()
    late.other = late
    late_gone = weakref.ref(late)
    del late
    gc.collect()
    assert late_gone() is None
