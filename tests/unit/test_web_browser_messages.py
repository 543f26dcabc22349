"""What a pane page may say besides keys (muxctl.web.browser_messages)."""

import pytest

from muxctl.web.browser_messages import BadMessage, Pause, Resume, SizeChanged, parse


def test_sizes_and_flow_control() -> None:
    assert parse('{"type": "resize", "rows": 40, "cols": 120}') == SizeChanged(40, 120)
    assert parse('{"type": "pause"}') == Pause()
    assert parse('{"type": "resume"}') == Resume()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "not JSON"),
        ("[1]", "no known type"),
        ('{"type": "exec", "argv": ["sh"]}', "no known type"),
        ('{"type": "resize", "rows": 0, "cols": 80}', "1-1000 rows"),
        ('{"type": "resize", "rows": 24, "cols": 1e9}', "1-2000 columns"),
        ('{"type": "resize", "rows": true, "cols": 80}', "rows"),
        ('{"type": "resize", "rows": "24", "cols": 80}', "rows"),
        ("[" * 100_000, "longer than 1024"),
        ('{"type": "pause", "x": "' + "y" * 2000 + '"}', "longer than 1024"),
    ],
)
def test_anything_else_is_refused_with_its_reason(text: str, why: str) -> None:
    with pytest.raises(BadMessage, match=why):
        parse(text)
