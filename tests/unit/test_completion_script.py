"""muxctl completion's scripts, as shtab generates them from the parser (also with
the lowest shtab pyproject.toml allows, in scripts/test-minimum-versions): every
verb is in each, and the pane-id arguments ask the service."""

from __future__ import annotations

import pytest

from muxctl.commands import all_commands
from muxctl.commands.completion import SHELLS, script


@pytest.mark.parametrize("shell", SHELLS)
def test_each_script_knows_every_verb_and_asks_for_pane_ids(shell: str) -> None:
    text = script(shell)
    for command in all_commands():
        assert command.name in text, command.name
    assert "command muxctl --no-start ls" in text
    assert "command muxctl --no-start hosts" in text
