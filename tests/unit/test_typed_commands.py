"""muxctl.typed_commands: what is typed after `:` — the window commands by their own
names and by tmux's, with tmux's arguments for them."""

import pytest

from muxctl.typed_commands import NotACommand, TypedCommand, typed_command


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("split-window -h", TypedCommand("split-horizontal")),
        ("splitw", TypedCommand("split-vertical")),
        ("split-horizontal", TypedCommand("split-horizontal")),
        ("select-window -t 2", TypedCommand("window-2")),
        ("selectw -t :0", TypedCommand("window-0")),
        ("resize-pane -L 10", TypedCommand("resize-left", "10")),
        ("resizep -D", TypedCommand("resize-down", "1")),
        ("resize-pane -Z", TypedCommand("zoom")),
        ("select-pane -R", TypedCommand("right")),
        ("select-pane -l", TypedCommand("last-pane")),
        ("swap-pane -D", TypedCommand("swap-pane-down")),
        ("swapp -U", TypedCommand("swap-pane-up")),
        ("nextl", TypedCommand("next-layout")),
        ("select-layout tiled", TypedCommand("select-layout", "tiled")),
        ("rename-window 'my build'", TypedCommand("rename-window", "my build")),
        ("renamew a b", TypedCommand("rename-window", "a b")),
        ("kill-pane", TypedCommand("close", "y")),
        ("killw", TypedCommand("close-window", "y")),
        ("close", TypedCommand("close", "y")),
        ("neww", TypedCommand("new-window")),
        ("  next  ", TypedCommand("next-window")),
        ("detach-client", TypedCommand("detach")),
        ("lsk", TypedCommand("list-keys")),
        ("next-pane", TypedCommand("next-pane")),
        ("", None),
    ],
)
def test_commands_by_their_names_and_tmuxs(line: str, command: TypedCommand | None) -> None:
    assert typed_command(line) == command


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("kill-server", "unknown command: kill-server"),
        ("command-prompt", "unknown command: command-prompt"),
        ("split-window -p 30", "split-window takes -h or -v here"),
        ("select-window -t 12", "select-window -t takes a window index, 0 to 9"),
        ("resize-pane -L lots", "resize-pane: 'lots' is no count of cells"),
        ("resize-pane -L 0", "resize-pane: '0' is no count of cells"),
        ("rename-window", "rename-window needs a name"),
        ("swap-pane -s 3", "swap-pane takes -U or -D here"),
        ("selectl spiral", "select-layout takes one of even-horizontal, "),
        ("next-window now", "next-window takes no arguments here"),
        ("rename-window 'open", "No closing quotation"),
    ],
)
def test_what_is_no_command_is_said(line: str, said: str) -> None:
    with pytest.raises(NotACommand, match=said):
        typed_command(line)
