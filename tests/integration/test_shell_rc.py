"""`muxctl shell-integration install|uninstall|print`: idempotent, backed up, reversible,
and working in a shell mux did not launch itself."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harness import Service, wait_for


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.mux-backup-*"))


def test_bash_install_is_idempotent_backed_up_and_reversible(service: Service) -> None:
    rc = service.home / ".bashrc"
    original = "# my bashrc\nalias ll='ls -l'\nexport EDITOR=vi"  # no final newline
    rc.write_text(original)
    rc.chmod(0o640)

    first = service.muxctl("shell-integration", "install", "bash", check=True)
    assert f"installed in {rc}" in first.stdout
    text = rc.read_text()
    assert text.startswith(original + "\n# >>> mux shell integration")
    assert text.count(">>> mux shell integration") == 1
    assert (rc.stat().st_mode & 0o777) == 0o640
    (backup,) = backups(rc)
    assert backup.read_text() == original
    script = service.home / ".local/share/mux/shell/mux.bash"
    assert "__mux_precmd" in script.read_text()

    again = service.muxctl("shell-integration", "install", "bash", check=True)
    assert "already installed" in again.stdout
    assert rc.read_text() == text
    assert len(backups(rc)) == 1

    removed = service.muxctl("shell-integration", "uninstall", "bash", check=True)
    assert f"removed from {rc}" in removed.stdout
    assert rc.read_text() == original + "\n"  # only the block is gone
    assert len(backups(rc)) == 2
    assert not script.exists()
    assert "not installed" in service.muxctl("shell-integration", "uninstall", "bash").stdout


def test_zsh_goes_to_zdotdir_and_fish_to_its_conf_d(service: Service, tmp_root: Path) -> None:
    zdotdir = tmp_root / "zdot"
    service.env["ZDOTDIR"] = str(zdotdir)
    service.muxctl("shell-integration", "install", "zsh", check=True)
    assert ">>> mux shell integration" in (zdotdir / ".zshrc").read_text()
    assert backups(zdotdir / ".zshrc") == []  # there was nothing to back up
    service.muxctl("shell-integration", "uninstall", "zsh", check=True)
    assert (zdotdir / ".zshrc").read_text() == ""

    conf = service.config_home / "fish" / "conf.d" / "mux.fish"
    result = service.muxctl("--json", "shell-integration", "install", "fish", check=True)
    assert json.loads(result.stdout)["changed"] is True
    assert "source" in conf.read_text()
    service.muxctl("shell-integration", "uninstall", "fish", check=True)
    assert not conf.exists()


def test_print_and_bad_arguments(service: Service) -> None:
    printed = service.muxctl("shell-integration", "print", "zsh", check=True).stdout
    assert "add-zsh-hook precmd __mux_precmd" in printed
    bad = service.muxctl("shell-integration", "install", "tcsh")
    assert bad.returncode == 2
    assert "invalid choice" in bad.stderr


def test_an_installed_integration_reports_the_cwd_of_a_shell_mux_did_not_launch(
    service: Service,
) -> None:
    service.muxctl("shell-integration", "install", "bash", check=True)
    # An explicit launch: no injection, only what ~/.bashrc sources.
    pane = service.spawn(["bash", "-i"])
    service.call("SendInput", "tay", [pane, b"cd /usr/share\r"])
    wait_for(
        lambda: (
            (service.panes()[pane]["cwd"], service.panes()[pane]["cwd_source"])
            == ("/usr/share", "shell")
        ),
        what="the rc-installed integration's report",
    )
    # Without a launch token it reports the directory only, no markers.
    assert service.panes()[pane]["shell_state"] == ""


def test_nushell_gets_the_script_in_its_autoload_directory(service: Service) -> None:
    autoload = service.config_home / "nushell" / "autoload" / "mux.nu"
    # nushell can report its directory itself: switched off, so only mux's hook does.
    (service.config_home / "nushell").mkdir(parents=True)
    (service.config_home / "nushell" / "config.nu").write_text(
        "$env.config.shell_integration.osc7 = false\n"
    )
    service.muxctl("shell-integration", "install", "nu", check=True)
    assert "pre_prompt" in autoload.read_text()
    assert "__MUX_LAUNCH_DIR__" not in autoload.read_text()
    pane = service.spawn(["nu"])  # explicit: no injection, only the user's autoload
    wait_for(
        lambda: "~>" in service.screen_text(pane) or ">" in service.screen_text(pane),
        what="nushell's prompt",
    )
    service.call("SendInput", "tay", [pane, b"cd /usr/share\r"])
    wait_for(
        lambda: (
            (service.panes()[pane]["cwd"], service.panes()[pane]["cwd_source"])
            == ("/usr/share", "shell")
        ),
        what="the autoloaded integration's report",
    )
    service.muxctl("shell-integration", "uninstall", "nu", check=True)
    assert not autoload.exists()
