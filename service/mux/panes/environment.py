"""The environment a pane's program starts with."""

from collections.abc import Mapping

from mux.protocol.environment import without_service_variables


def pane_environment(
    service_env: Mapping[str, str],
    overrides: Mapping[str, str],
    *,
    term: str,
    pane_id: int,
) -> dict[str, str]:
    env = without_service_variables(service_env)
    env["TERM"] = term
    env["MUX_PANE"] = str(pane_id)
    env.update(overrides)  # what the client asked for explicitly wins
    return env
