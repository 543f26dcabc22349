from mux.panes.environment import pane_environment
from mux.protocol.environment import SERVICE_ONLY_VARIABLES


def test_service_only_variables_never_reach_a_pane() -> None:
    service_env = {name: "x" for name in SERVICE_ONLY_VARIABLES} | {"PATH": "/bin", "LANG": "C"}
    env = pane_environment(service_env, {}, term="xterm-256color", pane_id=4)
    assert not SERVICE_ONLY_VARIABLES & env.keys()
    assert env["PATH"] == "/bin"
    assert env["TERM"] == "xterm-256color"
    assert env["MUX_PANE"] == "4"
    for name in ("LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC"):
        assert name in SERVICE_ONLY_VARIABLES


def test_client_overrides_win() -> None:
    env = pane_environment(
        {"TERM": "dumb", "A": "1"}, {"A": "2", "TERM": "vt100"}, term="xterm", pane_id=1
    )
    assert env["A"] == "2"
    assert env["TERM"] == "vt100"
