"""Per-skill secrets follow the skill name's owner: looked up by the folded name, and two
configured names for one skill are a configuration error, not a guess."""

from __future__ import annotations

import pytest

from mcp_manager.executions import _secrets_by_name
from skillweave.errors import ConfigError
from skillweave.skills.names import name_key


def test_secrets_are_found_by_the_folded_name() -> None:
    by_key = _secrets_by_name({"CSV-Cleaner": {"KEY": "value-1"}, "other": {"KEY": "v2"}})
    assert by_key[name_key("csv-cleaner")] == {"KEY": "value-1"}
    assert by_key[name_key("ＣＳＶ-cleaner")] == {"KEY": "value-1"}
    assert by_key[name_key("other")] == {"KEY": "v2"}


def test_two_spellings_of_one_skill_are_refused() -> None:
    with pytest.raises(ConfigError, match="names one skill twice"):
        _secrets_by_name({"csv-cleaner": {"A": "1111"}, "CSV-Cleaner": {"B": "2222"}})
