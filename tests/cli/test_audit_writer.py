"""``cli.audit_writer``: the one place the CLI names its user in the audit log and turns a
record it cannot write into one line and exit 1; every audited command uses it (no CLI module
keeps a copy of either rule)."""

from __future__ import annotations

import getpass
import io
import socket
from pathlib import Path

import pytest
import typer
from rich.console import Console

import skillweave.cli
from skillweave.cli import audit_writer, exits
from skillweave.config import Settings
from skillweave.errors import AuditLogError
from skillweave.storage.local import LocalArtifactStore

CLI = Path(skillweave.cli.__file__).parent
_RULES = ("getpass.getuser()", "audit_refusal(")


@pytest.mark.parametrize("module", sorted(CLI.glob("*.py")), ids=lambda path: path.name)
def test_no_cli_module_keeps_its_own_copy_of_the_audit_rules(module: Path) -> None:
    if module.name == "audit_writer.py":
        return
    text = module.read_text(encoding="utf-8")
    copied = [rule for rule in _RULES if rule in text]
    assert not copied, f"{module.name} repeats {copied}: use skillweave.cli.audit_writer"


async def test_the_cli_writes_as_its_user_at_its_host(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, audit={"enabled": True})
    log = audit_writer.cli_audit(settings, LocalArtifactStore(tmp_path))
    try:
        await log.record("remove", skill="pdf", version="a" * 64)
    finally:
        await log.aclose()
    [record] = [record async for record in log.read(skill="pdf")]
    assert record.actor == f"cli:{getpass.getuser()}@{socket.gethostname()}"


def test_a_record_that_cannot_be_written_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(exits, "err", Console(file=buffer, color_system=None, width=300))
    with (
        pytest.raises(typer.Exit) as caught,
        audit_writer.recorded("this rollback", so="nothing was rolled back"),
    ):
        raise AuditLogError("store down", code="SlowDown")
    assert caught.value.exit_code == 1
    line = buffer.getvalue().strip()
    assert "\n" not in line
    assert line.startswith("error: the audit log cannot record this rollback")
    assert "so nothing was rolled back" in line
