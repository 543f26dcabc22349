"""`muxctl attach` showing a whole window in a real terminal (docs/windows.md#the-window-view):
a tmux window plays the user's terminal; keys go in with send-keys, the screen comes
back with capture-pane; every pane is a real bash on a real PTY in a real muxd."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from dbus_fast import Variant

from tests.harness import Service, wait_for
from tests.outer_tmux import OuterTmux

BASH = ["bash", "--norc", "--noprofile", "-i"]


def shell(service: Service, prompt: str) -> dict[str, Variant]:
    return {"argv": Variant("as", BASH), "env": Variant("a{ss}", {"PS1": f"{prompt}$ "})}


def side_by_side(service: Service) -> tuple[int, int, int]:
    """A window of two bash panes side by side: (window, left, right)."""
    left = service.spawn(BASH, env={"PS1": "left$ "})
    window = int(service.panes()[left]["window"])
    right, _, _ = service.call(
        "SplitPane", "tsda{sv}", [left, "horizontal", 0.5, shell(service, "right")]
    )
    service.wait_screen(left, "left$")
    service.wait_screen(int(right), "right$")
    return window, left, int(right)


def shown_alone(service: Service, outer: OuterTmux, prompt: str, cols: int = 80) -> tuple[int, str]:
    """A bash pane alone in its window, its prompt `prompt` and `$`, attached in a
    terminal of 24 rows: (the pane, the terminal), once the prompt shows there."""
    pane = service.spawn(BASH, env={"PS1": f"{prompt}$ "})
    service.wait_screen(pane, f"{prompt}$")
    terminal = outer.open(outer.muxctl_line("attach", str(pane)), rows=24, cols=cols)
    outer.wait_shown(terminal, f"{prompt}$")
    return pane, terminal


def layout(service: Service, window: int) -> dict[str, object]:
    (entries,) = service.call("ListWindows")
    for entry in entries:
        if entry["id"].value == window:
            return {
                "layout": json.loads(entry["layout"].value),
                "focus": entry["focused_pane"].value,
            }
    return {}


def rows_of(text: str) -> list[str]:
    return text.split("\n")


def one_more_pane(
    service: Service, outer: OuterTmux, directory: Path, key: str
) -> tuple[int, str, int]:
    """A shell in `directory` (prompt `first$`) shown alone in a terminal, then `key`
    behind the prefix making one more pane: (the first pane, the terminal, the new pane,
    checked to have started in `directory`)."""
    directory.mkdir()
    first = service.spawn(BASH, env={"PS1": "first$ "}, cwd=str(directory))
    service.wait_screen(first, "first$")
    view = outer.open(outer.muxctl_line("attach", str(first)), rows=24, cols=80)
    outer.wait_shown(view, "first$")
    outer.send_keys(view, "C-b", key)
    wait_for(lambda: len(service.panes()) == 2, what="a second pane")
    (new,) = [p for p in service.panes() if p != first]
    assert service.panes()[new]["cwd"] == str(directory)
    return first, view, new


def test_two_panes_side_by_side_each_in_its_region_with_a_border(
    service: Service, outer: OuterTmux
) -> None:
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    shown = outer.wait_shown(view, "right$")
    assert "left$" in shown
    # 81 columns: 40 for each pane and the border between them; 23 rows above the status line.
    wait_for(
        lambda: (
            [(service.panes()[p]["rows"], service.panes()[p]["cols"]) for p in (left, right)]
            == [(23, 40), (23, 40)]
        ),
        what="each pane sized to its region",
    )
    row = next(line for line in rows_of(outer.capture(view)) if "right$" in line)
    assert row.index("right$") >= 41, "the right pane's text is right of the border"
    assert "│" in row[39:42]
    # The pane attached to takes the focus, and the keys.
    wait_for(lambda: layout(service, window)["focus"] == left, what="the focus on the left pane")
    outer.type_line(view, "echo typed-$((6*7))")
    service.wait_screen(left, "typed-42")
    assert "typed-42" not in service.screen_text(right)
    # prefix + right arrow: the focus moves right; typing follows it, shown live.
    outer.send_keys(view, "C-b", "Right")
    wait_for(lambda: layout(service, window)["focus"] == right, what="the focus on the right")
    outer.type_line(view, "echo there-$((6*7))")
    service.wait_screen(right, "there-42")
    outer.wait_shown(view, "there-42")
    outer.send_keys(view, "C-b", "d")
    shown = outer.wait_shown(view, "[detached from window")
    assert service.panes()[left]["state"] == "running"


def test_prefix_splits_zooms_and_the_panes_follow_the_terminal_size(
    service: Service, outer: OuterTmux
) -> None:
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(right)), rows=24, cols=81)
    outer.wait_shown(view, "left$")
    outer.send_keys(view, "C-b", '"')  # split the focused (right) pane: a new one below it
    wait_for(lambda: len(service.panes()) == 3, what="a third pane")
    (below,) = set(service.panes()) - {left, right}
    assert layout(service, window)["layout"] == {
        "split": "horizontal",
        "ratios": [0.5, 0.5],
        "children": [
            {"pane": left},
            {
                "split": "vertical",
                "ratios": [0.5, 0.5],
                "children": [{"pane": right}, {"pane": below}],
            },
        ],
    }
    service.wait_size(
        below, 11, 40, what="the new pane sized to its region (23 rows: 11 + border + 11)"
    )
    # Zoom: the focused pane fills the terminal, and back.
    outer.send_keys(view, "C-b", "z")
    service.wait_size(below, 23, 81, what="the zoomed pane at the terminal's size")
    outer.send_keys(view, "C-b", "z")
    wait_for(lambda: service.panes()[below]["cols"] == 40, what="back in its region")
    # The outer terminal resized: every pane follows its region.
    outer.resize(view, 30, 101)
    wait_for(
        lambda: (
            [service.panes()[p]["cols"] for p in (left, right, below)] == [50, 50, 50]
            and service.panes()[left]["rows"] == 29
        ),
        what="the panes following the terminal's new size",
    )
    # prefix + x asks first (y/n); n keeps the pane, y closes it; the tree collapses.
    outer.send_keys(view, "C-b", "x")
    outer.wait_shown(view, f"kill pane {below}? (y/n)")
    outer.send_keys(view, "n")
    wait_for(lambda: "(y/n)" not in outer.capture(view), what="the question gone")
    assert below in service.panes()
    outer.send_keys(view, "C-b", "x")
    outer.wait_shown(view, f"kill pane {below}? (y/n)")
    outer.send_keys(view, "y")
    wait_for(lambda: below not in service.panes(), what="the focused pane closed")
    assert layout(service, window)["layout"]["children"] == [{"pane": left}, {"pane": right}]  # type: ignore[index]
    outer.send_keys(view, "C-\\")
    outer.wait_shown(view, "[detached from window")


def test_a_split_typed_in_a_lone_pane_opens_the_window_view(
    service: Service, outer: OuterTmux, tmp_root: Path
) -> None:
    """The new pane starts in the split pane's directory and takes the focus: what is
    typed next goes to it."""
    pane, view, new = one_more_pane(service, outer, tmp_root / "project", "%")
    wait_for(lambda: service.panes()[pane]["cols"] < 80, what="the first pane in its region")
    outer.wait_shown(view, "│")
    window = int(service.panes()[pane]["window"])
    wait_for(lambda: layout(service, window)["focus"] == new, what="the focus on the new pane")
    outer.type_line(view, "echo in-$(basename $PWD)-$((6*7))")
    service.wait_screen(new, "in-project-42")
    assert "in-project-42" not in service.screen_text(pane)
    outer.send_keys(view, "C-b", "d")
    outer.wait_shown(view, "[detached from window")


def test_a_place_holder_is_shown_in_its_region_and_the_view_goes_on(
    service: Service, tmp_root: Path
) -> None:
    """A pane not restored holds its place (docs/windows.md#persistence): the view
    shows what it says there, sizes the live pane to its region, and types into it."""
    program = tmp_root / "vanishing"
    program.write_bytes(Path("/bin/sleep").read_bytes())
    program.chmod(0o755)
    left = service.spawn(BASH, env={"PS1": "left$ "})
    service.call(
        "SplitPane",
        "tsda{sv}",
        [left, "horizontal", 0.5, {"argv": Variant("as", [str(program), "600"])}],
    )
    assert service.stop() == 0
    program.unlink()
    service.start()
    (live,) = [p for p, info in service.panes().items() if info["state"] == "running"]
    service.wait_screen(live, "left$")
    outer = OuterTmux(tmp_root, service)
    try:
        view = outer.open(outer.muxctl_line("attach", str(live)), rows=24, cols=81)
        shown = outer.wait_shown(view, "this pane keeps")
        assert "left$" in shown
        service.wait_size(live, 23, 40, what="the live pane sized to its region")
        outer.type_line(view, "echo typed-$((6*7))")
        service.wait_screen(live, "typed-42")
        outer.wait_shown(view, "typed-42")
    finally:
        outer.kill()


def test_the_view_follows_a_graceful_upgrade(service: Service, outer: OuterTmux) -> None:
    """`Upgrade` ends every attach connection (ServiceUpgrading): the view attaches
    to each pane again, and its window commands reach the new muxd."""
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    wait_for(lambda: layout(service, window)["focus"] == left, what="the focus on the left pane")
    assert service.process is not None
    muxd = service.process.pid

    service.muxctl("upgrade", check=True)
    service.call("SendInput", "tay", [right, b"echo after-$((6*7))\n"])
    outer.wait_shown(view, "after-42")  # the right pane's output, live again
    outer.type_line(view, "echo typed-$((5*5))")
    service.wait_screen(left, "typed-25")
    outer.send_keys(view, "C-b", "Right")
    wait_for(lambda: layout(service, window)["focus"] == right, what="a command to the new muxd")
    assert service.process.pid == muxd, "upgraded in place"
    outer.send_keys(view, "C-b", "d")
    outer.wait_shown(view, "detached from window")


def test_a_pane_whose_program_ends_leaves_the_view_at_once(
    service: Service, outer: OuterTmux
) -> None:
    """`exit` in a split: the pane goes, its sibling takes the whole terminal and the
    focus, and what is typed next reaches the sibling (it was once silently dropped)."""
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(right)), rows=24, cols=81)
    outer.wait_shown(view, "left$")
    wait_for(lambda: layout(service, window)["focus"] == right, what="the focus on the right")
    outer.type_line(view, "exit")
    wait_for(lambda: layout(service, window)["layout"] == {"pane": left}, what="one pane left")
    wait_for(
        lambda: (service.panes()[left]["rows"], service.panes()[left]["cols"]) == (23, 81),
        what="the sibling sized to the whole terminal",
    )
    outer.type_line(view, "echo after-$((6*7))")
    service.wait_screen(left, "after-42")
    shown = outer.wait_shown(view, "after-42")
    assert "│" not in "\n".join(shown.split("\n")[:23]), "no border left (the status line aside)"


def test_windows_made_and_switched_behind_the_prefix(
    service: Service, outer: OuterTmux, tmp_root: Path
) -> None:
    """`c` a new window (a shell in the focused pane's directory), `n`/`p` next and
    previous, `0`-`9` by index, `l` the last one shown: keys follow the window shown."""
    first, view, second = one_more_pane(service, outer, tmp_root / "work", "c")
    assert service.panes()[second]["window"] != service.panes()[first]["window"]
    # The new window is shown, its pane alone at the terminal's size, and takes the keys.
    wait_for(
        lambda: (service.panes()[second]["rows"], service.panes()[second]["cols"]) == (23, 80),
        what="the new window's pane at the terminal's size",
    )

    def typed_into(pane: int, word: str) -> None:
        outer.type_line(view, f"echo {word}-$((6*7))")
        service.wait_screen(pane, f"{word}-42")

    typed_into(second, "in-the-new-window")
    for keys, pane, word in (
        (("p",), first, "previous"),
        (("n",), second, "next"),
        (("0",), first, "index-zero"),
        (("l",), second, "last"),
        (("1",), second, "index-one"),
    ):
        outer.send_keys(view, "C-b", *keys)
        outer.wait_shown(view, "in-the-new-window-42" if pane == second else "first$")
        typed_into(pane, word)
    outer.send_keys(view, "C-b", "d")
    outer.wait_shown(view, "[detached from window")


def test_a_window_made_from_a_split_window_is_shown(service: Service, outer: OuterTmux) -> None:
    """`c` in the window view of a split window (not a pane shown alone) shows the new
    window and gives it the keys. (The view stayed on the old one, drawing nothing
    more, and rang the bell at every key.)"""
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    outer.send_keys(view, "C-b", "c")
    wait_for(lambda: len(service.panes()) == 3, what="a pane in a new window")
    (new,) = [p for p in service.panes() if p not in (left, right)]
    assert service.panes()[new]["window"] != window
    wait_for(
        lambda: (service.panes()[new]["rows"], service.panes()[new]["cols"]) == (23, 81),
        what="the new window's pane at the terminal's size",
    )
    outer.type_line(view, "echo made-$((6*7))")
    service.wait_screen(new, "made-42")
    wait_for(lambda: "right$" not in outer.capture(view), what="the new window drawn alone")
    outer.send_keys(view, "C-b", "p")
    outer.wait_shown(view, "right$")


def test_when_the_window_shown_ends_another_is_shown(service: Service, outer: OuterTmux) -> None:
    """As in tmux, a window closed (`&`) under the view is followed by another, the one
    shown before it; only the last window's end ends the view."""
    window, left, _right = side_by_side(service)
    other = service.spawn(BASH, env={"PS1": "other$ "})
    service.wait_screen(other, "other$")
    view = outer.open(outer.muxctl_line("attach", str(other)), rows=24, cols=81)
    outer.wait_shown(view, "other$")
    outer.send_keys(view, "C-b", "0")  # (the split window: `other`'s is the last shown)
    outer.wait_shown(view, "right$")
    outer.send_keys(view, "C-b", "&")
    outer.wait_shown(view, f"kill window {window} and its 2 panes? (y/n)")
    outer.send_keys(view, "y")
    wait_for(lambda: left not in service.panes(), what="the split window closed")
    wait_for(lambda: "right$" not in outer.capture(view), what="the window gone from view")
    outer.wait_shown(view, "other$")
    outer.type_line(view, "echo still-$((6*7))")
    service.wait_screen(other, "still-42")
    outer.send_keys(view, "C-b", "&")
    outer.send_keys(view, "y")
    outer.wait_shown(view, "ended: its last pane closed]")


def test_a_view_run_inside_a_pane_of_its_window_says_why_that_one_is_not_shown(
    service: Service,
) -> None:
    """The window view of a window run in one of its own panes: that pane cannot be
    shown inside itself (muxd refuses the attach), and its region says so instead of
    staying blank."""
    _window, left, right = side_by_side(service)
    line = shlex.join([sys.executable, "-m", "muxctl", "attach", str(left)])
    service.call("SendInput", "tay", [right, f"{line}\r".encode()])
    service.wait_screen(right, "[this client")
    service.call("SendInput", "tay", [right, b"\x1c"])  # (the view detached)
    service.wait_screen(right, "[detached from window")


def test_closing_a_pane_whose_program_ended_asks_nothing(
    service: Service, outer: OuterTmux
) -> None:
    """`x` on a pane whose program has ended (alone in its window, so kept, marked on the
    status line) closes it at once: there is nothing to lose, nothing to ask."""
    _window, _left, _right = side_by_side(service)
    ended = service.spawn(["sh", "-c", "echo ended-here"])
    wait_for(lambda: service.panes()[ended]["state"] == "exited", what="its program ended")
    view = outer.open(outer.muxctl_line("attach", str(_left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    outer.send_keys(view, "C-b", "1")
    outer.wait_shown(view, f"{ended}: sh · ")
    assert "exited (0)" in outer.capture(view)
    outer.send_keys(view, "C-b", "x")
    wait_for(lambda: ended not in service.panes(), what="the ended pane closed")
    outer.wait_shown(view, "right$")  # (its window ended: the one shown before)
    assert "(y/n)" not in outer.capture(view)


def test_panes_swapped_behind_the_prefix(service: Service, outer: OuterTmux) -> None:
    """`}` and `{` swap the focused pane with the one after or before it (tmux's
    swap-pane -D, -U: the last with the first too); the focus goes with it."""
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")

    def order() -> list[int]:
        return [child["pane"] for child in layout(service, window)["layout"]["children"]]  # type: ignore[index]

    outer.send_keys(view, "C-b", "}")
    wait_for(lambda: order() == [right, left], what="the focused pane moved right")
    assert layout(service, window)["focus"] == left
    wait_for(lambda: outer.capture(view).startswith("right$"), what="drawn where it went")
    outer.send_keys(view, "C-b", "}")  # (the last with the first)
    wait_for(lambda: order() == [left, right], what="back, round the end")
    outer.send_keys(view, "C-b", ":")
    outer.send_keys(view, "-l", "swap-pane -U")
    outer.send_keys(view, "Enter")
    wait_for(lambda: order() == [right, left], what="swap-pane -U typed")


def test_preset_layouts_behind_the_prefix(service: Service, outer: OuterTmux) -> None:
    """Space goes through tmux's preset layouts (even-horizontal, even-vertical,
    main-horizontal...), `select-layout NAME` after `:` picks one; the panes keep their
    order and the focus."""
    window, left, right = side_by_side(service)
    third, _, _ = service.call("SplitPane", "tsda{sv}", [right, "vertical", 0.5, {}])
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    panes = [left, right, int(third)]

    def tree() -> object:
        return layout(service, window)["layout"]

    def even(direction: str) -> dict[str, object]:
        return {"split": direction, "children": [{"pane": p} for p in panes]}

    def shaped(direction: str) -> bool:
        got = tree()
        return isinstance(got, dict) and {**got, "ratios": None} == {
            **even(direction),
            "ratios": None,
        }

    outer.send_keys(view, "C-b", "Space")
    wait_for(lambda: shaped("horizontal"), what="even-horizontal")
    outer.send_keys(view, "C-b", "Space")
    wait_for(lambda: shaped("vertical"), what="even-vertical")
    wait_for(lambda: service.panes()[right]["cols"] == 81, what="each pane as wide as the view")
    outer.send_keys(view, "C-b", ":")
    outer.send_keys(view, "-l", "select-layout main-vertical")
    outer.send_keys(view, "Enter")
    wait_for(
        lambda: [c.get("pane") for c in tree()["children"]] == [left, None],  # type: ignore[index]
        what="main-vertical: the first pane, then the others",
    )
    assert layout(service, window)["focus"] == left


def test_closing_a_window_or_a_lone_pane_asks_first(service: Service, outer: OuterTmux) -> None:
    """`&` closes the window, every pane of it, after y; in a pane shown alone `x` asks
    on the terminal given back, and n attaches to the pane again."""
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    outer.send_keys(view, "C-b", "&")
    outer.wait_shown(view, f"kill window {window} and its 2 panes? (y/n)")
    outer.send_keys(view, "y")
    outer.wait_shown(view, "[window")
    wait_for(lambda: not {left, right} & set(service.panes()), what="both panes closed")

    alone, lone = shown_alone(service, outer, "alone")
    outer.send_keys(lone, "C-b", "x")
    outer.wait_shown(lone, f"kill pane {alone}? (y/n)")
    outer.send_keys(lone, "n")
    wait_for(lambda: "(y/n)" not in outer.capture(lone), what="attached again")
    outer.type_line(lone, "echo still-$((6*7))")
    service.wait_screen(alone, "still-42")
    outer.send_keys(lone, "C-b", "x")
    outer.send_keys(lone, "y")
    outer.wait_shown(lone, f"[pane {alone} closed]")
    assert alone not in service.panes()


def test_the_status_line_lists_windows_and_the_focused_pane(
    service: Service, outer: OuterTmux, tmp_root: Path
) -> None:
    """On the last row: every window by index (the one shown marked *, Z when zoomed),
    the focused pane's title and directory; what it takes from titles is escaped.
    `status = false` leaves the row to the panes."""
    window, left, _right = side_by_side(service)
    service.call("SetWindow", "ta{sv}", [window, {"title": Variant("s", "build\x1b[31m")}])
    service.spawn(BASH, env={"PS1": "other$ "})
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=100)
    outer.wait_shown(view, "right$")
    status = outer.wait_shown(view, "0:build\\x1b[31m*").split("\n")[23]
    assert status.startswith(" 0:build\\x1b[31m* 1:bash"), status
    assert f"│ {left}: " in status
    outer.send_keys(view, "C-b", "z")
    outer.wait_shown(view, "0:build\\x1b[31m*Z")
    outer.send_keys(view, "C-b", "n")
    outer.wait_shown(view, "1:bash*")
    outer.send_keys(view, "C-b", "d")
    (service.config_home / "mux").mkdir(exist_ok=True)
    (service.config_home / "mux" / "config.toml").write_text("status = false\n")
    plain = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(plain, "right$")
    wait_for(lambda: service.panes()[left]["rows"] == 24, what="the panes on every row")
    assert "0:build" not in outer.capture(plain)


def test_the_window_is_renamed_behind_the_prefix(service: Service, outer: OuterTmux) -> None:
    """`,` asks for the name on the bottom row, starting from the one the window has."""
    window, left, _right = side_by_side(service)
    service.call("SetWindow", "ta{sv}", [window, {"title": Variant("s", "old")}])
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=100)
    outer.wait_shown(view, "0:old*")
    outer.send_keys(view, "C-b", ",")
    outer.wait_shown(view, "(rename-window) old")
    outer.send_keys(view, "C-u")
    outer.send_keys(view, "-l", "logs")
    outer.send_keys(view, "Enter")
    outer.wait_shown(view, "0:logs*")
    (entries,) = service.call("ListWindows")
    assert {e["id"].value: e["title"].value for e in entries}[window] == "logs"
    outer.send_keys(view, "C-b", ",")
    outer.wait_shown(view, "(rename-window) logs")
    outer.send_keys(view, "Escape")  # given up: the name stays
    wait_for(lambda: "(rename-window)" not in outer.capture(view), what="the prompt gone")
    assert "0:logs*" in outer.capture(view)


def test_the_chooser_lists_every_window_and_pane_and_shows_the_one_chosen(
    service: Service, outer: OuterTmux
) -> None:
    window, left, right = side_by_side(service)
    other = service.spawn(BASH, env={"PS1": "other$ "})
    service.wait_screen(other, "other$")
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=100)
    outer.wait_shown(view, "right$")
    outer.send_keys(view, "C-b", "w")
    shown = outer.wait_shown(view, f"└─ {right}: bash")
    assert "(0) bash · 2 panes" in shown and "(1) bash · 1 pane" in shown
    assert f"├─ {left}: bash" in shown and f"└─ {other}: bash" in shown
    outer.send_keys(view, "Down", "Down", "Down")  # from pane `left`: to pane `other`
    outer.send_keys(view, "Enter")
    outer.wait_shown(view, "1:bash*")
    outer.wait_shown(view, "other$")
    outer.send_keys(view, "C-b", "w")
    outer.wait_shown(view, "(0) bash · 2 panes")
    outer.send_keys(view, "0")  # a digit: that window at once
    outer.wait_shown(view, "0:bash*")
    assert layout(service, window)["focus"] == left


def test_a_lone_pane_chooses_and_renames_too(service: Service, outer: OuterTmux) -> None:
    """`w` and `,` in a pane shown alone: the chooser over the whole terminal (its own
    screen untouched), then the window chosen; the name asked for on the line below."""
    _window, left, right = side_by_side(service)
    lone, view = shown_alone(service, outer, "lone", cols=100)
    outer.send_keys(view, "C-b", ",")
    outer.wait_shown(view, "(rename-window)")
    outer.send_keys(view, "-l", "notes")
    outer.send_keys(view, "Enter")
    lone_window = int(service.panes()[lone]["window"])
    wait_for(lambda: window_titles(service).get(lone_window) == "notes", what="renamed")
    outer.type_line(view, "echo still-attached")
    service.wait_screen(lone, "still-attached")

    outer.send_keys(view, "C-b", "w")
    outer.wait_shown(view, f"└─ {lone}: bash")
    outer.send_keys(view, "0")  # the split window: its view
    outer.wait_shown(view, "right$")
    shown = outer.wait_shown(view, "left$")
    assert "0:bash* 1:notes" in shown
    assert {left, right} <= set(service.panes())


def window_titles(service: Service) -> dict[int, str]:
    (entries,) = service.call("ListWindows")
    return {int(e["id"].value): str(e["title"].value) for e in entries}


def test_borders_move_with_alt_arrows_and_muxctl_resize_pane(
    service: Service, outer: OuterTmux
) -> None:
    """Ctrl-b Alt-arrow moves the focused pane's border 5 cells (as tmux's M-arrow);
    `muxctl resize-pane ID -L|-R|-U|-D N` moves it N; muxd keeps the ratios."""
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    wait_for(lambda: service.panes()[left]["cols"] == 40, what="the left pane in its region")
    outer.send_keys(view, "C-b", "M-Right")
    wait_for(lambda: service.panes()[left]["cols"] == 45, what="its border 5 cells right")
    assert layout(service, window)["layout"]["ratios"][0] > 0.5  # type: ignore[index]
    assert service.muxctl("resize-pane", str(right), "-R", "5").returncode == 0
    wait_for(lambda: service.panes()[left]["cols"] == 50, what="the border moved by muxctl")
    refused = service.muxctl("resize-pane", str(right), "-U", "3")
    assert refused.returncode == 1 and "no border that can move up" in refused.stderr


def test_keys_rebound_in_the_configuration(service: Service, outer: OuterTmux) -> None:
    """`prefix = "C-a"`, and `[keys]`: `|` splits side by side; `%`, bound to "none",
    does nothing."""
    (service.config_home / "mux").mkdir(exist_ok=True)
    (service.config_home / "mux" / "config.toml").write_text(
        'prefix = "C-a"\n[keys]\n"|" = "split-horizontal"\n"%" = "none"\n'
    )
    pane, view = shown_alone(service, outer, "keys")
    outer.send_keys(view, "C-a", "%")
    outer.type_line(view, "echo still-one-$((6*7))")
    service.wait_screen(pane, "still-one-42")
    assert len(service.panes()) == 1
    outer.send_keys(view, "C-b", "|")  # (no longer the prefix: typed)
    outer.send_keys(view, "C-a", "|")
    wait_for(lambda: len(service.panes()) == 2, what="a split made by the rebound key")


def test_the_focus_goes_to_the_next_pane_and_back_and_the_keys_are_listed(
    service: Service, outer: OuterTmux
) -> None:
    """`o` focuses the next pane, `;` the one focused before (as tmux's); `?` lists the
    keys over the focused pane's region until `q`, in a pane shown alone over the whole
    terminal, and the attach goes on."""
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=100)
    outer.wait_shown(view, "right$")
    wait_for(lambda: layout(service, window)["focus"] == left, what="the left pane focused")
    # (`\;`, escaped: a lone `;` would end tmux's send-keys command)
    for key, focused in (("o", right), ("\\;", left), ("\\;", right), ("o", left)):
        outer.send_keys(view, "C-b", key)
        wait_for(lambda f=focused: layout(service, window)["focus"] == f, what=f"{key}: {focused}")
    outer.send_keys(view, "C-b", "?")
    shown = outer.wait_shown(view, "list-keys")
    assert "C-b %        split-horizontal" in shown and "C-b ;        last-pane" in shown
    outer.send_keys(view, "q")
    wait_for(lambda: "list-keys" not in outer.capture(view), what="the list gone")
    outer.type_line(view, "echo after-the-list")
    service.wait_screen(left, "after-the-list")

    lone, alone = shown_alone(service, outer, "lone")
    outer.send_keys(alone, "C-b", "?")
    outer.wait_shown(alone, "C-b ?        list-keys")
    outer.send_keys(alone, "Enter")
    outer.wait_shown(alone, "lone$")
    outer.type_line(alone, "echo lone-after-the-list")
    service.wait_screen(lone, "lone-after-the-list")


def test_a_paste_is_text_even_with_the_prefix_key_in_it(service: Service, outer: OuterTmux) -> None:
    """The view asks the terminal to bracket pastes: a paste goes to the focused pane as
    one (PASTE), its control characters taken out, and the prefix key inside it is no
    command (no split here); so in a pane shown alone, whose shell asked for brackets."""
    _window, left, _right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=100)
    outer.wait_shown(view, "right$")
    outer.tmux("set-buffer", "echo pasted-\x02%-$((6*7))\n")
    outer.tmux("paste-buffer", "-p", "-t", view)  # (-p: bracketed, as the view asked)
    service.wait_screen(left, "echo pasted-%-$((6*7))")
    outer.send_keys(view, "Enter")  # (bash runs no bracketed paste before Enter)
    service.wait_screen(left, "pasted-%-42")
    assert len(service.panes()) == 2, "no split"

    lone, alone = shown_alone(service, outer, "lone")
    outer.tmux("set-buffer", "echo alone-\x02%-$((6*7))\n")
    outer.tmux("paste-buffer", "-p", "-t", alone)
    service.wait_screen(lone, "echo alone-%-$((6*7))")
    outer.send_keys(alone, "Enter")
    service.wait_screen(lone, "alone-%-42")
    assert len(service.panes()) == 3, "no split"


