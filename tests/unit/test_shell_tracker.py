"""What a program tells its terminal about itself, fed as OSC bytes: the title, the
working directory and its precedence, the shell's markers (only with the launch's
token), and the steps of a restored shell's command replay."""

from mux.panes.cwd import CwdObservation
from mux.panes.replay import CommandReplay
from mux.panes.shell_tracker import CWD_CHANGED, TITLE_CHANGED, ShellReaction, ShellTracker

TOKEN = "0123456789abcdef"


def tracker(*, title_explicit: bool = False, replay: CommandReplay | None = None) -> ShellTracker:
    return ShellTracker(
        title="bash",
        title_explicit=title_explicit,
        cwd=CwdObservation("/home/u", "launch", captured_at=100.0),
        local_hosts=frozenset({"here"}),
        shell_token=TOKEN,
        replay=replay,
    )


def feed(shell: ShellTracker, data: bytes) -> list[ShellReaction]:
    """As the pane does: every event of `data`, in order; the reactions it gets."""
    reactions = [shell.apply(event) for event in shell.scan(data)]
    return [reaction for reaction in reactions if reaction is not None]


def marker(kind: str, token: str = TOKEN, extra: str = "") -> bytes:
    return f"\x1b]133;{kind};mux_token={token}{extra}\x07".encode()


def test_a_title_from_the_program_changes_the_title_once() -> None:
    shell = tracker()
    assert feed(shell, b"\x1b]2;vim\x07") == [ShellReaction(changed=TITLE_CHANGED)]
    assert shell.title == "vim"
    assert feed(shell, b"\x1b]0;vim\x07") == []  # the same title: nothing to tell


def test_an_explicit_title_stays() -> None:
    shell = tracker(title_explicit=True)
    assert feed(shell, b"\x1b]2;vim\x07") == []
    assert shell.title == "bash"
    assert shell.program_title("restored") is None


def test_a_title_split_across_reads_still_counts() -> None:
    shell = tracker()
    assert feed(shell, b"\x1b]2;to") == []
    assert feed(shell, b"p\x07") == [ShellReaction(changed=TITLE_CHANGED)]
    assert shell.title == "top"


def test_the_shells_report_of_its_directory_wins_over_the_launch() -> None:
    shell = tracker()
    assert feed(shell, b"\x1b]7;file://here/tmp/work\x07") == [ShellReaction(changed=CWD_CHANGED)]
    assert (shell.cwd, shell.cwd_source) == ("/tmp/work", "shell")


def test_a_report_from_another_host_is_not_this_machines_directory() -> None:
    shell = tracker()
    assert feed(shell, b"\x1b]7;file://elsewhere/tmp/work\x07") == []
    assert (shell.cwd, shell.cwd_source) == ("/home/u", "launch")


def test_a_root_capture_never_overrides_the_shells_report() -> None:
    shell = tracker()
    feed(shell, b"\x1b]7;file://here/tmp/work\x07")
    later = shell.cwd_captured_at + 5
    assert shell.observe_cwd(CwdObservation("/elsewhere", "process", later)) is None
    assert shell.cwd == "/tmp/work"
    # A newer capture of a child (a nested shell without integration) does.
    child = CwdObservation("/nested", "process", later, child=True)
    assert shell.observe_cwd(child) == ShellReaction(changed=CWD_CHANGED)
    assert (shell.cwd, shell.cwd_source) == ("/nested", "process")


def test_markers_count_only_with_the_launchs_token() -> None:
    shell = tracker()
    feed(shell, marker("C", token="forged", extra=";cmdline_url=rm%20-rf%20/"))
    assert (shell.shell_state, shell.last_command) == ("", None)
    feed(shell, marker("A"))
    assert shell.shell_state == "prompt"
    feed(shell, marker("C", extra=";cmdline_url=make%20test"))
    assert (shell.shell_state, shell.last_command, shell.last_command_status) == (
        "command",
        "make test",
        None,
    )
    feed(shell, marker("D", extra=";2"))
    assert shell.last_command_status == 2


def test_a_replay_types_at_the_first_prompt_and_is_withdrawn_when_the_user_moves_on() -> None:
    shell = tracker(replay=CommandReplay("htop", 3))
    assert feed(shell, marker("A")) == [ShellReaction(keys=b"htop\r")]
    assert feed(shell, marker("C", extra=";cmdline_url=htop")) == []  # the replay's own command
    assert shell.replay is not None and not shell.replay.pending
    assert feed(shell, marker("A")) == [ShellReaction(withdraw_offer=True)]  # a later prompt
    assert shell.replay is None
    assert feed(shell, marker("A")) == []


def test_a_snapshot_replays_a_pending_replay_or_an_allowed_running_command() -> None:
    pending = tracker(replay=CommandReplay("htop", 3))
    assert pending.snapshot_replay([], shell_launch=True, checkpoint_generation=None) == (
        "htop",
        3,
    )
    shell = tracker()
    feed(shell, marker("C", extra=";cmdline_url=less%20notes"))
    assert shell.snapshot_replay([], shell_launch=True, checkpoint_generation=None) is None
    assert shell.snapshot_replay(["less"], shell_launch=True, checkpoint_generation=None) == (
        "less notes",
        None,
    )
    assert shell.snapshot_replay([], shell_launch=True, checkpoint_generation=4) == (
        "less notes",
        4,
    )
    assert shell.snapshot_replay(["less"], shell_launch=False, checkpoint_generation=4) is None


def test_a_title_set_is_kept_over_the_programs_and_given_back_empty() -> None:
    shell = tracker()
    feed(shell, b"\x1b]2;vim\x07")
    assert shell.set_title("edit\x1b[31m") == ShellReaction(changed=TITLE_CHANGED)
    assert (shell.title, shell.title_explicit) == ("edit[31m", True)
    assert feed(shell, b"\x1b]2;less\x07") == []  # the program's, noted, not shown
    assert shell.set_title("edit[31m") is None  # the same: nothing to tell
    assert shell.set_title("") == ShellReaction(changed=TITLE_CHANGED)
    assert (shell.title, shell.title_explicit) == ("less", False)
    assert feed(shell, b"\x1b]2;top\x07") == [ShellReaction(changed=TITLE_CHANGED)]


def test_a_title_given_back_before_the_program_set_one_stays_until_it_does() -> None:
    shell = tracker(title_explicit=True)
    assert shell.set_title("") is None
    assert (shell.title, shell.title_explicit) == ("bash", False)
    assert feed(shell, b"\x1b]2;vim\x07") == [ShellReaction(changed=TITLE_CHANGED)]
