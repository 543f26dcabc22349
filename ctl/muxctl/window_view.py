"""`muxctl attach` showing a whole window: every pane in its region, borders between
them, keys to the focused pane, window commands behind a prefix key
(docs/windows.md#the-window-view).

One attach connection per pane of the window (muxctl.pane_link), each pane's
output fed to an emulator of this client's and drawn into its region
(muxctl.window_screen): the client composes, so each client pays for its own
rendering and muxd only relays, as for one pane. The window itself — its layout,
its focus — is muxd's, over D-Bus: a command changes it there (SplitPane,
SetWindow, Kill) and the view follows what ListWindows says, after each command
and every REFRESH_SECONDS (a split made by another client shows within that).
Zooming is this view's own: the zoomed pane fills the terminal until zoomed back.
Each pane is sized to its region, so its program draws for the space it has. A
graceful upgrade of mux cuts every link (ServiceUpgrading): each is made again
to the same pane, and the window asked for again once mux is back on the bus.
"""

import contextlib
import select
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

from mux.protocol.paste import BRACKETED_PASTE_ON
from mux.protocol.visible import visible
from muxctl.attaching import Outcome
from muxctl.clipboard import PasteBuffer
from muxctl.errors import EXIT_FAILURE
from muxctl.mouse import MOUSE_ON, MouseEvent, MouseReader
from muxctl.pane_link import PaneAttached, PaneEnded, PaneInterrupted, PaneLink, PaneOutput
from muxctl.pane_links import PaneLinks
from muxctl.prefix_keys import DetachNow, Pasted, PrefixKeys, Typed
from muxctl.rawterm import RawTerminal, read_keys, window_size
from muxctl.signal_wakeup import pending_signals, signal_wakeups
from muxctl.terminal_out import TerminalOut
from muxctl.view_commands import Done, ViewCommands
from muxctl.view_copy import ViewCopy
from muxctl.view_mouse import ViewMouse
from muxctl.view_question import Question
from muxctl.view_settings import mode_keys, mouse, status_line
from muxctl.view_state import Shown
from muxctl.view_window import ViewWindow, WindowGone
from muxctl.window_commands import set_focus
from muxctl.window_screen import WindowScreen

if TYPE_CHECKING:
    from muxctl.client import MuxClient

REFRESH_SECONDS = 1.0
DETACH_TIMEOUT_SECONDS = 2.0
REATTACH_POLL_SECONDS = 0.05
TERMINAL_BACKLOG_BYTES = 1 << 20


def _interest(
    links: dict[int, PaneLink], terminal: TerminalOut, always: list[int], out: int
) -> tuple[list[int], list[int]]:
    """The descriptors to wait on, to read and to write: `always` read; the links read
    only while the terminal has taken what it has, written while they have frames."""
    taking = len(terminal.pending) < TERMINAL_BACKLOG_BYTES
    readable = [*always, *links] if taking else always
    writable = [fd for fd, link in links.items() if link.outgoing.size]
    return readable, [*writable, out] if terminal.pending else writable