def test_commands_typed_after_a_colon(service: Service, outer: OuterTmux) -> None:
    """`:` asks for a command on the bottom row, by tmux's names: a split, a border
    moved N cells, what is no command said until a key; in a pane shown alone too,
    where `kill-pane` typed out closes it without asking again."""
    window, left, _right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    wait_for(lambda: service.panes()[left]["cols"] == 40, what="the left pane in its region")
    outer.send_keys(view, "C-b", ":")
    outer.send_keys(view, "-l", "resize-pane -R 3")
    outer.send_keys(view, "Enter")
    wait_for(lambda: service.panes()[left]["cols"] == 43, what="its border 3 cells right")
    outer.send_keys(view, "C-b", ":")
    outer.send_keys(view, "-l", "kill-server")
    outer.send_keys(view, "Enter")
    outer.wait_shown(view, "unknown command: kill-server")
    outer.send_keys(view, "x")  # (any key takes the notice away, and is not typed)
    wait_for(lambda: "unknown command" not in outer.capture(view), what="the notice gone")
    outer.send_keys(view, "C-b", ":")
    outer.send_keys(view, "-l", "split-window -h")
    outer.send_keys(view, "Enter")
    wait_for(lambda: len(layout(service, window)["layout"]["children"]) == 3, what="a split")  # type: ignore[index]
    assert "x" not in service.screen_text(left).replace("exit", "")

    lone, alone = shown_alone(service, outer, "lone")
    outer.send_keys(alone, "C-b", ":")
    outer.send_keys(alone, "-l", "select-pane -L")
    outer.send_keys(alone, "Enter")
    shown = outer.wait_shown(alone, "(a key goes on)")  # (said, not done: no other pane)
    assert "muxctl: left: pane" in shown
    outer.send_keys(alone, "Space")
    # Typed on at once: keys between the notice and the attach again wait for the
    # attach (the terminal is held raw from one part to the next).
    outer.type_line(alone, "echo after-the-notice")
    service.wait_screen(lone, "after-the-notice")
    # Typed out, `kill-pane` closes it without asking again. (The command's name came
    # once in the read of `C-b :` and was dropped with the attach: the cause of a rare
    # failure here, mended by the keys typed ahead.)
    outer.send_keys(alone, "C-b", ":")
    outer.send_keys(alone, "-l", "kill-pane")
    outer.send_keys(alone, "Enter")
    outer.wait_shown(alone, f"[pane {lone} closed]")
    wait_for(lambda: lone not in service.panes(), what="the lone pane closed")


