"""Desktop notifications for panes nobody is looking at (docs/desktop.md#notifications).

What a pane's program asks to tell its user (OSC 9/777/99), and a command of an
integrated shell that ran at least `notify_command_seconds`, become a
notification when no terminal is attached to the pane; so do the panes a start
could not restore and an autosave that keeps failing. They are sent from muxd's
own bus connection: the server sends ActionInvoked only to the connection that
called Notify, and its default action opens a terminal attached to the pane
(`send` lets another part offer actions of its own: mux.desktop.held_notice). At
most one per pane per `notify_min_interval_seconds`; text from programs is
bounded and its control characters are shown as escapes. ActionInvoked and
NotificationClosed are obeyed only from the current owner of the server's name:
any other connection may emit them too. No server: one log line, silence.
"""

import html
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Protocol

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from mux.config import Settings
from mux.desktop.bus_name_owner import BusNameOwner
from mux.desktop.terminal import TerminalOpener
from mux.panes.pane import Pane
from mux.protocol.notices import (
    BODY_CHARS,
    SUMMARY_CHARS,
    CommandFinished,
    Notice,
    bounded,
    finished_summary,
    newsworthy,
    shown,
)
from mux.protocol.restore_problems import UnrestoredPane
from mux.system.bus_daemon import bus_daemon_message
from mux.system.tasks import BackgroundTasks

log = logging.getLogger(__name__)

SERVER = "org.freedesktop.Notifications"
SERVER_PATH = "/org/freedesktop/Notifications"
APP_NAME = "mux"
DESKTOP_ENTRY = "org.mux.Mux"
ICON = "utilities-terminal"
AUTOSAVE_FAILING_SECONDS = 30.0
KEPT_IDS = 256  # notifications whose action may still come
# The bus tried to start a server and could not (one that needs a display, say).
SPAWN_FAILED = "org.freedesktop.DBus.Error.Spawn."
ABSENT = frozenset(
    {"org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"}
)


class Answer(Protocol):
    """What a notification sent with actions does when the server answers."""

    def shown(self, notification_id: int) -> None:
        """The server took it (its id, to withdraw it with)."""

    def action(self, key: str) -> None:
        """One of its actions was invoked (the server then removes it)."""

    def closed(self) -> None:
        """It is gone, or its actions can no longer come to muxd."""


class OpenPane:
    """A pane's notification: its default action opens a terminal on the pane."""

    def __init__(self, opener: TerminalOpener, pane_id: int) -> None:
        self._opener = opener
        self._pane_id = pane_id

    def shown(self, notification_id: int) -> None:
        pass

    def action(self, key: str) -> None:
        if key == "default":
            self._opener.open_attached(self._pane_id)

    def closed(self) -> None:
        pass


