"""A skill's eval files read from the version evaluated: the library's folder while it has that
version, else the version's package in the store; the path checked before any read; a
skill without evals told what to write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillweave.errors import ResourceNotFoundError, ResourcePathError, ResourceTooLargeError
from skillweave.evals.sources import read_skill_file, read_suite
from skillweave.evals.suite import EvalSuiteError
from skillweave.skills import SkillRegistry, SkillScanner, SkillVersionError
from skillweave.skills.package import archive_version, build_package
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

SUITE = {
    "skill_name": "converter",
    "evals": [{"id": 1, "prompt": "Convert 5 km", "expectations": ["3.107 miles"]}],
}


def library(root: Path, suite: dict | None = SUITE, **files: str) -> SkillRegistry:
    extra = {"evals/evals.json": json.dumps(suite)} if suite is not None else {}
    write_skill(root / "converter", files={**extra, **files})
    return SkillRegistry.from_scan(SkillScanner([root]).scan())


async def stored_version(store: LocalArtifactStore, folder: Path) -> str:
    package = build_package(folder)
    _, version = archive_version(package)
    await store.put_bytes(keys.skill_package_key("converter", version), package)
    return version


async def test_the_librarys_version_is_read_from_its_folder(tmp_path: Path) -> None:
    registry = library(tmp_path / "lib", **{"evals/files/a.csv": "km\n5\n"})
    store = LocalArtifactStore(tmp_path / "store")
    version = registry.get("converter").version

    data = await read_skill_file(registry, store, "converter", version, "evals/files/a.csv")

    assert data == b"km\n5\n"
    suite, triggers = await read_suite(registry, store, "converter", version)
    assert [case.prompt for case in suite.evals] == ["Convert 5 km"]
    assert triggers == ()


async def test_another_version_is_read_from_its_stored_package(tmp_path: Path) -> None:
    old = write_skill(
        tmp_path / "old" / "converter",
        files={
            "evals/evals.json": json.dumps({**SUITE, "evals": [{**SUITE["evals"][0], "id": 7}]}),
            "evals/triggers.json": json.dumps([{"query": "bake bread", "should_trigger": False}]),
        },
    )
    store = LocalArtifactStore(tmp_path / "store")
    version = await stored_version(store, old)
    registry = library(tmp_path / "lib")
    assert registry.get("converter").version != version

    suite, triggers = await read_suite(registry, store, "converter", version)

    assert [case.id for case in suite.evals] == ["7"]
    assert [case.query for case in triggers] == ["bake bread"]
    with pytest.raises(ResourceNotFoundError):
        await read_skill_file(registry, store, "converter", version, "evals/files/none.csv")


async def test_a_version_no_one_has_is_one_clear_error(tmp_path: Path) -> None:
    registry = library(tmp_path / "lib")
    store = LocalArtifactStore(tmp_path / "store")
    with pytest.raises(SkillVersionError, match="has no stored version"):
        await read_skill_file(registry, store, "converter", "b" * 64, "evals/evals.json")
    with pytest.raises(SkillVersionError, match="is not a valid version"):
        await read_skill_file(registry, store, "converter", "../x", "evals/evals.json")


@pytest.mark.parametrize(
    "path", ["../secrets", "/etc/passwd", "evals/../../x", "evals//a", "a\\b", "", "evals/\0"]
)
async def test_a_path_that_could_escape_is_refused_before_any_read(
    tmp_path: Path, path: str
) -> None:
    registry = library(tmp_path / "lib")
    store = LocalArtifactStore(tmp_path / "store")
    with pytest.raises(ResourcePathError):
        await read_skill_file(registry, store, "converter", "c" * 64, path)


async def test_a_symlink_out_of_the_skill_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("secret")
    registry = library(tmp_path / "lib")
    link = tmp_path / "lib" / "converter" / "evals" / "link.txt"
    link.symlink_to(tmp_path / "secret.txt")
    store = LocalArtifactStore(tmp_path / "store")
    version = registry.get("converter").version
    with pytest.raises(ResourcePathError, match="outside the skill folder"):
        await read_skill_file(registry, store, "converter", version, "evals/link.txt")


async def test_a_file_over_the_cap_is_refused_from_a_folder_and_a_package(tmp_path: Path) -> None:
    registry = library(tmp_path / "lib", **{"evals/files/big.txt": "x" * 100})
    store = LocalArtifactStore(tmp_path / "store")
    version = registry.get("converter").version
    with pytest.raises(ResourceTooLargeError):
        await read_skill_file(
            registry, store, "converter", version, "evals/files/big.txt", max_bytes=10
        )
    stored = await stored_version(store, tmp_path / "lib" / "converter")
    empty = SkillRegistry.from_scan(SkillScanner([tmp_path / "nothing"]).scan())
    with pytest.raises(ResourceTooLargeError):
        await read_skill_file(
            empty, store, "converter", stored, "evals/files/big.txt", max_bytes=10
        )
    data = await read_skill_file(empty, store, "converter", stored, "evals/files/big.txt")
    assert data == b"x" * 100


async def test_a_skill_without_evals_is_told_what_to_write(tmp_path: Path) -> None:
    registry = library(tmp_path / "lib", suite=None)
    store = LocalArtifactStore(tmp_path / "store")
    version = registry.get("converter").version
    with pytest.raises(EvalSuiteError) as missing:
        await read_suite(registry, store, "converter", version)
    assert str(missing.value) == "converter has no evals/evals.json: write one (docs/EVALS.md)"


async def test_a_broken_suite_names_the_file(tmp_path: Path) -> None:
    registry = library(tmp_path / "lib", **{"evals/triggers.json": '{"nope": 1}'})
    store = LocalArtifactStore(tmp_path / "store")
    version = registry.get("converter").version
    with pytest.raises(EvalSuiteError, match=r"^converter/evals/triggers.json: a list"):
        await read_suite(registry, store, "converter", version)
