import signal

import pytest

from mux.protocol.errors import InvalidArgument
from mux.protocol.signals import parse_signal


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("TERM", signal.SIGTERM),
        ("SIGTERM", signal.SIGTERM),
        ("hup", signal.SIGHUP),
        ("INT", signal.SIGINT),
        ("KILL", signal.SIGKILL),
        ("USR1", signal.SIGUSR1),
        ("WINCH", signal.SIGWINCH),
    ],
)
def test_names(name: str, expected: signal.Signals) -> None:
    assert parse_signal(name) == expected


@pytest.mark.parametrize("name", ["", "FOO", "9", "SIG", "RTMIN", "TERM; rm -rf /"])
def test_unknown_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidArgument, match="unknown signal"):
        parse_signal(name)
