"""The one definition of a runnable request, as the manager and the executor both apply it."""

from __future__ import annotations

import pytest

from sandbox_executor.errors import RequestRejectedError
from sandbox_executor.run_order import check_request
from skillweave.errors import ExecutionRejectedError
from skillweave.sandbox.models import ExecutorRequest
from skillweave.sandbox.validation import MAX_INPUT_BYTES, check_run, clean_script

REFUSED = [
    ({"script": "../x.py"}, "would escape"),
    ({"script": "/bin/sh"}, "absolute"),
    ({"script": "a\\b.py"}, "backslash"),
    ({"script": "a\x00.py"}, "NUL"),
    ({"script": "x" * 300}, "over 255"),
    ({"args": ["a\x00b"]}, "NUL"),
    ({"args": ["\ud800"]}, "lone surrogate"),
    ({"args": ["x" * 600_000]}, "more than 524288 bytes"),
    ({"env": {"LC_ALL": "C"}}, "reserved"),
    ({"env": {"LD_PRELOAD": "x"}}, "reserved"),
    ({"env": {"PATH": "/x"}}, "reserved"),
    ({"env": {"EXECUTOR__TOKEN": "x"}}, "reserved"),
    ({"env": {"lower": "x"}}, "not a valid name"),
    ({"env": {"OK": "\udcff"}}, "lone surrogate"),
    ({"env": {f"V{i}": "x" for i in range(300)}}, "more than 256 variables"),
]


@pytest.mark.parametrize(("change", "message"), REFUSED)
def test_the_manager_and_the_executor_refuse_the_same_requests(
    change: dict[str, object], message: str
) -> None:
    fields = {"script": "scripts/run.py", "args": [], "env": {}, **change}
    with pytest.raises(ExecutionRejectedError, match=message) as manager_side:
        check_run(**fields)  # type: ignore[arg-type]
    assert manager_side.value.status_code == 400
    with pytest.raises(RequestRejectedError, match=message):
        check_request(ExecutorRequest.model_validate(fields))


def test_ordinary_requests_pass_both() -> None:
    fields = {"script": "scripts/run.py", "args": ["--x", "ü", ""], "env": {"API_KEY": "k"}}
    assert check_run(**fields) == ("scripts", "run.py")  # type: ignore[arg-type]
    assert check_request(ExecutorRequest.model_validate(fields)) == ("scripts", "run.py")


def test_the_script_path_is_cleaned_as_a_shell_reads_it() -> None:
    assert clean_script("./scripts//run.py") == "scripts/run.py"
    with pytest.raises(ExecutionRejectedError):
        clean_script(".")


def test_inputs_are_paths_once_each_and_bounded_together() -> None:
    check_run(script="a.py", args=[], env={}, inputs=["a.csv", "dir/b.csv"])
    with pytest.raises(ExecutionRejectedError, match=r"both be inputs/a\.csv"):
        check_run(script="a.py", args=[], env={}, inputs=["a.csv", "a.csv"])
    with pytest.raises(ExecutionRejectedError, match="escape"):
        check_run(script="a.py", args=[], env={}, inputs=["../a.csv"])
    with pytest.raises(ExecutionRejectedError) as too_big:
        check_run(script="a.py", args=[], env={}, input_bytes=MAX_INPUT_BYTES + 1)
    assert too_big.value.status_code == 413
