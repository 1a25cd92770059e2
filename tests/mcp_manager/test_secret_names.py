"""Per-skill secrets bind to one canonical name (``skillweave.sandbox.bindings``): a configured
name that is not canonical stops the manager in one line, and a skill gets the secrets of
exactly its own name, never of a case or compatibility form of it."""

from __future__ import annotations

import pytest

from mcp_manager.executions._secrets import secrets_by_name
from skillweave.errors import ConfigError
from skillweave.sandbox.bindings import configured_for


def test_secrets_are_found_by_the_exact_canonical_name_only() -> None:
    by_name = secrets_by_name({"csv-cleaner": {"KEY": "value-1"}, "other": {"KEY": "v2"}})
    assert configured_for(by_name, "csv-cleaner") == {"KEY": "value-1"}
    assert configured_for(by_name, "other") == {"KEY": "v2"}
    for form in (
        "CSV-Cleaner",
        "CSV-CLEANER",
        "ＣＳＶ-cleaner",
        "ｃｓｖ-ｃｌｅａｎｅｒ",
        "csv_cleaner",
    ):
        assert configured_for(by_name, form) is None, form


@pytest.mark.parametrize(
    ("key", "canonical"),
    [("CSV-Cleaner", "csv-cleaner"), ("ｐｒｏｂｅ-ａ", "probe-a"), ("my_skill", "my-skill")],
)
def test_a_key_that_is_not_canonical_is_refused_in_one_line(key: str, canonical: str) -> None:
    with pytest.raises(ConfigError) as refused:
        secrets_by_name({key: {"A": "1111"}})
    message = str(refused.value)
    assert "\n" not in message
    assert "SANDBOX__SKILL_SECRETS" in message
    assert repr(key) in message
    assert f"write it as {canonical!r}" in message
