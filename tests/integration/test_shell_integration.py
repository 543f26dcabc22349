"""Shell launches with mux's own auto-injected integration, in real bash and zsh panes:
the working directory after `cd` comes from the shell ("shell"), prompt and command
markers carry the launch's token (forgeries are ignored), the user's startup files are
still read and never changed, and the per-launch directory lives as long as the pane."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from tests.harness import Service, wait_for

SHELLS = ["bash", "zsh", "fish", "nu"]


@pytest.fixture(params=SHELLS)
def shell(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    if shutil.which(name) is None:
        pytest.fail(f"{name} is not installed; the test command installs it (apt-get)")
    return name


def start_shell(service: Service, shell: str, **options: object) -> int:
    pane = service.spawn(
        shell=shell, env={"PS1": "mux-prompt$ ", "PROMPT": "mux-prompt$ "}, **options
    )  # type: ignore[arg-type]
    wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="the first prompt")
    return pane


def run(service: Service, pane: int, line: str) -> None:
    service.call("SendInput", "tay", [pane, line.encode() + b"\r"])


def shell_dirs(service: Service) -> list[Path]:
    parent = service.runtime / "shell"
    return sorted(parent.iterdir()) if parent.exists() else []


def test_cwd_after_cd_comes_from_the_shell(service: Service, shell: str, tmp_root: Path) -> None:
    target = tmp_root / "with space & 100%"
    target.mkdir()
    if shell == "nu":  # it can report its directory itself: off, so only mux's hook does
        (service.config_home / "nushell").mkdir(parents=True)
        (service.config_home / "nushell" / "config.nu").write_text(
            "$env.config.shell_integration.osc7 = false\n"
        )
    pane = start_shell(service, shell)
    assert service.cwd(pane) == (str(service.home), "shell")
    run(service, pane, f"cd '{target}'")
    wait_for(lambda: service.cwd(pane) == (str(target), "shell"), what="the cd reported")
    props = service.cwd_properties(pane)
    assert f'"{target}"' in props and '"shell"' in props


def test_markers_report_commands_and_forgeries_are_ignored(service: Service, shell: str) -> None:
    pane = start_shell(service, shell)
    run(service, pane, "sh -c 'exit 3'")
    wait_for(lambda: service.panes()[pane]["command_status"] == 3, what="the exit status")
    assert service.panes()[pane]["command"] == "sh -c 'exit 3'"
    assert service.panes()[pane]["shell_state"] == "prompt"
    run(service, pane, "^sleep 30" if shell == "nu" else "sleep 30")
    wait_for(lambda: service.panes()[pane]["shell_state"] == "command", what="a running command")
    assert service.panes()[pane]["command"].endswith("sleep 30")
    assert service.panes()[pane]["command_status"] == -1
    service.call("Signal", "ts", [pane, "INT"])
    wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="the prompt again")
    # Markers printed by a program, without the token or with another one, change nothing.
    forged = (
        r"/usr/bin/printf '\033]133;C;cmdline_url=rm%%20-rf\007\033]133;C;mux_token=0123;"
        r"cmdline_url=x\007\033]133;D;7;mux_token=bad\007'; echo printed"
    )
    run(service, pane, forged)
    service.wait_screen(pane, "printed")
    wait_for(
        lambda: service.panes()[pane]["command_status"] == 0,
        what=f"the real exit status; the screen: {service.screen_text(pane)!r}",
    )
    info = service.panes()[pane]
    assert info["command"].startswith("/usr/bin/printf")
    assert info["shell_state"] == "prompt"


USER_FILES = {
    "bash": {
        "home/.bash_profile": "export FROM_PROFILE=profile-ok\n. ~/.bashrc\n",
        "home/.bashrc": "FROM_RC=rc-ok\nPROMPT_COMMAND='USER_HOOK=hook-ok'\n",
    },
    "zsh": {
        "home/.zshenv": "export FROM_PROFILE=profile-ok\n",
        "home/.zshrc": "FROM_RC=rc-ok\nprecmd() { USER_HOOK=hook-ok }\n",
    },
    "fish": {
        "config/fish/config.fish": "set -gx FROM_PROFILE profile-ok\nset -g FROM_RC rc-ok\n"
        "function user_hook --on-event fish_prompt\n  set -g USER_HOOK hook-ok\nend\n",
    },
    "nu": {
        "config/nushell/env.nu": '$env.FROM_PROFILE = "profile-ok"\n',
        "config/nushell/config.nu": '$env.FROM_RC = "rc-ok"\n'
        '$env.config.hooks.pre_prompt = [{|| $env.USER_HOOK = "hook-ok" }]\n',
    },
}
SHOW_USER_SETTINGS = {
    "bash": 'echo "[$FROM_PROFILE $FROM_RC $USER_HOOK ${ZDOTDIR-unset} ${XDG_DATA_DIRS-unset}]"',
    "zsh": 'echo "[$FROM_PROFILE $FROM_RC $USER_HOOK ${ZDOTDIR-unset} ${XDG_DATA_DIRS-unset}]"',
    "fish": 'echo "[$FROM_PROFILE $FROM_RC $USER_HOOK" (set -q ZDOTDIR; or echo unset)'
    ' (set -q XDG_DATA_DIRS; or echo unset)"]"',
    "nu": 'echo $"[($env.FROM_PROFILE) ($env.FROM_RC) ($env.USER_HOOK)'
    " (if 'ZDOTDIR' in $env {'set'} else {'unset'})"
    " (if 'XDG_DATA_DIRS' in $env {'set'} else {'unset'})]\"",
}


def test_the_users_startup_files_are_read_and_left_alone(
    service: Service, shell: str, tmp_root: Path
) -> None:
    files = {tmp_root / name: text for name, text in USER_FILES[shell].items()}
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    before = {path: path.stat() for path in files}
    pane = start_shell(service, shell)
    run(service, pane, SHOW_USER_SETTINGS[shell])
    # (the last two: mux's ZDOTDIR and XDG_DATA_DIRS were put back as they were: unset)
    service.wait_screen(pane, "[profile-ok rc-ok hook-ok unset unset]")
    # The user's own prompt hook runs, and so does mux's.
    run(service, pane, "cd /usr")
    wait_for(lambda: service.cwd(pane) == ("/usr", "shell"), what="mux's hook")
    for path in files:
        after = path.stat()
        assert (after.st_mtime_ns, after.st_size) == (
            before[path].st_mtime_ns,
            before[path].st_size,
        )


def test_zsh_with_the_users_own_zdotdir(service: Service, tmp_root: Path) -> None:
    if shutil.which("zsh") is None:
        pytest.fail("zsh is not installed; the test command installs it (apt-get)")
    zdotdir = tmp_root / "zdot"
    zdotdir.mkdir()
    (zdotdir / ".zshrc").write_text("FROM_ZDOTDIR=zdotdir-ok\n")
    pane = service.spawn(shell="zsh", env={"ZDOTDIR": str(zdotdir), "PROMPT": "z$ "})
    wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="the first prompt")
    run(service, pane, 'echo "[$FROM_ZDOTDIR $ZDOTDIR]"')
    service.wait_screen(pane, f"[zdotdir-ok {zdotdir}]")


def test_the_launch_directory_is_private_and_ends_with_the_pane(
    service: Service, shell: str
) -> None:
    exiting = start_shell(service, shell)
    killed = start_shell(service, shell)
    dirs = shell_dirs(service)
    assert len(dirs) == 2
    for directory in dirs:
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        assert stat.S_IMODE((directory / "token").stat().st_mode) == 0o600
    assert stat.S_IMODE((service.runtime / "shell").stat().st_mode) == 0o700
    # The token is not in the shell's environment (a child could not read it there).
    count = (
        "echo $\"tokens=(^env | lines | where {|l| $l =~ '(?i)mux_token|mux_launch'} | length)\""
        if shell == "nu"
        else 'echo "tokens=$(env | grep -c -i -e mux_token -e mux_launch)"'
    )
    run(service, exiting, count)
    service.wait_screen(exiting, "tokens=0")
    run(service, exiting, "exit")
    service.wait_exited(exiting)
    wait_for(lambda: len(shell_dirs(service)) == 1, what="the exited shell's directory gone")
    service.call("Kill", "t", [killed])
    wait_for(lambda: shell_dirs(service) == [], what="the killed shell's directory gone")


def test_other_shells_start_normally_without_integration(service: Service) -> None:
    pane = service.spawn(shell="/bin/sh")
    run(service, pane, "echo works-$((20+22))")
    service.wait_screen(pane, "works-42")
    assert shell_dirs(service) == []
    assert service.panes()[pane]["shell_state"] == ""


def test_nested_shell_precedence(sampling_service: Service, shell: str) -> None:
    service = sampling_service
    pane = start_shell(service, shell)
    run(service, pane, "cd /tmp")
    wait_for(lambda: service.cwd(pane) == ("/tmp", "shell"), what="the shell's report")
    # A shell without integration inside it: its cd is seen by a child capture.
    # Its prompt is built at run time, so the command line echoed does not show it.
    # Without job control (+m): an interactive sh with it takes the terminal for a
    # process group of its own, and nu, handing the terminal to its child from its
    # side too, can do so after that and take it back: the inner sh, now in the
    # background, is stopped at its next read (seen under load, 2 runs in 20).
    run(service, pane, """sh -c 'p=in-sh; PS1="$p> " sh +m -i'""")
    wait_for(lambda: service.panes()[pane]["shell_state"] == "command", what="sh running")
    # Only once sh prompts: the outer shell, until it hands the terminal over (fish
    # sets its modes after its command marker), may take or drop a line typed early.
    service.wait_screen(pane, "in-sh>")
    run(service, pane, "cd /usr; echo nested-$((6*7))")
    service.wait_screen(pane, "nested-42")
    wait_for(lambda: service.cwd(pane) == ("/usr", "process"), what="the child capture")
    # Back in the integrated shell, its next prompt reports where it is.
    run(service, pane, "exit")
    wait_for(lambda: service.cwd(pane) == ("/tmp", "shell"), what="the shell's report again")


def test_the_token_and_directory_survive_an_upgrade(service: Service) -> None:
    pane = start_shell(service, "bash")
    (directory,) = shell_dirs(service)
    service.muxctl("upgrade", check=True)
    run(service, pane, "sh -c 'exit 4'")
    wait_for(lambda: service.panes()[pane]["command_status"] == 4, what="markers still believed")
    assert shell_dirs(service) == [directory]
    run(service, pane, "exit")
    service.wait_exited(pane)
    wait_for(lambda: shell_dirs(service) == [], what="the directory removed by the new muxd")
