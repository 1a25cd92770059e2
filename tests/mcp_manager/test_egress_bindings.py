"""Network approvals and credential bindings follow the one canonical name
(``skillweave.sandbox.bindings``), as secrets do: keys that are not canonical stop the manager's
egress in one line, and ``PROBE-A`` or ``ｐｒｏｂｅ-ａ`` get nothing approved or bound for
``probe-a``, whether in the settings or approved over the API."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_manager.egress import EgressService
from skillweave.config import EgressApproval, EgressSettings
from skillweave.errors import ConfigError
from skillweave.sandbox.approvals import NetworkApprovals
from skillweave.storage.local import LocalArtifactStore

FORMS = ("PROBE-A", "Probe-A", "ｐｒｏｂｅ-ａ", "ＰＲＯＢＥ－Ａ")
"""Case and compatibility forms of ``probe-a`` (each folds to it under ``names.name_key``)."""

BINDING = {"destination": "api.example:443", "header": "Authorization", "value": "Bearer ${T}"}


def _service(tmp_path: Path, **settings: object) -> EgressService:
    return EgressService(
        EgressSettings.model_validate(settings), store=LocalArtifactStore(tmp_path)
    )


async def test_approvals_and_credentials_bind_to_exactly_the_canonical_name(
    tmp_path: Path,
) -> None:
    egress = _service(
        tmp_path,
        approvals={"probe-a": {"destinations": ["api.example:443"]}},
        credentials={"probe-a": [BINDING]},
    )
    assert await egress.approval_of("probe-a") is not None
    assert egress.bound_secrets("probe-a") == {"T"}
    for form in FORMS:
        assert await egress.approval_of(form) is None, form
        assert egress.bound_secrets(form) == set(), form


async def test_an_approval_made_over_the_api_binds_to_its_canonical_name(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    await NetworkApprovals(store).put("probe-a", EgressApproval(destinations=("api.example:443",)))
    approvals = NetworkApprovals(store)
    assert (await approvals.of("probe-a"))[1] == "api"
    for form in FORMS:
        assert await approvals.of(form) == (None, None), form


@pytest.mark.parametrize(
    ("settings", "setting"),
    [
        ({"approvals": {"PROBE-A": {"destinations": ["api.example:443"]}}}, "APPROVALS"),
        ({"credentials": {"ｐｒｏｂｅ-ａ": [BINDING]}}, "CREDENTIALS"),
    ],
)
def test_a_key_that_is_not_canonical_stops_the_egress_service(
    tmp_path: Path, settings: dict[str, object], setting: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        _service(tmp_path, **settings)
    message = str(refused.value)
    assert message.startswith(f"SANDBOX__EGRESS__{setting} names ")
    assert "write it as 'probe-a'" in message
    assert "\n" not in message
