"""Where `muxctl web` may listen and the names it then answers for
(muxctl.web.listening): loopback by default, elsewhere only with TLS, a Unix socket
only with the address browsers use."""

import pytest

from muxctl.web.listening import BadListening, plan


def test_loopback_by_default() -> None:
    listening = plan(None, None, None, None, None)
    assert (listening.address, listening.port, listening.scheme) == ("127.0.0.1", 0, "http")
    assert listening.link_base(4242) == "http://127.0.0.1:4242"
    assert "localhost:4242" in listening.hosts(4242)


def test_another_address_with_tls_answers_for_it_and_the_public_name() -> None:
    listening = plan("192.0.2.7:8443", None, "c.pem", "k.pem", "https://box.example:8443")
    assert listening.tls and listening.scheme == "https"
    assert listening.hosts(8443) == {"192.0.2.7:8443", "box.example:8443"}
    assert listening.link_base(8443) == "https://box.example:8443"
    every = plan("0.0.0.0:443", None, "c.pem", "k.pem", "https://Box.Example")
    assert every.hosts(443) == {"box.example"}, "an unspecified address names no host"


def test_a_unix_socket_answers_for_the_proxys_name_only() -> None:
    listening = plan(None, "/run/user/1000/mux-web.sock", None, None, "https://mux.example/")
    assert listening.socket_path and listening.address is None
    assert listening.hosts(0) == {"mux.example"} and listening.scheme == "https"
    assert listening.link_base(0) == "https://mux.example"


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        (("0.0.0.0:8080", None, None, None, None), "needs TLS"),
        (("192.0.2.7:80", None, None, None, "http://x"), "needs TLS"),
        (("0.0.0.0:443", None, "c", "k", None), "name the one browsers use"),
        (("127.0.0.1:1", None, "c", None, None), "go together"),
        ((None, "/s", None, None, None), "needs --public-url"),
        (("127.0.0.1:1", "/s", None, None, "http://x"), "not both"),
        (("here", None, None, None, None), "give ADDR:PORT"),
        (("127.0.0.1:70000", None, None, None, None), "0 to 65535"),
        ((None, "/s", None, None, "ftp://x"), "not an http or https"),
        ((None, "/s", None, None, "https://x/mux"), "only the scheme, host and port"),
        ((None, "/s", None, None, "https://u@x"), "only the scheme, host and port"),
        (("127.0.0.1:1", None, "c", "k", "http://x"), "is https"),
    ],
)
def test_what_is_refused_says_why(arguments: tuple[str | None, ...], why: str) -> None:
    with pytest.raises(BadListening, match=why):
        plan(*arguments)
