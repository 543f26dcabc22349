"""Configuration: TOML file plus MUX_* overrides; errors name the file or variable and field."""

from pathlib import Path

import pytest

from mux.config import ConfigError, load_settings


def test_defaults_without_a_file(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "missing.toml")
    assert settings.default_rows == 24
    assert settings.term == "xterm-256color"


def test_file_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text('term = "screen"\ndefault_rows = 30\n')
    monkeypatch.setenv("MUX_DEFAULT_ROWS", "50")
    settings = load_settings(config)
    assert settings.term == "screen"
    assert settings.default_rows == 50  # the environment overrides the file


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('scrollback_bytes = "lots"', "setting 'scrollback_bytes'"),
        ("colour = 1", "unknown setting 'colour'"),
        ("default_rows = 0", "setting 'default_rows'"),
        ("this is not toml", "is not valid TOML"),
        # A hostile file: tomllib raised RecursionError and ValueError, a traceback (#30).
        ("a = " + "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("default_rows = " + "9" * 5000, "cannot be read"),
    ],
    ids=["type", "unknown", "range", "syntax", "deep", "digits"],
)
def test_bad_file_names_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings(config)
    assert message in str(info.value)
    assert str(config) in str(info.value)


def test_bad_environment_variable_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUX_KILL_GRACE_SECONDS", "soon")
    with pytest.raises(ConfigError, match="environment variable MUX_KILL_GRACE_SECONDS"):
        load_settings(tmp_path / "config.toml")
