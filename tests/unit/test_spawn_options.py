"""Spawn option validation (docs/dbus-api.md): every option, every refusal names what is wrong."""

import pytest

from mux.protocol.errors import InvalidArgument
from mux.protocol.spawn_options import LaunchKind, parse_spawn_options


def test_no_options_is_a_login_shell_launch() -> None:
    request = parse_spawn_options({})
    assert request.kind is LaunchKind.SHELL
    assert request.shell is None
    assert request.argv == ()
    assert request.window == 0
    assert request.bind_instance is False
    assert request.resurrection is None


def test_every_option_is_read() -> None:
    request = parse_spawn_options(
        {
            "argv": ("as", ["vim", "notes.txt"]),
            "cwd": ("s", "/tmp"),
            "env": ("a{ss}", {"EDITOR": "vim"}),
            "title": ("s", "notes"),
            "window": ("t", 3),
            "rows": ("q", 40),
            "cols": ("q", 120),
            "bind_instance": ("b", True),
            "resurrection": ("b", False),
        }
    )
    assert request.kind is LaunchKind.EXPLICIT
    assert request.argv == ("vim", "notes.txt")
    assert request.cwd == "/tmp"
    assert dict(request.env) == {"EDITOR": "vim"}
    assert (request.title, request.window, request.rows, request.cols) == ("notes", 3, 40, 120)
    assert request.bind_instance is True
    assert request.resurrection is False


def test_shell_option_is_a_shell_launch() -> None:
    request = parse_spawn_options({"shell": ("s", "zsh")})
    assert request.kind is LaunchKind.SHELL
    assert request.shell == "zsh"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"colour": ("s", "red")}, "unknown option 'colour'"),
        ({"rows": ("i", 10)}, "option 'rows' must be an unsigned 16-bit integer"),
        ({"argv": ("s", "ls")}, "option 'argv' must be an array of strings"),
        ({"argv": ("as", [])}, "'argv' must not be empty"),
        ({"argv": ("as", ["", "x"])}, "must start with a program name"),
        ({"argv": ("as", ["ls"]), "shell": ("s", "bash")}, "either 'argv' or 'shell'"),
        ({"shell": ("s", "")}, "'shell' must name a shell"),
        ({"cwd": ("s", "relative/dir")}, "must be an absolute path"),
        ({"cwd": ("s", "/tmp\x00x")}, "NUL"),
        ({"argv": ("as", ["ls", "a\x00b"])}, "NUL"),
        ({"env": ("a{ss}", {"A=B": "x"})}, "environment variable name 'A=B'"),
        ({"env": ("a{ss}", {"": "x"})}, "environment variable name ''"),
        ({"env": ("a{ss}", {"A": "x\x00"})}, "contains NUL"),
        ({"rows": ("q", 0)}, "'rows' must be between 1 and 1000"),
        ({"cols": ("q", 60000)}, "'cols' must be between 1 and 2000"),
        ({"title": ("s", "x" * 5000)}, "'title' is longer than"),
        ({"bind_instance": ("s", "yes")}, "'bind_instance' must be a boolean"),
    ],
)
def test_refusals_name_the_problem(options: dict[str, tuple[str, object]], message: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        parse_spawn_options(options)
    assert message in info.value.message
