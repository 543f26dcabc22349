"""The attach conversation (docs/attach-protocol.md#conversation): any split of any legal
conversation gives the same events on either side, what may not come now is refused
in every state, garbage only ever raises the protocol error.

Legal conversations are drawn from a model written here from the document, apart
from the module's table: the order in which the service reads the client's frames
and sends its own (the client pipelines; the service's order is the one that counts).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mux.protocol import attach as proto
from mux.protocol.attach_conversation import (
    REFUSALS,
    ClientConversation,
    LocalProtocolError,
    ServiceConversation,
    State,
)

K = proto.FrameType
E = TypeVar("E", ClientConversation, ServiceConversation)
CLIENT_KINDS = (K.HELLO, K.ATTACH, K.INPUT, K.RESIZE, K.DETACH)
REFUSAL, FINAL = "refusal", "final"  # an ERROR's two meanings
SERVICE_MOVES = (K.WELCOME, K.ATTACHED, K.OUTPUT, K.REPAINT, K.EXITED, REFUSAL, FINAL, K.DETACHED)


@dataclass
class Model:
    """What each role has said so far, as the document tells it."""

    client: str = "new"  # new, greeted, attaching, detaching, closed
    service: str = "await hello"  # await hello, ready, attached, closed
    hellos: int = 0  # not yet answered
    asked: bool = False
    opened: bool = False  # by OpenAttach
    moves: list[tuple[str, proto.Frame]] = field(default_factory=list)

    @classmethod
    def opened_attached(cls) -> Model:
        return cls(client="attaching", service="ready", asked=True, opened=True)

    def client_may_send(self) -> list[K]:
        """What the client, knowing only what it said, may send (it pipelines)."""
        return {
            "new": [K.HELLO],
            "greeted": [K.HELLO, K.RESIZE, K.ATTACH, K.DETACH],
            "attaching": [K.HELLO, K.RESIZE, K.ATTACH, K.DETACH, K.INPUT],
        }.get(self.client, [])

    def client_may(self) -> list[K]:
        """What the service, reading now, takes from the client."""
        may = {
            "new": [K.HELLO],
            "greeted": [K.HELLO, K.RESIZE, K.ATTACH, K.DETACH],
            "attaching": [K.HELLO, K.RESIZE, K.ATTACH, K.DETACH],
        }.get(self.client, [])
        if self.client == "attaching" and self.service == "attached":
            may.append(K.INPUT)
        return [] if self.service == "closed" else may

    def service_may(self) -> list[K | str]:
        may: list[K | str] = []
        if self.service == "closed":
            return may
        if self.hellos:
            may.append(K.WELCOME)
        may.append(FINAL)
        if self.service == "await hello":
            return may
        may.append(REFUSAL)
        if self.asked:
            may.append(K.ATTACHED)
        if self.client == "detaching":
            may.append(K.DETACHED)
        if self.service == "attached":
            may += [K.OUTPUT, K.REPAINT, K.EXITED]
        return may

    def client_says(self, frame: proto.Frame) -> None:
        self.moves.append(("client", frame))
        if frame.kind is K.HELLO:
            self.hellos += 1
            self.client = "greeted" if self.client == "new" else self.client
        elif frame.kind is K.ATTACH:
            self.asked = True
            self.client = "attaching"
        elif frame.kind is K.DETACH:
            self.client = "detaching"

    def service_says(self, frame: proto.Frame) -> None:
        self.moves.append(("service", frame))
        if frame.kind is K.WELCOME:
            self.hellos -= 1
            self.service = "ready" if self.service == "await hello" else self.service
        elif frame.kind is K.ATTACHED:
            self.service = "attached"
        elif frame.kind in (K.EXITED, K.DETACHED) or (
            isinstance(frame, proto.Error) and frame.code not in REFUSALS
        ):
            self.service = self.client = "closed"


u16 = st.integers(min_value=0, max_value=0xFFFF)
pane_ids = st.integers(min_value=0, max_value=(1 << 64) - 1)
payloads = st.binary(max_size=24)


def frame_of(kind: K | str) -> st.SearchStrategy[proto.Frame]:
    strategies: dict[K | str, st.SearchStrategy[proto.Frame]] = {
        K.HELLO: st.builds(proto.Hello, st.integers(min_value=0, max_value=3)),
        K.ATTACH: st.builds(proto.Attach, pane_ids),
        K.INPUT: st.builds(proto.Input, payloads),
        K.RESIZE: st.builds(proto.Resize, u16, u16),
        K.DETACH: st.just(proto.Detach()),
        K.WELCOME: st.just(proto.Welcome()),
        K.ATTACHED: st.builds(proto.Attached, pane_ids, u16, u16),
        K.OUTPUT: st.builds(proto.Output, payloads),
        K.REPAINT: st.builds(proto.Repaint, payloads),
        K.EXITED: st.builds(proto.Exited, st.integers(min_value=-128, max_value=255)),
        REFUSAL: st.builds(proto.Error, st.sampled_from(sorted(REFUSALS)), st.text(max_size=20)),
        FINAL: st.builds(
            proto.Error,
            st.sampled_from(
                ["ProtocolError", "PaneClosed", "ServiceStopping", "ServiceUpgrading", "Novel"]
            ),
            st.text(max_size=20),
        ),
        K.DETACHED: st.just(proto.Detached()),
    }
    return strategies[kind]


@st.composite
def conversations(draw: st.DrawFn, max_moves: int = 16) -> Model:
    """A legal conversation, in the order the service reads and says things."""
    model = Model.opened_attached() if draw(st.booleans()) else Model()
    for _ in range(draw(st.integers(min_value=0, max_value=max_moves))):
        options = [("client", k) for k in model.client_may()]
        options += [("service", k) for k in model.service_may()]
        if not options:
            break
        role, kind = draw(st.sampled_from(options))
        frame = draw(frame_of(kind))
        if role == "client":
            model.client_says(frame)
        else:
            model.service_says(frame)
    return model


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    bounds = zip([0, *points], [*points, len(data)], strict=True)
    return [data[a:b] for a, b in bounds if b > a]


def _ends(model: Model) -> tuple[ClientConversation, ServiceConversation]:
    return ClientConversation(model.opened), ServiceConversation(model.opened)


# -- any split -----------------------------------------------------------------------


@given(conversations(), st.lists(st.integers(min_value=0, max_value=5000)))
def test_the_service_reads_any_split_of_a_legal_conversation_the_same(
    model: Model, cuts: list[int]
) -> None:
    _, service = _ends(model)
    sent = [f for role, f in model.moves if role == "client"]
    chunks = iter(split(b"".join(proto.encode(f) for f in sent), cuts))
    read: list[proto.Frame] = []
    for role, frame in model.moves:
        if role == "service":
            assert service.send(frame) == proto.encode(frame)
            continue
        while (event := service.next_event()) is None:
            service.receive_data(next(chunks))
        read.append(event)
    assert read == sent
    assert service.next_event() is None
    assert service.service_state.name == _state_name(model.service)


@given(conversations(), st.lists(st.integers(min_value=0, max_value=5000)))
def test_a_client_reads_any_split_of_a_legal_conversation_the_same(
    model: Model, cuts: list[int]
) -> None:
    client, _ = _ends(model)
    said = [f for role, f in model.moves if role == "service"]
    for role, frame in model.moves:  # a client pipelines everything it says
        if role == "client":
            assert client.send(frame) == proto.encode(frame)
    events: list[proto.Frame] = []
    for chunk in split(b"".join(proto.encode(f) for f in said), cuts):
        client.receive_data(chunk)
        while (event := client.next_event()) is not None:
            events.append(event)
    assert events == said
    assert client.service_state.name == _state_name(model.service)


# -- what may not come now -----------------------------------------------------------


@given(conversations(), st.data())
def test_every_state_refuses_what_may_not_come_now(model: Model, data: st.DataObject) -> None:
    client, service = _replayed(model)
    for kind in CLIENT_KINDS:
        frame = data.draw(frame_of(kind))
        legal = kind in model.client_may()
        assert service_takes(service, frame) == legal, (kind, model.client, model.service)
        may_send = kind in model.client_may_send()
        assert client.allows(frame) == may_send, (kind, model.client, model.service)
        if not may_send:
            with pytest.raises(LocalProtocolError):
                client.send(frame)
    for kind in SERVICE_MOVES:
        frame = data.draw(frame_of(kind))
        legal = kind in model.service_may()
        assert service.allows(frame) == legal, (kind, model.client, model.service)
        if not legal:
            with pytest.raises(LocalProtocolError):
                service.send(frame)
        assert client_takes(client, frame) == legal, (kind, model.client, model.service)


def service_takes(service: ServiceConversation, frame: proto.Frame) -> bool:
    """Whether `frame` from the client is taken; the service itself is left as it was
    by trying on a copy of its conversation."""
    trial = _copy(service)
    trial.receive_data(proto.encode(frame))
    try:
        return trial.next_event() == frame
    except proto.ProtocolError:
        return False


def client_takes(client: ClientConversation, frame: proto.Frame) -> bool:
    trial = _copy(client)
    trial.receive_data(proto.encode(frame))
    try:
        return trial.next_event() == frame
    except proto.ProtocolError:
        return False


# -- garbage -------------------------------------------------------------------------


@given(conversations(max_moves=8), st.binary(max_size=300))
def test_garbage_only_ever_raises_the_protocol_error(model: Model, garbage: bytes) -> None:
    for end in _replayed(model):
        end.receive_data(garbage)
        try:
            while end.next_event() is not None:
                pass
        except proto.ProtocolError:
            pass


# -- the service's words, as it always said them ---------------------------------------


@pytest.mark.parametrize(
    ("frames", "message"),
    [
        ([proto.Attach(1)], "ATTACH before HELLO"),
        ([proto.Welcome()], "WELCOME before HELLO"),
        ([proto.Hello(), proto.Input(b"x")], "INPUT before ATTACH"),
        ([proto.Hello(), proto.Paste(b"x")], "PASTE before ATTACH"),
        ([proto.Hello(), proto.Welcome()], "WELCOME is sent by mux, not to it"),
        ([proto.Hello(), proto.Output(b"x")], "OUTPUT is sent by mux, not to it"),
    ],
)
def test_what_the_service_says_of_a_frame_out_of_place(
    frames: list[proto.Frame], message: str
) -> None:
    service = ServiceConversation()
    service.receive_data(b"".join(proto.encode(f) for f in frames))
    with pytest.raises(proto.ProtocolError, match=f"^{message}$"):
        while service.next_event() is not None:
            if service.service_state is State.AWAIT_HELLO:
                service.send(proto.Welcome())


def test_input_after_a_refused_attach_is_a_protocol_error() -> None:
    service = ServiceConversation()
    service.receive_data(
        b"".join(proto.encode(f) for f in (proto.Hello(), proto.Attach(9), proto.Input(b"x")))
    )
    assert service.next_event() == proto.Hello()
    service.send(proto.Welcome())
    assert service.next_event() == proto.Attach(9)
    service.send(proto.Error("NoSuchPane", "there is no pane 9"))  # the connection goes on
    with pytest.raises(proto.ProtocolError, match="INPUT before ATTACH"):
        service.next_event()


def test_nothing_is_read_once_the_service_has_ended_the_conversation() -> None:
    service = ServiceConversation(opened_attached=True)
    service.send(proto.Attached(1, 24, 80))
    service.receive_data(proto.encode(proto.Input(b"typed as it exited")))
    service.send(proto.Exited(0))
    assert service.next_event() is None
    assert service.is_over
    assert not service.allows(proto.Error("ServiceStopping", "mux is stopping"))


def test_a_repeated_hello_is_answered_again() -> None:
    service = ServiceConversation()
    service.receive_data(proto.encode(proto.Hello()) * 2)
    for _ in range(2):
        assert service.next_event() == proto.Hello()
        service.send(proto.Welcome())


def test_a_repaint_larger_than_a_frame_goes_on_in_output() -> None:
    service = ServiceConversation(opened_attached=True)
    service.send(proto.Attached(1, 24, 80))
    screen = bytes(range(256)) * (proto.MAX_PAYLOAD // 256) + b"tail"
    client = ClientConversation(opened_attached=True)
    client.receive_data(proto.encode(proto.Attached(1, 24, 80)) + service.send_repaint(screen))
    events = [client.next_event() for _ in range(3)]
    assert events == [
        proto.Attached(1, 24, 80),
        proto.Repaint(screen[: proto.MAX_PAYLOAD]),
        proto.Output(b"tail"),
    ]


def test_output_before_attached_is_a_local_error() -> None:
    service = ServiceConversation()
    with pytest.raises(LocalProtocolError):
        service.send_output(b"x")
    service.receive_data(proto.encode(proto.Hello()))
    service.next_event()
    service.send(proto.Welcome())
    with pytest.raises(LocalProtocolError):
        service.send_output(b"x")


def test_a_closed_connection_ends_the_conversation_on_either_side() -> None:
    for end in (ClientConversation(), ServiceConversation()):
        end.close()
        assert end.is_over
        assert end.client_state is end.service_state is State.CLOSED


# -- helpers ---------------------------------------------------------------------------


def _state_name(model_state: str) -> str:
    return model_state.upper().replace(" ", "_")


def _replayed(model: Model) -> tuple[ClientConversation, ServiceConversation]:
    """Both ends after `model`'s moves: the service in its order, the client having said
    everything before it reads the service's answers."""
    client, service = _ends(model)
    for role, frame in model.moves:
        if role == "client":
            client.send(frame)
            service.receive_data(proto.encode(frame))
            assert service.next_event() == frame
        else:
            service.send(frame)
    client.receive_data(b"".join(proto.encode(f) for role, f in model.moves if role == "service"))
    while client.next_event() is not None:
        pass
    return client, service


def _copy(end: E) -> E:
    return copy.deepcopy(end)
