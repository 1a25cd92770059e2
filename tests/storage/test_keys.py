"""The key layout: every builder, and every way a component is refused."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillweave.errors import InvalidKeyError, StorageError
from skillweave.storage import keys

EXEC_ID = "agent-run-7/activity-3"
FULL = hashlib.sha256(EXEC_ID.encode()).hexdigest()
DIGEST = FULL[:32]

BAD_NAMES = ["", ".", "..", "a/b", "a\\b", "a\x00b", "/abs", "with space", "ü", "a" * 256]
BAD_PATHS = [
    "",
    "/etc/passwd",
    "../escape",
    "a/../../b",
    "a/./b",
    ".",
    "a//b",
    "a/",
    "a\\b",
    "..\\x",
    "a\x00b",
    "with space.txt",
]


def test_skill_package_key() -> None:
    assert keys.skill_package_key("pdf-tools", "ab12" * 16) == f"skills/pdf-tools/{'ab12' * 16}.zip"


def test_run_prefix() -> None:
    assert keys.run_prefix("run-1.A_b") == "runs/run-1.A_b/"


def test_run_input_key() -> None:
    assert keys.run_input_key("r1", "data.csv") == "runs/r1/inputs/data.csv"
    assert keys.run_input_key("r1", "dir/sub/x.json") == "runs/r1/inputs/dir/sub/x.json"


def test_execution_output_key_hashes_the_execution_id() -> None:
    assert keys.execution_digest(EXEC_ID) == DIGEST
    assert len(DIGEST) == 32
    assert (
        keys.execution_output_key("r1", EXEC_ID, "out/report.md")
        == f"runs/r1/executions/{DIGEST}/outputs/out/report.md"
    )


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_execution_log_key(stream: keys.LogStream) -> None:
    expected = f"runs/r1/executions/{DIGEST}/{stream}.txt"
    assert keys.execution_log_key("r1", EXEC_ID, stream) == expected


def test_execution_log_key_rejects_other_streams() -> None:
    with pytest.raises(InvalidKeyError, match="stdout"):
        keys.execution_log_key("r1", EXEC_ID, "stdin")  # type: ignore[arg-type]


def test_execution_result_and_claim_keys() -> None:
    assert keys.execution_result_key(EXEC_ID) == f"executions/{FULL}.json"
    assert keys.execution_claim_key(EXEC_ID) == f"executions/{FULL}.claim"
    assert keys.execution_result_key("other") != keys.execution_result_key(EXEC_ID)


@pytest.mark.parametrize("bad", ["", "a\x00b"])
def test_execution_ids_must_be_non_empty_and_nul_free(bad: str) -> None:
    for build in (
        keys.execution_result_key,
        keys.execution_claim_key,
        keys.execution_digest,
    ):
        with pytest.raises(InvalidKeyError):
            build(bad)
    with pytest.raises(InvalidKeyError):
        keys.execution_output_key("r1", bad, "x")


def test_transcript_key_is_zero_padded_and_sorts() -> None:
    assert keys.transcript_key("r1", 0) == "runs/r1/transcript/00000000.json"
    assert keys.transcript_key("r1", 42) == "runs/r1/transcript/00000042.json"
    assert keys.transcript_key("r1", keys.MAX_TRANSCRIPT_SEQ).endswith("99999999.json")
    built = [keys.transcript_key("r1", n) for n in (10, 9, 100, 1)]
    assert sorted(built) == [keys.transcript_key("r1", n) for n in (1, 9, 10, 100)]


@pytest.mark.parametrize("seq", [-1, keys.MAX_TRANSCRIPT_SEQ + 1, True, 1.0, "1"])
def test_transcript_key_rejects_bad_sequence_numbers(seq: object) -> None:
    with pytest.raises(InvalidKeyError):
        keys.transcript_key("r1", seq)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_run_ids_are_validated(bad: str) -> None:
    with pytest.raises(InvalidKeyError):
        keys.run_prefix(bad)
    with pytest.raises(InvalidKeyError):
        keys.run_input_key(bad, "x")
    with pytest.raises(InvalidKeyError):
        keys.transcript_key(bad, 1)
    with pytest.raises(InvalidKeyError):
        keys.execution_log_key(bad, EXEC_ID, "stdout")


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_skill_names_and_versions_are_validated(bad: str) -> None:
    with pytest.raises(InvalidKeyError):
        keys.skill_package_key(bad, "v1")
    with pytest.raises(InvalidKeyError):
        keys.skill_package_key("ok", bad)


@pytest.mark.parametrize("bad", BAD_PATHS)
def test_relative_paths_are_validated(bad: str) -> None:
    with pytest.raises(InvalidKeyError):
        keys.run_input_key("r1", bad)


# Output names are whatever the script's file system accepted: only what no file can be named
# (or no key can carry) is refused.
BAD_OUTPUT_PATHS = ["", "/etc/passwd", "../escape", "a/../../b", "a/./b", ".", "a//b", "a/",
                    "a\x00b", "x" * 300, "é" * 100, "\ud800.txt"]  # fmt: skip


@pytest.mark.parametrize("bad", BAD_OUTPUT_PATHS)
def test_output_paths_that_cannot_be_keys_are_refused(bad: str) -> None:
    with pytest.raises(InvalidKeyError):
        keys.execution_output_key("r1", EXEC_ID, bad)


@pytest.mark.parametrize(
    "name",
    ["with space.txt", "résumé.txt", "a\\b", ".hidden", "-dash", "~tilde", "x%41y", "日本.md"],
)
def test_any_file_name_is_an_output_key_that_round_trips(name: str) -> None:
    key = keys.execution_output_key("r1", EXEC_ID, f"sub dir/{name}")
    assert keys.validate_key(key) == key
    encoded = key.split("/outputs/", 1)[1]
    assert all(ch.isascii() and (ch.isalnum() or ch in "._-~/") for ch in encoded)
    assert keys.decode_output_path(encoded) == f"sub dir/{name}"


@given(
    st.lists(
        st.text(min_size=1, max_size=40).filter(lambda s: "/" not in s), min_size=1, max_size=3
    )
)
def test_output_names_round_trip(parts: list[str]) -> None:
    path = "/".join(parts)
    if any(p in {".", ".."} or _has_control(p) or _not_utf8(p) for p in parts):
        with pytest.raises(InvalidKeyError):
            keys.execution_output_key("r1", EXEC_ID, path)
        return
    encoded = keys.encode_output_path(path)
    if any(len(segment) > 255 for segment in encoded.split("/")):
        with pytest.raises(InvalidKeyError):
            keys.execution_output_key("r1", EXEC_ID, path)
        return
    key = keys.execution_output_key("r1", EXEC_ID, path)
    assert keys.decode_output_path(key.split("/outputs/", 1)[1]) == path


def _has_control(text: str) -> bool:
    return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text)


@pytest.mark.parametrize("name", ["a\nb.txt", "tab\there", "esc\x1b[31m", "del\x7f", "cr\r"])
def test_an_output_name_with_a_control_character_has_no_key(name: str) -> None:
    with pytest.raises(InvalidKeyError, match="control character"):
        keys.check_output_path(f"sub/{name}")
    with pytest.raises(InvalidKeyError, match="control character"):
        keys.execution_output_key("r1", EXEC_ID, name)


def test_check_output_path_is_the_encoding_a_key_keeps() -> None:
    assert keys.check_output_path("sub dir/ü.txt") == "sub~20dir/~C3~BC.txt"
    with pytest.raises(InvalidKeyError, match="255"):
        keys.check_output_path("é" * 50)


def _not_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def test_invalid_key_error_names_the_reason() -> None:
    with pytest.raises(InvalidKeyError) as caught:
        keys.run_input_key("r1", "../../etc/passwd")
    assert caught.value.reason == "the path has a '..' segment"
    assert caught.value.key == "../../etc/passwd"
    assert isinstance(caught.value, StorageError)
    with pytest.raises(InvalidKeyError, match="backslash"):
        keys.run_input_key("r1", "a\\b")
    with pytest.raises(InvalidKeyError, match="absolute"):
        keys.run_input_key("r1", "/a")
    with pytest.raises(InvalidKeyError, match="NUL"):
        keys.run_input_key("r1", "a\x00")
    with pytest.raises(InvalidKeyError, match="empty"):
        keys.run_input_key("r1", "a//b")


@pytest.mark.parametrize(
    "key", ["a", "runs/r1/inputs/x.csv", "skills/n/v.zip", "odd name/ü.txt", "a" * 1024]
)
def test_validate_key_accepts(key: str) -> None:
    assert keys.validate_key(key) == key


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("", "empty"),
        ("/a", "absolute"),
        ("a//b", "empty segment"),
        ("a/", "empty segment"),
        ("a/../b", "'..'"),
        ("./a", "'.'"),
        ("a\\b", "backslash"),
        ("a\x00b", "NUL"),
        ("a\nb", "control"),
        ("a" * 1025, "1024"),
        ("é" * 513, "1024"),
    ],
)
def test_validate_key_rejects(key: str, reason: str) -> None:
    with pytest.raises(InvalidKeyError, match=reason):
        keys.validate_key(key)


@pytest.mark.parametrize("prefix", ["", "runs/", "runs/a", "runs/a/", "a/b/c/"])
def test_validate_prefix_accepts(prefix: str) -> None:
    assert keys.validate_prefix(prefix) == prefix


@pytest.mark.parametrize("prefix", ["/", "/runs/", "runs//", "../", "runs/../x/", "a\\"])
def test_validate_prefix_rejects(prefix: str) -> None:
    with pytest.raises(InvalidKeyError):
        keys.validate_prefix(prefix)


def test_belongs_to_run() -> None:
    assert keys.belongs_to_run("runs/ab/inputs/x", "ab")
    assert keys.belongs_to_run(keys.execution_output_key("ab", EXEC_ID, "o.txt"), "ab")
    assert keys.belongs_to_run(keys.transcript_key("ab", 3), "ab")


@pytest.mark.parametrize(
    "key",
    [
        "runs/abc/inputs/x",  # a longer run id sharing the prefix
        "runs/abc",
        "runs/ab",
        "runs/ab/",  # the prefix itself is no artifact
        "runs/a/inputs/x",
        "skills/ab/v.zip",
        "xruns/ab/inputs/x",
        "runs/ab/../cd/inputs/x",  # traversal out of the run
        "runs/ab//x",
        "runs/ab/a\\b",
        "/runs/ab/x",
    ],
)
def test_belongs_to_run_refuses(key: str) -> None:
    assert not keys.belongs_to_run(key, "ab")


def test_belongs_to_run_validates_the_run_id() -> None:
    with pytest.raises(InvalidKeyError):
        keys.belongs_to_run("runs/../x", "..")
