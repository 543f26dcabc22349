"""The attach conversation as a state machine, without I/O (docs/attach-protocol.md#conversation).

The frames are `mux.protocol.attach`'s; this module says which frame may come
when. Each end of a connection has one object, in the manner of h11: bytes in
with `receive_data`, typed events out with `next_event` (a ProtocolError for
a frame the peer may not send now), frames out as bytes with `send` (a
LocalProtocolError for a frame this side may not send now: a bug here, not
the peer's). `ServiceConversation` is muxd's end, `ClientConversation` a
client's.

The rules:

1. Each role has a state of its own, moved only by what that role says, as
   TRANSITIONS lists. The client: NEW -HELLO-> GREETED -ATTACH-> ATTACHING
   -DETACH-> DETACHING. The service: AWAIT_HELLO -WELCOME-> READY -ATTACHED->
   ATTACHED; EXITED, DETACHED and a final ERROR end the conversation.
2. The service answers, it never volunteers: WELCOME answers a HELLO (a
   repeated HELLO is answered again, as muxd always has), ATTACHED an ATTACH
   (several ATTACHes switch panes), DETACHED a DETACH.
3. An ERROR whose code is one of REFUSALS refuses one request and leaves the
   service where it was; any other code, an unknown one too, is final
   (docs/attach-protocol.md#errors).
4. Once the service has ended the conversation, both roles are CLOSED: the
   service reads nothing more of what the client had already sent (keys
   typed as the pane exited are not a fault); a client takes anything more
   from the service as a protocol error. `close()` says the connection is
   gone, which ends the conversation on either side.
5. INPUT (PASTE too: INPUT of another kind) and RESIZE before an ATTACH's
   answer: a client pipelines HELLO, RESIZE and ATTACH, and may type before
   ATTACHED arrives, so it may send INPUT once it has asked for a pane. The
   service, which knows, takes INPUT only once it has said ATTACHED: INPUT
   after a refused ATTACH is a protocol error. RESIZE and STATUS are taken as
   soon as the client is greeted (they set the size and the status line of the
   next ATTACH).
6. `OpenAttach` hands out a connection whose client has, in effect, said
   HELLO and ATTACH and whose service has said WELCOME
   (docs/attach-protocol.md#openattach).
7. A frame is judged by its header as soon as that is in: before HELLO
   nothing but a HELLO (of at most MAX_HELLO bytes) is waited for, so a
   client that has not said HELLO makes the service buffer little
   (docs/attach-protocol.md#limits).
"""

from enum import Enum
from typing import Final

from mux.protocol.attach import (
    HEADER,
    MAX_PAYLOAD,
    Attach,
    Attached,
    Detach,
    Detached,
    Error,
    Exited,
    Frame,
    FrameDecoder,
    FrameType,
    Hello,
    Input,
    Output,
    Paste,
    ProtocolError,
    Repaint,
    Resize,
    Status,
    Welcome,
    encode,
)

# ERROR codes that refuse one request; the conversation goes on (rule 3).
REFUSALS: Final = frozenset({"NoSuchPane", "InvalidArgument", "PreconditionFailed", "Unavailable"})
# Final ERROR codes that are not D-Bus error names.
PROTOCOL_ERROR: Final = "ProtocolError"
VERSION_UNSUPPORTED: Final = "VersionUnsupported"
PANE_CLOSED: Final = "PaneClosed"
SERVICE_STOPPING: Final = "ServiceStopping"
SERVICE_UPGRADING: Final = "ServiceUpgrading"  # the same panes are there to reattach to
# A limit of the service's (no HELLO in time, too many connections waiting to say it).
LIMIT_EXCEEDED: Final = "LimitExceeded"

ClientFrame = Hello | Attach | Input | Paste | Resize | Status | Detach
ServiceFrame = Welcome | Attached | Output | Repaint | Exited | Error | Detached


class LocalProtocolError(Exception):
    """This side tried to send a frame the conversation does not allow now."""


