"""`[keys]` in config.toml: the window view's keys after the prefix, rebound
(muxctl.view_settings.key_bindings, checked by mux.config like every setting)."""

from pathlib import Path

import pytest

from mux.config import ConfigError, load_settings
from muxctl.prefix_keys import Command, PrefixKeys, Typed
from muxctl.view_settings import key_bindings

CONFIG = """
[keys]
"|" = "split-horizontal"
"-" = "split-vertical"
"%" = "none"
"""


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "mux").mkdir()
    return tmp_path / "mux"


def test_rebound_unbound_and_the_defaults_kept(config_dir: Path) -> None:
    (config_dir / "config.toml").write_text(CONFIG)
    bindings = key_bindings()
    assert bindings[b"|"] == "split-horizontal" and bindings[b"-"] == "split-vertical"
    assert b"%" not in bindings and bindings[b"x"] == "close"
    keys = PrefixKeys(b"\x02", None, bindings)
    assert keys.feed(b"\x02|\x02%a") == [Command("split-horizontal"), Typed(b"a")]


def test_space_is_bound_as_tmuxs_and_can_be_taken_away(config_dir: Path) -> None:
    assert key_bindings()[b" "] == "next-layout"
    (config_dir / "config.toml").write_text('[keys]\n" " = "none"\n')
    load_settings(config_dir / "config.toml")  # (no problem to say)
    assert b" " not in key_bindings()


def test_no_file_or_a_bad_one_gives_the_defaults(config_dir: Path) -> None:
    assert key_bindings()[b"%"] == "split-horizontal"
    (config_dir / "config.toml").write_text("[keys\nnot toml")
    assert key_bindings()[b"%"] == "split-horizontal"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('"|" = "explode"', "'explode' is no window command"),
        ('"ab" = "zoom"', "one printable ASCII character"),
        ('"é" = "zoom"', "one printable ASCII character"),
    ],
)
def test_mux_config_refuses_a_bad_binding_naming_it(
    config_dir: Path, line: str, problem: str
) -> None:
    """(muxctl leaves such a binding out; muxd and `muxctl doctor` say what is wrong.)"""
    path = config_dir / "config.toml"
    path.write_text(f"[keys]\n{line}\n")
    with pytest.raises(ConfigError, match=problem):
        load_settings(path)
    assert key_bindings()[b"z"] == "zoom"


def test_the_prefix_setting_and_what_wins_over_it(
    config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`prefix` in config.toml (MUX_PREFIX over it); muxctl's --prefix-key and
    $MUXCTL_PREFIX_KEY over both (muxctl.commands.attach); a bad one: ^b, and mux.config
    names it."""
    from muxctl.view_settings import prefix_key

    monkeypatch.delenv("MUX_PREFIX", raising=False)
    assert prefix_key() == "^b"
    (config_dir / "config.toml").write_text('prefix = "C-a"\n')
    assert prefix_key() == "C-a"
    monkeypatch.setenv("MUX_PREFIX", "`")
    assert prefix_key() == "`"
    monkeypatch.delenv("MUX_PREFIX")
    (config_dir / "config.toml").write_text('prefix = "C-é"\n')
    assert prefix_key() == "^b"
    with pytest.raises(ConfigError, match=r"setting 'prefix'.*'C-é' is no key"):
        load_settings(config_dir / "config.toml")
