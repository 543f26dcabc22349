"""Configuration: `$XDG_CONFIG_HOME/mux/config.toml`, overridden by `MUX_<FIELD>` variables.

A malformed file is reported as `ConfigError` naming the file (or variable)
and the field, never as a traceback.
"""

import enum
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from mux.window_keys import binding_problem, key_of

ENV_PREFIX = "MUX_"


class ConfigError(Exception):
    pass


class HostSettings(BaseModel):
    """`[hosts.NAME]`: a satellite this mux drives over ssh (docs/federation.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    destination: str = Field(min_length=1, description="user@host, or an ssh alias")
    muxctl: str = Field(
        default="muxctl", min_length=1, description="the command that runs muxctl there"
    )


HOST_NAME_PATTERN = "^[A-Za-z0-9_]{1,64}$"


class RestoreMode(enum.StrEnum):
    """What a start does with the saved panes (docs/configuration.md#restore)."""

    ALWAYS = "always"  # started again at once
    ASK = "ask"  # held, showing what would run, until started or dismissed
    LAZY = "lazy"  # held until first attached or sent input
    NEVER = "never"  # not restored; the session stays in the history


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True)

    scrollback_bytes: int = Field(
        default=1 << 20, ge=0, description="raw output kept per pane, in bytes"
    )
    default_rows: int = Field(default=24, ge=1, le=1000)
    default_cols: int = Field(default=80, ge=1, le=2000)
    term: str = Field(default="xterm-256color", min_length=1, description="TERM in panes")
    default_shell: str | None = Field(
        default=None, description="shell for shell launches; default: the login shell"
    )
    kill_grace_seconds: float = Field(
        default=3.0, ge=0, description="after Kill's SIGHUP, SIGKILL follows this much later"
    )
    exited_pane_linger_seconds: float | None = Field(
        default=None, ge=0, description="close exited panes after this long; unset: keep them"
    )
    status: bool = Field(
        default=True,
        description="a status line at the bottom of every `muxctl attach`, the window "
        "view's and a lone pane's (muxctl.view_settings reads it)",
    )
    mouse: bool = Field(
        default=True,
        description="the mouse in `muxctl attach`'s window view: click to focus, drag a "
        "border, wheel to scroll back (muxctl.view_settings reads it)",
    )
    mode_keys: Literal["vi", "emacs"] | None = Field(
        default=None,
        description="copy mode's keys in `muxctl attach`; unset: vi when $VISUAL or $EDITOR "
        "names vi, else emacs, as tmux (muxctl.view_settings reads it)",
    )
    remain_on_exit: bool = Field(
        default=False,
        description="keep a pane whose program ended in a window it shares with others "
        "(false: it closes and its sibling takes the space, as in tmux)",
    )
    max_input_backlog_bytes: int = Field(
        default=32 << 20, ge=4096, description="input accepted but not yet read by a pane"
    )
    attach_client_buffer_bytes: int = Field(
        default=1 << 20,
        ge=65536,
        le=1 << 30,
        description="output queued for one attached client before it is resynchronised",
    )
    screen_idle_seconds: float = Field(
        default=10.0, gt=0, description="free a screen emulator nobody used for this long"
    )
    cwd_sample_seconds: float = Field(
        default=10.0, gt=0, description="how often panes' working directories are read (/proc)"
    )
    restore: RestoreMode = Field(
        default=RestoreMode.ALWAYS,
        description='what a start does with the saved panes: "always", "ask", "lazy" or '
        '"never" (true and false still mean "always" and "never")',
    )
    restore_ask_programs: list[str] = Field(
        default_factory=list,
        description="programs (base names) whose panes always wait to be started, "
        'whatever `restore` says (e.g. ["ssh", "make"])',
    )
    restore_scrollback_lines: int = Field(
        default=2000,
        ge=0,
        le=1_000_000,
        description="lines of each pane's history saved with its screen (0: no contents saved)",
    )
    contents_save_seconds: float = Field(
        default=30.0, gt=0, description="panes whose output changed have it saved this often"
    )
    contents_max_bytes: int = Field(
        default=64 << 20,
        ge=0,
        description="saved contents of all panes together, on disk; past it the least "
        "recently active panes lose theirs first",
    )
    history_keep_all_seconds: float = Field(
        default=3600.0, ge=0, description="every archived snapshot younger than this is kept"
    )
    history_hourly_seconds: float = Field(
        default=2 * 86400.0, ge=0, description="then one an hour, up to this age"
    )
    history_daily_seconds: float = Field(
        default=14 * 86400.0, ge=0, description="then one a day, up to this age; older go"
    )
    history_max_snapshots: int = Field(
        default=200, ge=1, le=100_000, description="most snapshots kept in the history"
    )
    history_max_bytes: int = Field(
        default=256 << 20, ge=0, description="most bytes the history takes, contents included"
    )
    resurrection: bool = Field(default=True, description="application-resurrection adapter")
    conditional_kill: bool = Field(
        default=True,
        description="KillIf and the CONDITIONAL_KILL feature bit (off: KillIf answers "
        "NotSupported, as an older service would)",
    )
    replay_commands: list[str] = Field(
        default_factory=list,
        description="programs typed again at restore when they ran at a shell's prompt,"
        ' besides the ones that checkpointed (e.g. ["htop", "less"])',
    )
    resurrection_hello_seconds: float = Field(
        default=5.0, gt=0, le=300, description="how long a peer may take to say hello"
    )
    attach_hello_seconds: float = Field(
        default=5.0, gt=0, le=300, description="how long an attach client may take to say HELLO"
    )
    attach_max_pending: int = Field(
        default=64,
        ge=1,
        le=4096,
        description="attach connections that have not said HELLO yet; more are closed at once",
    )
    emulator_cells_budget: int = Field(
        default=8_000_000,
        ge=1,
        description="rows x columns summed over every pane; a Spawn or Resize past it is "
        "refused (Unavailable)",
    )
    search_query_max_bytes: int = Field(
        default=1024, ge=16, le=1 << 20, description="longest desktop search query, in bytes"
    )
    search_query_max_terms: int = Field(
        default=32, ge=1, le=4096, description="most words in one desktop search query"
    )
    log_level: str = Field(default="INFO", pattern="^(DEBUG|INFO|WARNING|ERROR)$")
    notifications: bool = Field(
        default=True, description="desktop notifications from panes no terminal shows"
    )
    notify_command_seconds: float = Field(
        default=10.0, ge=0, description="a finished command this long or longer is notified"
    )
    notify_min_interval_seconds: float = Field(
        default=5.0, ge=0, description="at most one notification per pane this often"
    )
    terminal_command: list[str] | None = Field(
        default=None,
        min_length=1,
        description="the terminal that opens a pane, an argv prefix before `muxctl attach "
        "ID` (unset: xdg-terminal-exec, x-terminal-emulator -e, gnome-terminal --, "
        "konsole -e, xterm -e, the first found)",
    )
    ssh_command: list[str] = Field(
        default_factory=lambda: ["ssh"],
        min_length=1,
        description='the ssh client a hub runs, an argv prefix (e.g. ["ssh", "-F", "cfg"])',
    )
    hosts: dict[str, HostSettings] = Field(
        default_factory=dict, description="[hosts.NAME] tables: the satellites of this hub"
    )
    prefix: str = Field(
        default="^b",
        description="the key before a window command in `muxctl attach`: ^X (a control "
        "key), one character, or none; --prefix-key and $MUXCTL_PREFIX_KEY win over it "
        "(muxctl.view_settings reads it)",
    )
    keys: dict[str, str] = Field(
        default_factory=dict,
        description="[keys]: a key after the window view's prefix and its command "
        "(mux.window_keys; muxctl.view_settings reads it)",
    )

    @field_validator("restore", mode="before")
    @classmethod
    def _restore_booleans(cls, value: object) -> object:
        """The boolean of earlier versions is still read: true is "always", false "never"."""
        if isinstance(value, bool):
            return RestoreMode.ALWAYS if value else RestoreMode.NEVER
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return RestoreMode.ALWAYS if value.lower() in ("true", "1") else RestoreMode.NEVER
        return value

    @field_validator("prefix")
    @classmethod
    def _a_key(cls, prefix: str) -> str:
        key_of(prefix)  # (ValueError: says what is wrong)
        return prefix

    @field_validator("keys")
    @classmethod
    def _key_bindings(cls, keys: dict[str, str]) -> dict[str, str]:
        for key, command in keys.items():
            if (problem := binding_problem(key, command)) is not None:
                raise ValueError(problem)
        return keys

    @field_validator("hosts")
    @classmethod
    def _host_names(cls, hosts: dict[str, HostSettings]) -> dict[str, HostSettings]:
        for name in hosts:
            if not re.fullmatch(HOST_NAME_PATTERN, name):
                raise ValueError(f"host name {name!r}: use 1 to 64 letters, digits or '_'")
        return hosts