class Role(Enum):
    CLIENT = "client"
    SERVICE = "service"


class State(Enum):
    # The client's: what it has said.
    NEW = "the client has said nothing"
    GREETED = "the client has said HELLO"
    ATTACHING = "the client has asked for a pane"
    DETACHING = "the client has said DETACH"
    # The service's: what it has said.
    AWAIT_HELLO = "the service has said nothing"
    READY = "the service has said WELCOME"
    ATTACHED = "the service has said ATTACHED"
    # Both, once the service has ended the conversation or the connection is gone.
    CLOSED = "the conversation is over"


class Say(Enum):
    """What a role says: a frame type, an ERROR told apart by its code (rule 3)."""

    HELLO = FrameType.HELLO
    ATTACH = FrameType.ATTACH
    INPUT = FrameType.INPUT
    PASTE = FrameType.PASTE
    RESIZE = FrameType.RESIZE
    STATUS = FrameType.STATUS
    DETACH = FrameType.DETACH
    WELCOME = FrameType.WELCOME
    ATTACHED = FrameType.ATTACHED
    OUTPUT = FrameType.OUTPUT
    REPAINT = FrameType.REPAINT
    EXITED = FrameType.EXITED
    REFUSAL = "an ERROR refusing one request"
    FINAL_ERROR = "an ERROR ending the conversation"
    DETACHED = FrameType.DETACHED


_C, _S = Role.CLIENT, Role.SERVICE

# Every legal move: (who, in which of its states, says what) -> its next state.
TRANSITIONS: Final[dict[tuple[Role, State, Say], State]] = {
    (_C, State.NEW, Say.HELLO): State.GREETED,
    (_C, State.GREETED, Say.HELLO): State.GREETED,
    (_C, State.GREETED, Say.RESIZE): State.GREETED,
    (_C, State.GREETED, Say.STATUS): State.GREETED,  # as RESIZE
    (_C, State.GREETED, Say.ATTACH): State.ATTACHING,
    (_C, State.GREETED, Say.DETACH): State.DETACHING,
    (_C, State.ATTACHING, Say.HELLO): State.ATTACHING,
    (_C, State.ATTACHING, Say.RESIZE): State.ATTACHING,
    (_C, State.ATTACHING, Say.STATUS): State.ATTACHING,
    (_C, State.ATTACHING, Say.ATTACH): State.ATTACHING,
    (_C, State.ATTACHING, Say.INPUT): State.ATTACHING,  # the service: once ATTACHED (rule 5)
    (_C, State.ATTACHING, Say.PASTE): State.ATTACHING,  # as INPUT
    (_C, State.ATTACHING, Say.DETACH): State.DETACHING,
    (_S, State.AWAIT_HELLO, Say.WELCOME): State.READY,
    (_S, State.AWAIT_HELLO, Say.FINAL_ERROR): State.CLOSED,
    (_S, State.READY, Say.WELCOME): State.READY,
    (_S, State.READY, Say.ATTACHED): State.ATTACHED,
    (_S, State.READY, Say.REFUSAL): State.READY,
    (_S, State.READY, Say.FINAL_ERROR): State.CLOSED,
    (_S, State.READY, Say.DETACHED): State.CLOSED,
    (_S, State.ATTACHED, Say.WELCOME): State.ATTACHED,
    (_S, State.ATTACHED, Say.ATTACHED): State.ATTACHED,  # another ATTACH switched panes
    (_S, State.ATTACHED, Say.OUTPUT): State.ATTACHED,
    (_S, State.ATTACHED, Say.REPAINT): State.ATTACHED,
    (_S, State.ATTACHED, Say.REFUSAL): State.ATTACHED,
    (_S, State.ATTACHED, Say.EXITED): State.CLOSED,
    (_S, State.ATTACHED, Say.FINAL_ERROR): State.CLOSED,
    (_S, State.ATTACHED, Say.DETACHED): State.CLOSED,
}

