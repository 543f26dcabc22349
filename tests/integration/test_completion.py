"""muxctl completion bash|zsh|fish (docs/muxctl.md#completion): the scripts shtab
generates from muxctl's parser load in each shell, complete the verbs, and complete
pane ids from the running service -- and pressing Tab with no service starts none."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import Service
from tests.outer_tmux import OuterTmux


def _with_muxctl_on_path(service: Service, root: Path) -> dict[str, str]:
    """The completion scripts run `muxctl`: a command of that name on PATH that runs
    this checkout's muxctl (the suite may run from a venv that is not on PATH)."""
    bin_dir = root / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "muxctl"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m muxctl "$@"\n')
    wrapper.chmod(0o755)
    return {**service.env, "PATH": f"{bin_dir}:{service.env.get('PATH', '/usr/bin:/bin')}"}


def _bash_completes(env: dict[str, str], *words: str) -> list[str]:
    """What bash offers after `muxctl WORDS...` (the last word being completed), as
    readline would ask the completion function."""
    line = " ".join(["muxctl", *words])
    program = (
        'eval "$(muxctl completion bash)"\n'
        f"COMP_WORDS=(muxctl {' '.join(shlex.quote(w) for w in words)})\n"
        f"COMP_CWORD={len(words)}\n"
        f"COMP_LINE={shlex.quote(line)}\n"
        "COMP_POINT=${#COMP_LINE}\n"
        "_shtab_muxctl muxctl\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    result = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return sorted(word.strip() for word in result.stdout.splitlines() if word.strip())


def _fish_completes(env: dict[str, str], line: str) -> list[str]:
    result = subprocess.run(
        ["fish", "--no-config", "-c", f"muxctl completion fish | source; complete -C{line!r}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return sorted(entry.split("\t")[0] for entry in result.stdout.splitlines() if entry)


@pytest.fixture
def service(tmp_root: Path) -> Iterator[Service]:
    service = Service(tmp_root, bus_address=None).start()
    yield service
    service.stop()


def test_bash_completes_verbs_and_the_running_panes(service: Service, tmp_root: Path) -> None:
    env = _with_muxctl_on_path(service, tmp_root)
    first = service.spawn(["sleep", "600"])
    second = service.spawn(["sleep", "600"])
    assert _bash_completes(env, "ki") == ["kill", "kill-if"]
    assert _bash_completes(env, "kill", "") == sorted([str(first), str(second)])
    assert _bash_completes(env, "capture", str(second)) == [str(second)]
    loaded = subprocess.run(
        ["bash", "--norc", "-c", 'eval "$(muxctl completion bash)"; complete -p muxctl'],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "-F _shtab_muxctl muxctl" in loaded.stdout


def test_fish_completes_verbs_and_the_running_panes(service: Service, tmp_root: Path) -> None:
    env = _with_muxctl_on_path(service, tmp_root)
    pane = service.spawn(["sleep", "600"])
    assert _fish_completes(env, "muxctl ki") == ["kill", "kill-if"]
    assert str(pane) in _fish_completes(env, "muxctl signal ")
    assert "--instance" in _fish_completes(env, "muxctl kill-if --i")


def test_zsh_completes_a_pane_id_at_the_prompt(service: Service, tmp_root: Path) -> None:
    """In a real zsh at a real terminal (tmux): Tab after `muxctl attach ` inserts the
    only pane's id."""
    env = _with_muxctl_on_path(service, tmp_root)
    pane = service.spawn(["sleep", "600"])
    service.env = env  # the outer terminal runs with it
    zdotdir = tmp_root / "zdot"
    zdotdir.mkdir()
    (zdotdir / ".zshrc").write_text(
        "autoload -U compinit && compinit -u\neval \"$(muxctl completion zsh)\"\nPS1='ready> '\n"
    )
    terminal = OuterTmux(tmp_root, service)
    try:
        target = terminal.open(f"ZDOTDIR={shlex.quote(str(zdotdir))} exec zsh -i")
        terminal.wait_shown(target, "ready>")
        terminal.send_keys(target, "-l", "muxctl att")
        terminal.send_keys(target, "Tab")
        terminal.wait_shown(target, "muxctl attach")  # capture-pane drops the trailing space
        terminal.send_keys(target, "Tab")
        terminal.wait_shown(target, f"muxctl attach {pane}")
    finally:
        terminal.kill()


def test_tab_without_a_service_offers_nothing_and_starts_nothing(tmp_root: Path) -> None:
    idle = Service(tmp_root, bus_address=None)  # never started
    env = _with_muxctl_on_path(idle, tmp_root)
    assert _bash_completes(env, "kill", "") == []
    assert _fish_completes(env, "muxctl kill ") == []
    assert idle.background_muxd() == []
    assert not (idle.runtime / "bus").exists()
