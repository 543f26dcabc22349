"""Who may use `muxctl web`, checked on every request (docs/web.md#security). Pure: a
request's method, path, headers and cookie in; a refusal (status, reason) or None out.

The one-time login token is exchanged for a session cookie (HttpOnly, SameSite=Strict,
Secure over TLS); every request must come with a live session (the login itself
aside), name one of the server's own addresses in `Host` (a DNS-rebinding page names
its own), and, when it changes something or opens a WebSocket, come from the
server's own `Origin` (a page on another port of 127.0.0.1 is "same-site" to the
browser and gets the Strict cookie: only the Origin tells it apart).
"""

import secrets
import time
from collections.abc import Callable, Mapping

TOKEN_SECONDS = 3600.0  # a login link unused this long is void
SESSION_SECONDS = 12 * 3600.0  # a browser logs in again after this long
COOKIE = "mux_session"
MAX_SESSIONS = 64  # (each login makes one; the oldest go first)

# Sent with every answer: scripts only from the server's own files (none inline),
# nothing framed, nothing fetched elsewhere, no referrer (the login link).
SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}
# The pane page's: xterm.js (6.0) sets styles on its elements and in <style> elements
# of its own, which 'self' does not allow; scripts stay the server's files only.
XTERM_CSP = SECURITY_HEADERS["Content-Security-Policy"].replace(
    "style-src 'self'", "style-src 'self' 'unsafe-inline'"
)

_CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Guard:
    def __init__(self, hosts: frozenset[str], scheme: str = "http") -> None:
        self._scheme = scheme
        self.serve_hosts(hosts)
        self.token = secrets.token_urlsafe(32)
        self._token_until = time.monotonic() + TOKEN_SECONDS
        self._sessions: dict[str, float] = {}  # id -> when it ends (monotonic)
        # Told of each new login token (the server keeps it in the user's login page).
        self.on_renewed: Callable[[], None] | None = None

    def renew(self) -> None:
        """A new login token (the last one void): after a login, and before it expires."""
        self.token = secrets.token_urlsafe(32)
        self._token_until = time.monotonic() + TOKEN_SECONDS
        if self.on_renewed is not None:
            self.on_renewed()

    @property
    def secure(self) -> bool:
        """Whether the browser reaches the server over TLS (the cookie says Secure)."""
        return self._scheme == "https"

    def serve_hosts(self, hosts: frozenset[str]) -> None:
        """The `Host` values this server answers for (known once it is bound)."""
        self._hosts = hosts
        self._origins = frozenset(f"{self._scheme}://{host}" for host in hosts)

    def log_in(self, token: str) -> str | None:
        """A new session's id for the login token (once: it is spent); None if `token`
        is not it, or it was spent or is too old."""
        until, now = self._token_until, time.monotonic()
        if now > until or not secrets.compare_digest(token, self.token):
            return None
        self.renew()  # (the next login needs the next link: `muxctl web --login`)
        session = secrets.token_urlsafe(32)
        self._sessions[session] = now + SESSION_SECONDS
        while len(self._sessions) > MAX_SESSIONS:
            del self._sessions[next(iter(self._sessions))]
        return session

    def has_session(self, cookie: str | None) -> bool:
        if cookie is None:
            return False
        until = next(
            (u for s, u in self._sessions.items() if secrets.compare_digest(s, cookie)), None
        )
        if until is None:
            return False
        if time.monotonic() > until:
            self._sessions.pop(cookie, None)
            return False
        return True

    def refusal(
        self, method: str, path: str, headers: Mapping[str, str], cookie: str | None
    ) -> tuple[int, str] | None:
        """Why the request is refused, as (HTTP status, reason); None: it may go on."""
        if headers.get("Host", "").lower() not in self._hosts:
            return 421, "this server does not answer for that host name"
        origin = headers.get("Origin")
        upgrade = headers.get("Upgrade", "").lower() == "websocket"
        if (method in _CHANGES or upgrade or origin is not None) and origin not in self._origins:
            return 403, "a request from another site's page"
        if path == "/login":
            return None
        if not self.has_session(cookie):
            return 401, "not logged in: open the link muxctl web printed"
        return None
