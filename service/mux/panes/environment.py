"""The environment a pane's program starts with."""

from collections.abc import Mapping

from mux.protocol.environment import ENDPOINT_VARIABLE, without_service_variables


def pane_environment(
    service_env: Mapping[str, str],
    overrides: Mapping[str, str],
    *,
    term: str,
    pane_id: int,
) -> dict[str, str]:
    env = without_service_variables(service_env)
    # Only the launch's own endpoint (set by the table) may be named here.
    env.pop(ENDPOINT_VARIABLE, None)
    env["TERM"] = term
    env["MUX_PANE"] = str(pane_id)
    env.update(overrides)  # what the client asked for explicitly wins
    return env