def test_keys_typed_with_a_lone_panes_command_are_the_next_parts(
    service: Service, outer: OuterTmux
) -> None:
    """A pane shown alone ends its attach for `x` and `:`: keys that come in the same
    read as the command answer its question, and what follows the answer goes to the
    pane or to the window view that comes next, as in tmux (they were dropped with
    the attach)."""
    lone, alone = shown_alone(service, outer, "lone")
    # (one send-keys: one write to the terminal, read at once)
    outer.send_keys(alone, "C-b", "x", "n", "echo", "Space", "kept-$((1+1))", "Enter")
    service.wait_screen(lone, "kept-2")
    assert lone in service.panes(), "n: not closed"
    wait_for(lambda: "(y/n)" not in outer.capture(alone), what="attached again")
    # An arrow gives up the rename: its whole sequence, none of it typed into the pane.
    outer.send_keys(alone, "C-b", ",", "Up", "echo", "Space", "arrow-$((2+2))", "Enter")
    service.wait_screen(lone, "arrow-4")
    assert "[A" not in service.screen_text(lone)
    wait_for(lambda: "(rename-window)" not in outer.capture(alone), what="attached again")
    typed = ["C-b", ":", "split-window", "Space", "-h", "Enter"]
    outer.send_keys(alone, *typed, "echo", "Space", "ahead-$((40+2))", "Enter")
    wait_for(lambda: len(service.panes()) == 2, what="the split typed after the colon")
    (new,) = [p for p in service.panes() if p != lone]
    service.wait_screen(new, "ahead-42")  # (the new pane has the focus)
    assert "ahead" not in service.screen_text(lone)


