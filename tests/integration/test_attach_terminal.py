"""`muxctl attach` and `muxctl new` in a real terminal: a tmux window plays the user's.

Keys go in with tmux send-keys, the screen comes back with capture-pane; the
pane is a real bash on a real PTY in a real muxd.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from tests.harness import Service, pid_alive, wait_for
from tests.outer_tmux import OuterTmux

BASH = ["bash", "--norc", "--noprofile", "-i"]
RESTORED = "icanon echo"  # stty's words for a terminal back in its normal mode


def shell_pane(service: Service, **options: object) -> int:
    pane = service.spawn(BASH, env={"PS1": "mux$ "}, **options)  # type: ignore[arg-type]
    service.wait_screen(pane, "mux$")
    return pane


def test_attach_repaints_types_resizes_and_detaches(service: Service, outer: OuterTmux) -> None:
    pane = shell_pane(service, rows=24, cols=80)
    service.call("SendInput", "tay", [pane, b"echo before-$((6*7))\r"])
    service.wait_screen(pane, "before-42")

    window = outer.open(outer.muxctl_line("attach", str(pane)), rows=30, cols=100)
    outer.wait_shown(window, "before-42")  # the repaint of what was there
    # The pane takes the terminal's size, but the last row: the status line's.
    service.wait_size(pane, 29, 100, what="the pane at the terminal's size")
    outer.wait_shown(window, f"│ {pane}: ")

    outer.type_line(window, "echo typed-$((6*7))")
    outer.wait_shown(window, "typed-42")
    service.wait_screen(pane, "typed-42")

    outer.resize(window, 20, 70)
    service.wait_size(pane, 19, 70, what="the pane following the terminal's resize")
    outer.type_line(window, "echo cols=$COLUMNS")
    outer.wait_shown(window, "cols=70")

    outer.send_keys(window, "C-\\")
    shown = outer.wait_shown(window, "STATUS=0")
    assert f"[detached from pane {pane}; reattach with: muxctl attach {pane}]" in shown
    outer.wait_shown(window, RESTORED)
    assert service.panes()[pane]["state"] == "running"

    # Attaching again shows the same screen.
    again = outer.open(outer.muxctl_line("attach", str(pane)))
    outer.wait_shown(again, "typed-42")
    outer.send_keys(again, "C-\\")
    outer.wait_shown(again, "STATUS=0")


def test_pane_exit_ends_the_attach_with_its_status(service: Service, outer: OuterTmux) -> None:
    pane = service.spawn(["sh", "-c", "echo waiting; read x; echo bye; exit 7"])
    service.wait_screen(pane, "waiting")
    window = outer.open(outer.muxctl_line("attach", str(pane)))
    outer.wait_shown(window, "waiting")
    outer.send_keys(window, "Enter")
    shown = outer.wait_shown(window, "STATUS=0")
    assert "bye" in shown
    assert f"[pane {pane} exited with status 7]" in shown
    outer.wait_shown(window, RESTORED)


def test_two_terminals_on_one_pane_see_each_other(service: Service, outer: OuterTmux) -> None:
    pane = shell_pane(service)
    first = outer.open(outer.muxctl_line("attach", str(pane)))
    second = outer.open(outer.muxctl_line("attach", str(pane)))
    outer.wait_shown(first, "mux$")
    outer.wait_shown(second, "mux$")
    outer.type_line(first, "echo from-first-$((1+1))")
    outer.wait_shown(second, "from-first-2")
    outer.type_line(second, "echo from-second-$((2+2))")
    outer.wait_shown(first, "from-second-4")
    outer.send_keys(first, "C-\\")
    outer.wait_shown(first, "STATUS=0")
    # The other client is unaffected by the first one leaving.
    outer.type_line(second, "echo still-$((3+3))")
    outer.wait_shown(second, "still-6")


def test_no_id_attaches_the_pane_used_last(service: Service, outer: OuterTmux) -> None:
    older = shell_pane(service)
    newer = service.spawn(["sh", "-c", "echo i-am-newer; exec cat"])
    service.wait_screen(newer, "i-am-newer")
    window = outer.open(outer.muxctl_line("attach"))
    outer.wait_shown(window, "i-am-newer")
    outer.send_keys(window, "C-\\")
    outer.wait_shown(window, f"reattach with: muxctl attach {newer}")
    # Attaching made `older` the last used.
    other = outer.open(outer.muxctl_line("attach", str(older)))
    outer.wait_shown(other, "mux$")
    outer.send_keys(other, "C-\\")
    outer.wait_shown(other, "STATUS=0")
    third = outer.open(outer.muxctl_line("attach"))
    outer.wait_shown(third, "mux$")
    outer.send_keys(third, "C-\\")
    outer.wait_shown(third, f"reattach with: muxctl attach {older}")


def test_new_spawns_at_the_terminal_size_and_attaches(service: Service, outer: OuterTmux) -> None:
    window = outer.open(
        outer.muxctl_line(
            "new", "--title", "fresh", "--", "sh", "-c", "echo size=$(stty size); exec cat"
        ),
        rows=27,
        cols=91,
    )
    outer.wait_shown(window, "size=26 91")  # (the last row: the status line's)
    (fresh,) = [p for p in service.panes().values() if p["title"] == "fresh"]
    outer.type_line(window, "echoed-by-cat")
    service.wait_screen(fresh["id"], "echoed-by-cat")
    outer.send_keys(window, "C-\\")
    outer.wait_shown(window, "STATUS=0")


def test_a_configured_detach_key_and_input_passing_ctrl_backslash(
    service: Service, outer: OuterTmux
) -> None:
    pane = service.spawn(["sh", "-c", "stty -isig; echo ready; exec cat -v"])
    service.wait_screen(pane, "ready")
    window = outer.open(outer.muxctl_line("attach", "--detach-key", "^]", str(pane)))
    outer.wait_shown(window, "ready")
    # Ctrl-\ goes to the pane now (cat -v shows it as ^\).
    outer.send_keys(window, "C-\\", "x", "Enter")
    service.wait_screen(pane, "^\\x")
    outer.send_keys(window, "C-]")
    outer.wait_shown(window, "STATUS=0")


def test_terminal_restored_when_the_service_stops(service: Service, outer: OuterTmux) -> None:
    pane = shell_pane(service)
    window = outer.open(outer.muxctl_line("attach", str(pane)))
    outer.wait_shown(window, "mux$")
    outer.type_line(window, "printf '\\033[?1049h\\033[?2004h\\033[?25l'; echo in-alt-screen")
    outer.wait_shown(window, "in-alt-screen")
    service.stop()
    shown = outer.wait_shown(window, "STATUS=1")
    assert "mux is stopping" in shown
    outer.wait_shown(window, RESTORED)
    # The modes the pane left on are off again: the normal screen, the cursor shown.
    assert "in-alt-screen" not in [line.strip() for line in outer.capture(window).splitlines()]
    modes = outer.tmux("display-message", "-p", "-t", window, "#{alternate_on} #{cursor_flag}")
    assert modes.stdout.split() == ["0", "1"]


def test_sigterm_and_sighup_restore_the_terminal(service: Service, outer: OuterTmux) -> None:
    pane = shell_pane(service)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        window = outer.open(outer.muxctl_line("attach", str(pane)))
        outer.wait_shown(window, "mux$")
        shell = outer.pane_pid(window)
        muxctl = wait_for(lambda: _child_of(shell), what="the muxctl process")  # noqa: B023
        assert muxctl is not None
        os.kill(muxctl, signum)
        shown = outer.wait_shown(window, f"STATUS={128 + signum}")
        assert f"[{signum.name}: detached from pane {pane}]" in shown
        outer.wait_shown(window, RESTORED)
        assert not pid_alive(muxctl)
    assert service.panes()[pane]["state"] == "running"


def test_attach_survives_an_upgrade(service: Service, outer: OuterTmux) -> None:
    pane = shell_pane(service)
    window = outer.open(outer.muxctl_line("attach", str(pane)))
    outer.wait_shown(window, "mux$")
    service.muxctl("upgrade", check=True)
    outer.type_line(window, "echo after-upgrade-$((5*5))")
    outer.wait_shown(window, "after-upgrade-25")
    # The status line is the new muxd's (the old one's said it was reattaching).
    wait_for(
        lambda: outer.capture(window).split("\n")[29].startswith(" 0:bash*  │"),
        what="the status line after the upgrade",
    )
    outer.send_keys(window, "C-\\")
    outer.wait_shown(window, "STATUS=0")


def test_attach_refusals_exit_with_a_message(service: Service, outer: OuterTmux) -> None:
    window = outer.open(outer.muxctl_line("attach", "4242"))
    shown = outer.wait_shown(window, "STATUS=")
    assert "muxctl: there is no pane 4242" in shown
    assert "STATUS=1" in shown
    outer.wait_shown(window, RESTORED)

    result = service.muxctl("attach", "1")  # not a terminal
    assert result.returncode == 2
    assert "needs a terminal" in result.stderr
    result = service.muxctl("attach", "--detach-key", "^^^", "1")
    assert result.returncode == 2
    assert "detach key" in result.stderr


def _child_of(pid: int) -> int | None:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(children[0]) if children else None


def test_a_stopped_terminal_never_holds_up_the_pane_or_the_other(
    service: Service, outer: OuterTmux
) -> None:
    pane = service.spawn(
        ["sh", "-c", "echo ready; read go; seq 1 400000; echo FLOOD-DONE; exec cat"],
        rows=20,
        cols=60,
    )
    service.wait_screen(pane, "ready")
    stopped = outer.open(outer.muxctl_line("attach", str(pane)), rows=20, cols=60)
    watching = outer.open(outer.muxctl_line("attach", str(pane)), rows=20, cols=60)
    outer.wait_shown(stopped, "ready")
    outer.wait_shown(watching, "ready")
    muxctl = wait_for(lambda: _child_of(outer.pane_pid(stopped)), what="the muxctl process")
    assert muxctl is not None
    os.kill(muxctl, signal.SIGSTOP)
    try:
        outer.send_keys(watching, "Enter")
        # The pane and the other terminal go on while one terminal reads nothing.
        outer.wait_shown(watching, "FLOOD-DONE", timeout=60)
        service.wait_screen(pane, "FLOOD-DONE")
    finally:
        os.kill(muxctl, signal.SIGCONT)
    # Once it reads again, it catches up with a repaint: the same final screen.
    outer.wait_shown(stopped, "FLOOD-DONE", timeout=60)
    assert "400000" in outer.capture(stopped)
    outer.send_keys(stopped, "C-\\")
    outer.wait_shown(stopped, "STATUS=0")


def test_a_pane_cannot_be_attached_from_inside_itself(service: Service) -> None:
    other = service.spawn(["sh", "-c", "echo i-am-the-other; exec cat"])
    pane = shell_pane(service)
    muxctl = f"{sys.executable} -m muxctl"
    # "r""c=": the echoed command line must not itself show what the output is awaited by.
    typed = f'{muxctl} attach $MUX_PANE; echo "r""c=$?"\r'
    service.call("SendInput", "tay", [pane, typed.encode()])
    shown = service.wait_screen(pane, "rc=")
    assert f"this client runs inside pane {pane}" in shown
    assert "rc=3" in shown
    # With no id, the last used pane other than its own.
    service.call("SendInput", "tay", [pane, f"{muxctl} attach\r".encode()])
    service.wait_screen(pane, "i-am-the-other")
    service.call("SendInput", "tay", [pane, b"\x1c"])
    service.wait_screen(pane, f"reattach with: muxctl attach {other}")


def test_a_paste_into_a_pane_that_reads_nothing_never_hangs_muxctl(
    service: Service, outer: OuterTmux, tmp_root: Path
) -> None:
    pane = service.spawn(["sh", "-c", "stty raw -echo; echo deaf; exec sleep 600"])
    service.wait_screen(pane, "deaf")
    record = tmp_root / "how-it-ended"
    window = outer.open(outer.muxctl_line("attach", str(pane), record=record))
    outer.wait_shown(window, "deaf")
    paste = tmp_root / "paste.txt"
    paste.write_bytes(b"z" * 4_000_000)
    outer.tmux("load-buffer", str(paste))
    outer.tmux("paste-buffer", "-t", window)
    shell = outer.pane_pid(window)
    muxctl = wait_for(lambda: _child_of(shell), what="the muxctl process")
    assert muxctl is not None
    os.kill(muxctl, signal.SIGTERM)
    # The rest of the paste reaches the shell afterwards and floods the screen: the
    # outcome is read from the record instead.
    ended = wait_for(
        lambda: record.exists() and RESTORED in record.read_text() and record.read_text(),
        what="muxctl's outcome",
    )
    assert "STATUS=143" in ended