class Notifier:
    def __init__(
        self,
        settings: Settings,
        attached: Callable[[Pane], int],
        opener: TerminalOpener,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`attached(pane)`: how many terminals show the pane; `opener`: what the
        default action runs."""
        self._settings = settings
        self._attached = attached
        self._opener = opener
        self._clock = clock
        self._bus: MessageBus | None = None
        self._server = BusNameOwner(SERVER)
        self._shown: OrderedDict[int, Answer] = OrderedDict()  # by notification id
        self._last: dict[int, float] = {}  # pane id -> when it last notified
        self._absent_logged = False
        self._failing_since: float | None = None
        self._failure_told = False
        self._tasks = BackgroundTasks()

    # -- the bus connection (the control plane's listener) --------------------------

    def connected(self, bus: MessageBus, *_: object) -> None:
        self._bus = bus
        self._forget_shown()  # their actions would come to the old connection
        self._server = BusNameOwner(SERVER)
        bus.add_message_handler(self._signal)
        self._tasks.spawn(self._match(bus, self._server))

    def disconnected(self) -> None:
        self._bus = None

    # -- what there is to tell ------------------------------------------------------

    def pane_notice(self, pane: Pane, notice: Notice) -> None:
        """The table's notice listener."""
        if not self._settings.notifications or self._attached(pane):
            return
        if not newsworthy(notice, self._settings.notify_command_seconds):
            return
        if isinstance(notice, CommandFinished):
            summary, body = _finished_text(pane, notice)
        else:
            summary = notice.title or pane.title or f"pane {pane.id}"
            body = f"{notice.body}\n" if notice.body else ""
            body += f"pane {pane.id}: {pane.title}"
        now = self._clock()
        last = self._last.get(pane.id)
        if last is not None and now - last < self._settings.notify_min_interval_seconds:
            log.debug("pane %d: notification dropped (too soon after the last)", pane.id)
            return
        self._last[pane.id] = now
        self._send(summary, body, pane.id)

    def pane_removed(self, pane_id: int) -> None:
        self._last.pop(pane_id, None)

    def restore_problems(self, problems: Sequence[UnrestoredPane]) -> None:
        """The panes a start could not restore: one notification for all of them."""
        if not self._settings.notifications or not problems:
            return
        lines = [_problem_line(problem) for problem in problems[:5]]
        if len(problems) > 5:
            lines.append(f"and {len(problems) - 5} more (muxctl doctor, ListRestoreProblems)")
        count = "1 pane" if len(problems) == 1 else f"{len(problems)} panes"
        self._send(f"mux could not restore {count}", "\n".join(lines), None)

    def autosave_failed(self, reason: str) -> None:
        now = self._clock()
        if self._failing_since is None:
            self._failing_since = now
        if self._failure_told or now - self._failing_since < AUTOSAVE_FAILING_SECONDS:
            return
        self._failure_told = True
        if self._settings.notifications:
            self._send("mux cannot save the session", reason, None)

    def autosave_saved(self) -> None:
        self._failing_since, self._failure_told = None, False

    # -- D-Bus ------------------------------------------------------------------------

    def send(
        self,
        summary: str,
        body: str,
        actions: Sequence[tuple[str, str]] = (),
        answer: Answer | None = None,
    ) -> None:
        """Send a notification (in the background): `actions` as (key, label), what
        they do told to `answer`. The summary is put on one line and the body's lines
        each shown, bounded and escaped (the callers' text may come from programs).
        Whether notifications are wanted at all is the caller's to check."""
        bus = self._bus
        if bus is None:
            log.info("not on a bus: notification not shown: %s", summary)
            return
        flat = [text for action in actions for text in action]
        summary = shown(summary, SUMMARY_CHARS)
        self._tasks.spawn(self._notify(bus, summary, _body(body), flat, answer))

    def _send(self, summary: str, body: str, pane_id: int | None) -> None:
        """Mux's own: a pane's notification opens the pane (its default action)."""
        if pane_id is None:
            self.send(summary, body)
        else:
            self.send(summary, body, [("default", "Open")], OpenPane(self._opener, pane_id))

    def withdraw(self, notification_id: int) -> None:
        """Take a notification back (CloseNotification, in the background)."""
        answer = self._shown.pop(notification_id, None)
        if answer is not None:
            answer.closed()
        bus = self._bus
        if bus is not None:
            self._tasks.spawn(self._close(bus, notification_id))

    async def _notify(
        self, bus: MessageBus, summary: str, body: str, actions: list[str], answer: Answer | None
    ) -> None:
        hints = {"desktop-entry": Variant("s", DESKTOP_ENTRY)}
        message = _server_message(
            "Notify", "susssasa{sv}i", [APP_NAME, 0, ICON, summary, body, actions, hints, -1]
        )
        try:
            reply = await bus.call(message)
        except (OSError, EOFError) as e:
            log.info("notification not sent (%s): %s", e, summary)
            return
        assert reply is not None
        if reply.message_type is MessageType.ERROR:
            if reply.error_name in ABSENT or str(reply.error_name).startswith(SPAWN_FAILED):
                if not self._absent_logged:
                    log.info("no notification server on this bus: notifications are not shown")
                    self._absent_logged = True
            else:
                log.warning("the notification server refused %r: %s", summary, reply.body)
            return
        if answer is not None and bus is self._bus:
            notification_id = int(reply.body[0])
            self._shown[notification_id] = answer
            while len(self._shown) > KEPT_IDS:
                self._shown.popitem(last=False)[1].closed()
            answer.shown(notification_id)

    async def _close(self, bus: MessageBus, notification_id: int) -> None:
        try:
            reply = await bus.call(_server_message("CloseNotification", "u", [notification_id]))
        except (OSError, EOFError) as e:
            log.info("notification %d not withdrawn (%s)", notification_id, e)
            return
        if reply is not None and reply.message_type is MessageType.ERROR:
            log.info("notification %d not withdrawn: %s", notification_id, reply.body)

    def _forget_shown(self) -> None:
        shown_before, self._shown = self._shown, OrderedDict()
        for answer in shown_before.values():
            answer.closed()

    async def _match(self, bus: MessageBus, server: BusNameOwner) -> None:
        # The bus then brings the server's signals only, to this connection; but a
        # signal sent to muxd by name comes whatever the rules: `sent` checks each.
        await bus.call(bus_daemon_message("AddMatch", "s", [server.signal_rule(SERVER)]))
        await server.follow(bus)

    def _signal(self, message: Message) -> None:
        server = self._server
        server.handle(message)
        if message.message_type is not MessageType.SIGNAL or message.interface != SERVER:
            return
        if message.member in ("ActionInvoked", "NotificationClosed") and not server.sent(message):
            return
        if message.member == "ActionInvoked" and message.signature == "us":
            answer = self._shown.pop(int(message.body[0]), None)
            if answer is not None:
                # Closed first: the server removes a notification whose action was
                # taken, so what the action changes must not withdraw it again.
                answer.closed()
                answer.action(str(message.body[1]))
        elif message.member == "NotificationClosed" and message.signature == "uu":
            answer = self._shown.pop(int(message.body[0]), None)
            if answer is not None:
                answer.closed()


def _server_message(member: str, signature: str, body: list[object]) -> Message:
    return Message(
        destination=SERVER,
        path=SERVER_PATH,
        interface=SERVER,
        member=member,
        signature=signature,
        body=body,
    )


def _finished_text(pane: Pane, notice: CommandFinished) -> tuple[str, str]:
    took = _duration(notice.seconds)
    return finished_summary(notice), f"after {took}, in pane {pane.id}: {pane.title}"


def _duration(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def _problem_line(problem: UnrestoredPane) -> str:
    if problem.pane_id == 0:
        return f"the session: {problem.reason}"
    name = problem.title or (problem.argv[0] if problem.argv else "a pane")
    return f"{name} (pane {problem.pane_id}): {problem.reason}"


def _body(text: str) -> str:
    """Each line shown (a body may have several: only newlines part them), the whole
    bounded, and escaped: servers that read markup in bodies must not read a
    program's text as markup."""
    lines = [shown(line, BODY_CHARS) for line in text.split("\n")]
    return html.escape(bounded("\n".join(line for line in lines if line), BODY_CHARS), quote=False)
