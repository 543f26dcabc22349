"""Terminal queries found in output, and mux's answers."""

from mux.terminal.queries import Found, Query, answer, find_queries


def test_found_where_they_end() -> None:
    data = b"ab\x1b[6nxy\x1b[c\x1b[0c\x1b[5n\x1b[31mred"
    assert find_queries(data) == [
        Found(6, Query.CURSOR_POSITION),
        Found(11, Query.DEVICE_ATTRIBUTES),
        Found(15, Query.DEVICE_ATTRIBUTES),
        Found(19, Query.STATUS),
    ]
    assert find_queries(b"plain \x1b[1;6H text") == []


def test_answers() -> None:
    assert answer(Query.CURSOR_POSITION, (0, 2)) == b"\x1b[1;3R"
    assert answer(Query.STATUS, (5, 5)) == b"\x1b[0n"
    assert answer(Query.DEVICE_ATTRIBUTES, (0, 0)) == b"\x1b[?1;2c"
