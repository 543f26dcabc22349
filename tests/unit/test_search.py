"""The bounds on a desktop search query and the reading of result ids
(mux.panes.search; docs/desktop.md#pane-search); no bus."""

from __future__ import annotations

import pytest

from mux.panes.search import (
    MAX_IDS,
    PaneFacts,
    QueryLimits,
    checked_ids,
    pane_id_of,
    search,
)
from mux.protocol.errors import InvalidArgument

LIMITS = QueryLimits(max_bytes=1024, max_terms=32)


def test_a_query_within_bounds_is_its_words() -> None:
    assert LIMITS.query_terms("  build   server ") == ["build", "server"]
    assert LIMITS.query_terms(" ".join(["w"] * 32)) == ["w"] * 32
    assert LIMITS.checked_terms(["é" * 512]) == ["é" * 512]  # 1024 bytes


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("a " * 1_000_000, "longer than 1024 bytes (search_query_max_bytes)"),
        (" ".join(["w"] * 33), "33 terms; at most 32 (search_query_max_terms)"),
        ("é" * 513, "longer than 1024 bytes"),  # 513 characters, 1026 bytes
    ],
)
def test_a_query_out_of_bounds_is_refused_naming_the_limit(query: str, named: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        LIMITS.query_terms(query)
    assert named in refused.value.message


def test_a_term_list_is_bounded_too() -> None:
    with pytest.raises(InvalidArgument, match="search_query_max_terms"):
        LIMITS.checked_terms([""] * 33)
    with pytest.raises(InvalidArgument, match="search_query_max_bytes"):
        LIMITS.checked_terms(["a" * 600, "b" * 600])
    assert checked_ids(["1"] * MAX_IDS)
    with pytest.raises(InvalidArgument, match=f"at most {MAX_IDS}"):
        checked_ids(["1"] * (MAX_IDS + 1))


@pytest.mark.parametrize(
    ("identifier", "pane"),
    [
        ("1", 1),
        ("0042", 42),
        ("\u0661", None),  # ARABIC-INDIC DIGIT ONE: int() reads it as 1
        ("\uff11", None),  # FULLWIDTH DIGIT ONE
        ("\u00b9", None),  # SUPERSCRIPT ONE
        ("1 ", None),
        (" 1", None),
        ("+1", None),
        ("-1", None),
        ("1_0", None),
        ("", None),
        ("9" * 19, int("9" * 19)),
        ("9" * 20, None),
    ],
)
def test_a_result_id_is_ascii_digits(identifier: str, pane: int | None) -> None:
    assert pane_id_of(identifier) == pane


def test_a_repeated_term_counts_once_and_every_term_must_match() -> None:
    panes = [
        PaneFacts(1, "build", "make", "/src", True),
        PaneFacts(2, "notes", "cat", "/src/build", True),
    ]
    assert [f.pane_id for f in search(panes, ["build"] * 32)] == [1, 2]
    assert [f.pane_id for f in search(panes, ["build", "cat"])] == [2]
    assert search(panes, ["", "  "]) == []


def test_what_a_result_shows_has_controls_escaped() -> None:
    facts = PaneFacts(3, "a\x1b[2J\u202eb", "x\x9by", "/d\x07", False)
    assert facts.name == "Pane 3: a\\x1b[2J\\u202eb"
    assert facts.description == "x\\x9by — /d\\x07 (exited)"