class WindowView:
    def __init__(
        self,
        client: "MuxClient",
        socket_path: Path,
        pane: int,
        keys: PrefixKeys,
        buffer: PasteBuffer,
        *,
        read_only: bool = False,
        fds: tuple[int, int] = (0, 1),  # the terminal: input, output
    ) -> None:
        """`read_only`: it watches (docs/windows.md#read-only): nothing typed is sent,
        no pane is resized, nothing of the window changes."""
        self._client = client
        self._asked = pane  # 0: the last used pane, named by the service when attached
        self._keys = keys
        self._in, self._out = fds
        self._shown = Shown(window_size(self._out), focus=pane)
        self._screen = WindowScreen(*self._shown.size)
        self._links = PaneLinks(socket_path, read_only=read_only)
        self._question = Question()  # asked before `x` and `&`, and for `,` and `:`
        self._copy = ViewCopy(mode_keys(), self._screen, buffer, keys.listed())
        self._commands = ViewCommands(client, self._shown, self._copy, self._links)
        self._window = ViewWindow(
            client, self._shown, self._links, self._screen, self._copy, status=status_line()
        )
        taken = ViewMouse(self._shown, self._commands, self._copy, self._screen, self._links)
        self._mouse = taken if mouse() else None  # (`mouse`: the view takes the mouse)
        self._mouse_reader = MouseReader()
        self._terminal = TerminalOut(self._out)
        self._detaching_since: float | None = None

    # -- the loop -----------------------------------------------------------------------

    def run(self) -> Outcome:
        try:
            with signal_wakeups() as wake_fd, RawTerminal(self._in, self._out):
                try:
                    return self._serve(wake_fd)
                finally:
                    # Whatever the last pane drawn left set; the next line below it all.
                    bottom = self._shown.size[0]
                    self._terminal.add(f"\x1b[0m\x1b[?25h\x1b[{bottom};1H".encode())
                    self._terminal.flush(DETACH_TIMEOUT_SECONDS)
        finally:
            self._links.close()

    def _serve(self, wake_fd: int) -> Outcome:
        if self._asked:
            self._window.load()
            if self._shown.focus != self._asked and not self._links.read_only:  # (as tmux)
                set_focus(self._client, self._shown.window, self._asked)
                self._window.load()
        else:  # the service names the pane: one link first, the window once it has
            self._links.open(0, self._shown.size)
        # Pastes bracketed (until RESET_MODES): each the focused pane's PASTE, one piece.
        on = (MOUSE_ON if self._mouse else b"") + BRACKETED_PASTE_ON
        self._terminal.add(on + self._screen.full())
        if ahead := self._keys.take_ahead():  # (typed after a lone pane's split...)
            self._from_keyboard(ahead)
        next_refresh = time.monotonic() + REFRESH_SECONDS
        while True:
            links = self._links.by_fd()
            keys = [self._in] if self._detaching_since is None else []
            readable, writable = _interest(links, self._terminal, [wake_fd, *keys], self._out)
            now = time.monotonic()
            deadline = next_refresh
            if self._links.reattaching:
                self._links.reattach()
                deadline = min(deadline, now + REATTACH_POLL_SECONDS)
            if self._detaching_since is not None:
                deadline = self._detaching_since + DETACH_TIMEOUT_SECONDS
                if now >= deadline or not links:
                    return _detached(self._shown.window, self._shown.focus)
            ready, ready_to_write, _ = select.select(readable, writable, [], max(0, deadline - now))
            for fd in ready_to_write:
                (self._terminal if fd == self._out else links[fd]).write()
            try:
                for fd in ready:
                    outcome = self._ready(fd, wake_fd, links)
                    if outcome is not None:
                        return outcome
                if time.monotonic() >= next_refresh and self._detaching_since is None:
                    next_refresh = time.monotonic() + REFRESH_SECONDS
                    self._window.refresh()
            except WindowGone:
                if (ended := self._elsewhere()) is not None:
                    return ended
            overlay = self._question.overlay(*self._shown.size)
            self._terminal.add(self._screen.render() + overlay)
            self._terminal.write()

    def _ready(self, fd: int, wake_fd: int, links: dict[int, PaneLink]) -> Outcome | None:
        if fd == wake_fd:
            return self._on_signals(wake_fd)
        if fd == self._in:
            return self._from_keyboard()
        link = links[fd]
        if link.ended:  # (closed since the select: an earlier fd of it showed another window)
            return None
        for event in link.receive():
            if isinstance(event, PaneOutput):
                if event.repaint and self._links.read_only and self._shown.window:
                    self._window.load()  # (its size may be new: a writer resized it)
                if event.repaint:
                    self._screen.reset(link.pane)
                self._screen.feed(link.pane, event.data)
            elif isinstance(event, PaneAttached) and self._shown.window == 0:
                self._links.named(event.pane)
                self._shown.focus = event.pane
                self._window.load()
            elif isinstance(event, PaneInterrupted):
                self._links.interrupted(link, self._shown.size_of(link.pane))
            elif isinstance(event, PaneEnded) and self._detaching_since is None:
                if event.why == "mux went away":
                    return Outcome("mux went away (it stopped or crashed)", EXIT_FAILURE, True)
                if self._shown.window == 0:  # the pane asked for is not there (no pane runs)
                    return Outcome(f"muxctl: {event.why}", EXIT_FAILURE, True)
                # Said in its region, where it is kept (exited, with remain_on_exit; the
                # pane this client runs in, which it cannot show inside itself).
                self._screen.feed(link.pane, _ended_note(event.why))
                self._window.refresh()  # now, not within a second: it has left the window (or not)
        return None

    def _elsewhere(self) -> Outcome | None:
        """The window shown has ended: another shown (ViewCommands.window_gone), or the
        view ends when none is left."""
        gone = self._shown.window
        while self._commands.window_gone():
            with contextlib.suppress(WindowGone):  # (gone too, meanwhile: the next)
                self._window.load()
                self._terminal.add(self._screen.full())
                return None
        return Outcome(f"[window {gone} ended: its last pane closed]")

    # -- keys and commands --------------------------------------------------------------

    def _from_keyboard(self, data: bytes | None = None) -> Outcome | None:
        """What the terminal has, or `data` (typed ahead, read already)."""
        data = read_keys(self._in) if data is None else data
        if not data:  # None: nothing after all; b"": the terminal is gone
            return None if data is None else self._start_detach()
        if self._mouse is None:
            return self._typed(data)
        for part in self._mouse_reader.feed(data):
            if not isinstance(part, MouseEvent):
                if (outcome := self._typed(part)) is not None:
                    return outcome
            elif not self._question.pending() and (done := self._mouse.on(part)):
                self._follow("mouse", done)
        return None

    def _typed(self, data: bytes) -> Outcome | None:
        if self._question.pending():  # the key answers it (and is not typed)
            self._answer(data)
            return None
        for event in self._keys.feed(data):
            if isinstance(event, Typed) and self._question.pending():  # (asked just now)
                self._answer(event.data)
            elif isinstance(event, Typed) and self._copy.pane is not None:  # (a mode's)
                self._terminal.add(self._copy.type(event.data))
                if (chosen := self._copy.take_chosen()) is not None:
                    self._follow("choose", self._commands.choose(chosen))
            elif isinstance(event, Typed | Pasted):  # (a paste over a mode: dropped)
                wanted = isinstance(event, Typed) or self._copy.pane is None
                if wanted and not self._links.give(self._shown.pane, event):
                    self._terminal.add(b"\a")  # (its program ended: keys go nowhere)
            elif isinstance(event, DetachNow) or event.name == "detach":
                return self._start_detach()
            else:
                self._command(event.name)
        return None

    def _answer(self, keys: bytes) -> None:
        if (action := self._question.answer(keys)) is not None:
            action()
        if not self._question.pending():  # (its row drawn over)
            self._terminal.add(self._screen.full())

    def _command(self, name: str, answer: str | None = None) -> None:
        self._follow(name, self._commands.do(name, answer))

    def _follow(self, name: str, done: Done) -> None:
        """After command `name`: the window as muxd has it, a refusal's bell, a question."""
        if done.ask is not None:
            self._question.ask(done.ask, lambda answer: self._command(name, answer))
        if done.bell:
            self._terminal.add(b"\a")
        if done.detach:
            self._start_detach()
        if self._shown.window or self._shown.focus:  # (window 0: the new pane's, `c`)
            self._window.load()
        if done.other_window:
            self._terminal.add(self._screen.full())

    # -- signals, detaching, the terminal -----------------------------------------------

    def _on_signals(self, wake_fd: int) -> Outcome | None:
        for signum in pending_signals(wake_fd):
            if signum == signal.SIGWINCH:
                self._shown.size = window_size(self._out)
                if self._shown.layout is None:  # not yet attached: the one pane at this size
                    for link in self._links:
                        link.resize(*self._shown.size)
                    continue
                self._window.arrange()  # (each pane's emulator resized; its repaint follows)
                self._terminal.add(self._screen.full())
            elif signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                self._links.detach()
                if signum == signal.SIGHUP:
                    self._terminal.pending.clear()
                name = signal.Signals(signum).name
                return Outcome(f"[{name}: detached from window {self._shown.window}]", 128 + signum)
        return None

    def _start_detach(self) -> Outcome | None:
        if self._detaching_since is None:
            self._detaching_since = time.monotonic()
            self._links.detach()
        return None


def _ended_note(why: str) -> bytes:
    """Why a pane's link ended, on a line of its own in reverse video (escaped: muxd's
    words may hold a client's text)."""
    return f"\r\n\x1b[0;7m[{visible(why)}]\x1b[0m".encode()


def _detached(window: int, focus: int) -> Outcome:
    return Outcome(f"[detached from window {window}; reattach with: muxctl attach {focus}]")