def test_the_terminal_sends_keys_as_the_focused_program_asked(
    service: Service, outer: OuterTmux
) -> None:
    """The view sets the terminal's cursor-key and keypad modes to the focused pane's
    (as tmux does): an arrow reaches a program that set application cursor keys as
    `ESC O A`; focused elsewhere, the terminal is back in the normal modes."""
    script = "printf '\\033[?1h\\033=KEYS\\n'; exec cat -v"
    left = service.spawn(["sh", "-c", script])
    window = int(service.panes()[left]["window"])
    service.call("SplitPane", "tsda{sv}", [left, "horizontal", 0.5, shell(service, "right")])
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    outer.wait_shown(view, "KEYS")
    flags = ("display-message", "-p", "-t", view, "#{keypad_cursor_flag} #{keypad_flag}")
    wait_for(lambda: outer.tmux(*flags).stdout.split() == ["1", "1"], what="the keys' modes")
    outer.send_keys(view, "Up", "Enter")
    service.wait_screen(left, "^[OA")
    outer.send_keys(view, "C-b", "Right")
    wait_for(lambda: layout(service, window)["focus"] != left, what="the focus moved")
    wait_for(lambda: outer.tmux(*flags).stdout.split() == ["0", "0"], what="normal modes")


def test_q_numbers_the_panes_and_a_digit_focuses_one(service: Service, outer: OuterTmux) -> None:
    """`q` shows each pane's index and id in its middle (tmux's display-panes); a digit
    focuses the pane of that index; any other key puts the panes back."""
    window, left, right = side_by_side(service)
    view = outer.open(outer.muxctl_line("attach", str(left)), rows=24, cols=81)
    outer.wait_shown(view, "right$")
    outer.send_keys(view, "C-b", "q")
    shown = outer.wait_shown(view, f"1 · pane {right}")
    assert f"0 · pane {left}" in shown and "right$" not in shown
    outer.send_keys(view, "1")
    wait_for(lambda: layout(service, window)["focus"] == right, what="the pane of index 1")
    outer.wait_shown(view, "right$")
    outer.send_keys(view, "C-b", "q")
    outer.wait_shown(view, f"0 · pane {left}")
    outer.send_keys(view, "x")  # (not a pane's index: the panes back, nothing typed)
    wait_for(lambda: "· pane" not in outer.capture(view), what="the numbers gone")
    assert layout(service, window)["focus"] == right and "x" not in service.screen_text(right)