_CLIENT_KINDS: Final = frozenset(
    {
        FrameType.HELLO,
        FrameType.ATTACH,
        FrameType.INPUT,
        FrameType.PASTE,
        FrameType.RESIZE,
        FrameType.STATUS,
        FrameType.DETACH,
    }
)


def is_refusal(error: Error) -> bool:
    return error.code in REFUSALS


def _say(frame: Frame) -> Say:
    if isinstance(frame, Error):
        return Say.REFUSAL if is_refusal(frame) else Say.FINAL_ERROR
    return Say(frame.kind)


class _Illegal(Exception):
    """A move the conversation does not allow; the message says why."""


class _Conversation:
    """Both roles' states and what the answers of rule 2 need; the one place they move."""

    def __init__(self, opened_attached: bool) -> None:
        self.client = State.ATTACHING if opened_attached else State.NEW
        self.service = State.READY if opened_attached else State.AWAIT_HELLO
        self._unanswered_hellos = 0
        self._asked_for_pane = opened_attached

    def check(self, role: Role, frame: Frame, receiving: bool) -> State:
        """The state `role` moves to by sending `frame`; _Illegal if it may not.
        `receiving`: the other side checks (rule 5: the service knows more)."""
        kind = frame.kind.name
        if (self.client if role is Role.CLIENT else self.service) is State.CLOSED:
            raise _Illegal(f"{kind} after the end of the conversation")
        if role is Role.CLIENT:
            state = self.client
            if state is State.NEW and frame.kind is not FrameType.HELLO:
                raise _Illegal(f"{kind} before HELLO")
            if frame.kind not in _CLIENT_KINDS:
                raise _Illegal(f"{kind} is sent by mux, not to it")
            typed = frame.kind in (FrameType.INPUT, FrameType.PASTE)
            if typed and receiving and self.service is not State.ATTACHED:
                raise _Illegal(f"{kind} before ATTACH")
        else:
            state = self.service
            if frame.kind in _CLIENT_KINDS:
                raise _Illegal(f"{kind} is sent to mux, not by it")
            self._check_answer(frame.kind)
        following = TRANSITIONS.get((role, state, _say(frame)))
        if following is None:
            raise _Illegal(_out_of_place(kind, state))
        return following

    def check_kind(self, role: Role, kind: FrameType) -> None:
        """What can be said of a frame from `role` by its type alone (rule 7)."""
        if role is Role.CLIENT and self.client is State.NEW and kind is not FrameType.HELLO:
            raise _Illegal(f"{kind.name} before HELLO")

    def _check_answer(self, kind: FrameType) -> None:
        if kind is FrameType.WELCOME and not self._unanswered_hellos:
            raise _Illegal("WELCOME that answers no HELLO")
        if kind is FrameType.ATTACHED and not self._asked_for_pane:
            raise _Illegal("ATTACHED that answers no ATTACH")
        if kind is FrameType.DETACHED and self.client is not State.DETACHING:
            raise _Illegal("DETACHED that answers no DETACH")

    def move(self, role: Role, frame: Frame, following: State) -> None:
        if role is Role.CLIENT:
            self.client = following
            if frame.kind is FrameType.HELLO:
                self._unanswered_hellos += 1
            elif frame.kind is FrameType.ATTACH:
                self._asked_for_pane = True
        else:
            self.service = following
            if frame.kind is FrameType.WELCOME:
                self._unanswered_hellos -= 1
            if following is State.CLOSED:
                self.client = State.CLOSED  # rule 4

    def close(self) -> None:
        self.client = self.service = State.CLOSED


def _out_of_place(kind: str, state: State) -> str:
    if state is State.DETACHING:
        return f"{kind} after DETACH"
    if state is State.GREETED:  # only INPUT and PASTE are not allowed there
        return f"{kind} before ATTACH"
    if state is State.AWAIT_HELLO:
        return f"{kind} before WELCOME"
    return f"{kind} before ATTACHED"  # READY


