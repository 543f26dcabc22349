"""mux.system.dbus_property_objects: the answers of served objects to Properties calls
(as the D-Bus specification and dbus-fast's exported objects give them), their
introspection nodes and where they sit in the tree; messages only, no bus."""

from __future__ import annotations

from dbus_fast import ErrorType, Message, MessageType, Variant

from mux.system.dbus_property_objects import PropertyObjects, read_only_interface

PARENT = "/org/example/thing"
INTERFACE = "org.example.Thing"
PROPERTIES = "org.freedesktop.DBus.Properties"


def _things(values: dict[int, str]) -> PropertyObjects:
    def properties(object_id: int) -> dict[str, Variant] | None:
        value = values.get(object_id)
        if value is None:
            return None
        return {"Name": Variant("s", value), "Size": Variant("q", len(value))}

    description = read_only_interface(INTERFACE, [("Size", "q"), ("Name", "s")])
    return PropertyObjects(PARENT, description, values.keys, properties)


def _call(path: str, member: str, signature: str, *body: object) -> Message:
    return Message(
        destination=":1.1",
        sender=":1.2",
        path=path,
        interface=PROPERTIES,
        member=member,
        signature=signature,
        body=list(body),
        serial=5,
    )


def _error(reply: Message | None) -> str:
    assert reply is not None and reply.message_type is MessageType.ERROR, reply
    assert reply.reply_serial == 5
    return str(reply.error_name)


THINGS = _things({3: "three"})


def test_get_and_get_all_answer_from_the_model() -> None:
    reply = THINGS.answer(_call(f"{PARENT}/3", "Get", "ss", INTERFACE, "Name"))
    assert reply is not None and reply.message_type is MessageType.METHOD_RETURN
    assert (reply.signature, reply.body) == ("v", [Variant("s", "three")])
    every = THINGS.answer(_call(f"{PARENT}/3", "GetAll", "s", INTERFACE))
    assert every is not None
    assert every.body == [{"Name": Variant("s", "three"), "Size": Variant("q", 5)}]
    # "" is any interface; a standard interface has no properties.
    assert THINGS.answer(_call(f"{PARENT}/3", "GetAll", "s", "")).body == every.body  # type: ignore[union-attr]
    peer = THINGS.answer(_call(f"{PARENT}/3", "GetAll", "s", "org.freedesktop.DBus.Peer"))
    assert peer is not None and peer.body == [{}]


def test_each_wrong_call_gets_the_error_a_client_expects() -> None:
    path = f"{PARENT}/3"
    assert _error(
        THINGS.answer(_call(path, "Set", "ssv", INTERFACE, "Name", Variant("s", "x")))
    ) == (ErrorType.PROPERTY_READ_ONLY.value)
    assert _error(THINGS.answer(_call(path, "Get", "ss", INTERFACE, "Colour"))) == (
        ErrorType.UNKNOWN_PROPERTY.value
    )
    assert _error(THINGS.answer(_call(path, "Get", "ss", "org.example.Other", "Name"))) == (
        ErrorType.UNKNOWN_INTERFACE.value
    )
    assert _error(THINGS.answer(_call(path, "GetAll", "s", "org.example.Other"))) == (
        ErrorType.UNKNOWN_INTERFACE.value
    )
    assert _error(THINGS.answer(_call(path, "Get", "s", INTERFACE))) == (
        ErrorType.UNKNOWN_METHOD.value
    )
    assert _error(THINGS.answer(_call(f"{PARENT}/4", "Get", "ss", INTERFACE, "Name"))) == (
        ErrorType.UNKNOWN_OBJECT.value
    )


def test_only_calls_on_its_own_paths_are_its_to_answer() -> None:
    for path in (f"{PARENT}/03", f"{PARENT}/3/x", f"{PARENT}/x3", PARENT, "/org/example/3"):
        assert THINGS.answer(_call(path, "Get", "ss", INTERFACE, "Name")) is None, path
    other = _call(f"{PARENT}/3", "Get", "ss", INTERFACE, "Name")
    other.interface = "org.freedesktop.DBus.Peer"
    assert THINGS.answer(other) is None


def test_introspection_nodes_and_children() -> None:
    node = THINGS.node(f"{PARENT}/3")
    assert node is not None
    (ours,) = [i for i in node.interfaces if i.name == INTERFACE]
    assert [(p.name, p.signature) for p in ours.properties] == [("Name", "s"), ("Size", "q")]
    assert all(not p.access.writable() for p in ours.properties)
    assert THINGS.node(f"{PARENT}/4") is None
    assert THINGS.children(PARENT) == {"3"}
    assert THINGS.children("/org/example") == {"thing"}
    assert THINGS.children("/") == {"org"}
    assert THINGS.children("/org/other") == set()
    assert _things({}).children("/org/example") == set()  # nothing there: no way down
    assert THINGS.below("/") and THINGS.below("/org/example") and THINGS.below(PARENT)
    assert not THINGS.below(f"{PARENT}/3") and not THINGS.below("/org/exam")


def test_signals_and_entries() -> None:
    signal = THINGS.changed_signal(3, {"Name": Variant("s", "drei")})
    assert (signal.path, signal.interface, signal.member) == (
        f"{PARENT}/3",
        PROPERTIES,
        "PropertiesChanged",
    )
    assert signal.body == [INTERFACE, {"Name": Variant("s", "drei")}, []]
    assert THINGS.entries() == {
        f"{PARENT}/3": {INTERFACE: {"Name": Variant("s", "three"), "Size": Variant("q", 5)}}
    }
