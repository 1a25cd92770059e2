"""Masking a run's result: which fields, the inline cut, the warning about values too short
to mask, and which stored keys are logs (masked when handed out) rather than output files."""

from __future__ import annotations

import logging

import pytest

from skillweave.sandbox.masking import is_run_log, mask_result, output_masker, unmasked_secrets
from skillweave.sandbox.models import ExecutionResult
from skillweave.storage import keys

SECRETS = {
    "pdf": {"PDF_KEY": "pdf-key-0123456789", "PIN": "12"},
    "mail": {"SMTP_PASSWORD": "smtp-pass-abcdef"},
}


def _result(**fields: object) -> ExecutionResult:
    base: dict[str, object] = {
        "execution_id": "e",
        "run_id": "r",
        "skill": "mail",
        "version": "0" * 64,
        "script": "scripts/x.py",
        "status": "failed",
    }
    return ExecutionResult.model_validate(base | fields)


def test_stdout_stderr_and_error_are_masked_with_every_skills_secrets() -> None:
    masker = output_masker(SECRETS)
    result = _result(
        stdout="pdf-key-0123456789 and smtp-pass-abcdef",
        stderr="Traceback: bad password 'smtp-pass-abcdef'",
        error="executor: smtp-pass-abcdef",
    )
    masked = mask_result(result, masker)
    assert masked.stdout == "*** and ***"  # another skill's value too
    assert masked.stderr == "Traceback: bad password '***'"
    assert masked.error == "executor: ***"
    assert mask_result(_result(), masker) == _result()


def test_a_stream_cut_at_the_inline_cap_loses_its_partial_secret_too() -> None:
    masker = output_masker(SECRETS)
    result = _result(stdout="ok smtp-pass", stdout_truncated=True, stderr="ok smtp-pass")
    masked = mask_result(result, masker)
    assert masked.stdout == "ok ***"
    assert masked.stderr == "ok smtp-pass"  # not cut: a whole text is taken as it is


def test_values_too_short_to_mask_are_named_in_a_warning_never_shown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert unmasked_secrets(SECRETS) == [("pdf", "PIN")]
    log = logging.getLogger("skillweave.test.masking")
    with caplog.at_level(logging.WARNING, logger=log.name):
        masker = output_masker(SECRETS, warn=log)
    [record] = caplog.records
    assert record.getMessage().startswith("skill pdf: secret PIN ")
    assert "12" not in record.getMessage()
    assert masker.mask_text("PIN 12") == "PIN 12"


def test_run_logs_are_told_from_output_files() -> None:
    assert is_run_log(keys.execution_log_key("run-1", "wf/act", "stdout"))
    assert is_run_log(keys.execution_log_key("run-1", "wf/act", "stderr"))
    assert not is_run_log(keys.execution_output_key("run-1", "wf/act", "stdout.txt"))
    assert not is_run_log(keys.execution_output_key("run-1", "wf/act", "logs/stderr.txt"))
    assert not is_run_log(keys.run_input_key("run-1", "stdout.txt"))
