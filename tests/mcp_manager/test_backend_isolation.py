"""The isolation a local executor reports in its ready file is checked as its /healthz answer
was: a mode the manager's setting does not allow, or none at all, refuses the sandbox."""

from __future__ import annotations

import pytest

from mcp_manager.backends import _checked_isolation
from skillweave.errors import SandboxStartError


def test_an_allowed_mode_is_taken() -> None:
    assert _checked_isolation("u", "bubblewrap", isolation="auto") == "bubblewrap"
    assert _checked_isolation("u", "namespaces", isolation="namespaces") == "namespaces"


@pytest.mark.parametrize(
    ("reported", "setting"),
    [("none", "bubblewrap"), ("namespaces", "bubblewrap"), ("none", "auto"), (None, "auto")],
)
def test_a_mode_the_setting_does_not_allow_or_none_is_refused(
    reported: object, setting: str
) -> None:
    with pytest.raises(SandboxStartError, match=f"SANDBOX__ISOLATION={setting} does not allow"):
        _checked_isolation("http://127.0.0.1:1", reported, isolation=setting)  # type: ignore[arg-type]