def _sources_for(config_file: Path) -> type[Settings]:
    class FileSettings(Settings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            toml = TomlConfigSettingsSource(settings_cls, toml_file=config_file)
            return (init_settings, env_settings, toml)

    return FileSettings


def _where(field: str, config_file: Path) -> str:
    variable = ENV_PREFIX + field.upper()
    if variable in os.environ:
        return f"environment variable {variable}"
    return str(config_file)


def load_settings(config_file: Path, **overrides: Any) -> Settings:
    """Read the configuration; raises ConfigError with a message a person can act on."""
    if config_file.exists():
        try:
            with config_file.open("rb") as f:
                tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{config_file} is not valid TOML: {e}") from None
        except RecursionError:
            raise ConfigError(f"{config_file} is nested too deeply to be read") from None
        except ValueError as e:  # a number past Python's digit limit
            raise ConfigError(f"{config_file} cannot be read: {e}") from None
        except OSError as e:
            raise ConfigError(f"cannot read {config_file}: {e.strerror}") from None
    try:
        settings = _sources_for(config_file)(**overrides)
    except ValidationError as e:
        problems = []
        for err in e.errors():
            field = ".".join(str(part) for part in err["loc"]) or "(file)"
            if err["type"] == "extra_forbidden":
                problems.append(f"{config_file}: unknown setting '{field}'")
            else:
                problems.append(f"{_where(field, config_file)}: setting '{field}': {err['msg']}")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems)) from None
    return settings