class _End:
    """What both ends share: the decoder, the states, sending."""

    ROLE: Role  # the role this end plays
    PEER: Role

    def __init__(self, opened_attached: bool = False) -> None:
        """`opened_attached`: a connection from OpenAttach (rule 6)."""
        self._decoder = FrameDecoder()
        self._conversation = _Conversation(opened_attached)

    @property
    def client_state(self) -> State:
        return self._conversation.client

    @property
    def service_state(self) -> State:
        return self._conversation.service

    @property
    def is_over(self) -> bool:
        return self._conversation.service is State.CLOSED

    def receive_data(self, data: bytes) -> None:
        """Bytes as they came from the peer, in any pieces."""
        self._decoder.receive_data(data)

    def _next_frame(self) -> Frame | None:
        kind = self._decoder.next_kind()
        if kind is None:
            return None
        try:
            self._conversation.check_kind(self.PEER, kind)
        except _Illegal as e:
            raise ProtocolError(str(e)) from None
        frame = self._decoder.next_frame()
        if frame is None:
            return None
        try:
            following = self._conversation.check(self.PEER, frame, receiving=True)
        except _Illegal as e:
            raise ProtocolError(str(e)) from None
        self._conversation.move(self.PEER, frame, following)
        return frame

    def allows(self, frame: Frame) -> bool:
        """Whether this side may send `frame` now."""
        try:
            self._conversation.check(self.ROLE, frame, receiving=False)
        except _Illegal:
            return False
        return True

    def _send(self, frame: Frame) -> bytes:
        try:
            following = self._conversation.check(self.ROLE, frame, receiving=False)
        except _Illegal as e:
            raise LocalProtocolError(f"{self.ROLE.value} side: {e}") from None
        data = encode(frame)
        self._conversation.move(self.ROLE, frame, following)
        return data

    def close(self) -> None:
        """The connection is gone: nothing more is said or read (rule 4)."""
        self._conversation.close()


class ServiceConversation(_End):
    """muxd's end of one connection."""

    ROLE, PEER = Role.SERVICE, Role.CLIENT

    def next_event(self) -> ClientFrame | None:
        """The client's next frame; None until one is complete, and for good once the
        conversation is over; ProtocolError for bytes that are not one it may send now."""
        if self.is_over:
            return None
        frame = self._next_frame()
        assert frame is None or isinstance(frame, ClientFrame)  # checked: a client's kind
        return frame

    def send(self, frame: ServiceFrame) -> bytes:
        return self._send(frame)

    def send_output(self, data: bytes) -> bytes:
        """OUTPUT without building a frame: the path every byte a pane prints takes."""
        if self._conversation.service is not State.ATTACHED:
            raise LocalProtocolError(f"OUTPUT, but {self.service_state.value}")
        return HEADER.pack(FrameType.OUTPUT, len(data)) + data

    def send_repaint(self, screen: bytes) -> bytes:
        """A REPAINT of `screen`; what does not fit one frame follows as OUTPUT, which a
        client writes to its terminal just the same (docs/attach-protocol.md#conversation)."""
        frames = [self.send(Repaint(screen[:MAX_PAYLOAD]))]
        for start in range(MAX_PAYLOAD, len(screen), MAX_PAYLOAD):
            frames.append(self.send(Output(screen[start : start + MAX_PAYLOAD])))
        return b"".join(frames)


class ClientConversation(_End):
    """A client's end of one connection."""

    ROLE, PEER = Role.CLIENT, Role.SERVICE

    def next_event(self) -> ServiceFrame | None:
        """The service's next frame; None until one is complete; ProtocolError for bytes
        that are not one it may send now."""
        frame = self._next_frame()
        assert frame is None or isinstance(frame, ServiceFrame)  # checked: a service's kind
        return frame

    def send(self, frame: ClientFrame) -> bytes:
        return self._send(frame)
