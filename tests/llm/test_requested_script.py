"""A scripted model a request names (issue 38): on a server, only a script inside
``MODEL__SCRIPTS_DIR`` (`requested_script`), judged before any file is read, with one refusal
whatever the name and whether or not a file of that name exists; the local CLI's own names
(``any_script``) may be any file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillweave.config import ModelSettings, Settings
from skillweave.errors import ConfigError
from skillweave.llm.factory import (
    SCRIPT_NAME_MAX_CHARS,
    ModelProviders,
    requested_script,
    resolve_model,
)

SCRIPT = "model: {name}\nturns:\n  - say: answered by {name}\n"


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """(the scripts folder, a valid script outside it), with a way out planted inside."""
    scripts = tmp_path / "scripts"
    (scripts / "sub").mkdir(parents=True)
    (scripts / "inside.yaml").write_text(SCRIPT.format(name="inside"), encoding="utf-8")
    (scripts / "sub" / "deeper.yaml").write_text(SCRIPT.format(name="deeper"), encoding="utf-8")
    outside = tmp_path / "outside.yaml"
    outside.write_text(SCRIPT.format(name="outside"), encoding="utf-8")
    (scripts / "link-out.yaml").symlink_to(outside)
    (scripts / "dir-link").symlink_to(tmp_path)
    (scripts / "loop.yaml").symlink_to(scripts / "loop.yaml")
    return scripts, outside


def _refusal(name: str, folder: Path | None) -> str:
    with pytest.raises(ConfigError) as refused:
        requested_script(name, folder=folder)
    return str(refused.value)


def test_a_script_inside_the_folder_resolves_by_its_path_there(folders: tuple[Path, Path]) -> None:
    scripts, _ = folders
    inside = (scripts / "inside.yaml").resolve()
    assert requested_script("inside.yaml", folder=scripts) == inside
    assert requested_script("./sub/deeper.yaml", folder=scripts) == scripts / "sub/deeper.yaml"
    assert requested_script(str(scripts / "inside.yaml"), folder=scripts) == inside


def test_every_other_name_gets_one_refusal_whether_or_not_the_file_exists(
    folders: tuple[Path, Path],
) -> None:
    scripts, outside = folders
    hostile = [
        "/etc/passwd",  # exists, outside
        "/nonexistent",  # does not exist
        "../x",
        "../outside.yaml",  # exists, a valid script, outside
        str(outside),
        "sub/../inside.yaml",  # '..' is refused before anything is looked up
        str(scripts / ".." / "outside.yaml"),
        "link-out.yaml",  # a symlink inside that leads out
        "dir-link/outside.yaml",
        "loop.yaml",
        "nosuch.yaml",  # inside, missing
        "sub",  # a folder, not a file
        "",
        "inside.yaml\x00.txt",
        "inside.yaml\n",
        "a" * (SCRIPT_NAME_MAX_CHARS + 1),
        "x/" * 3000 + "y",
    ]
    said = {name: _refusal(name, scripts) for name in hostile}
    assert len(set(said.values())) == 1, said
    message = said["/etc/passwd"]
    assert "MODEL__SCRIPTS_DIR" in message
    assert "passwd" not in message
    assert str(scripts) not in message
    # Without a folder, every name is refused, the existing script inside one too.
    unset = {name: _refusal(name, None) for name in [*hostile, "inside.yaml"]}
    assert len(set(unset.values())) == 1
    assert "this server has none set" in unset["inside.yaml"]


def test_a_folder_that_does_not_exist_refuses_every_name(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    assert _refusal("inside.yaml", missing) == _refusal("/etc/passwd", missing)


def test_resolving_a_requested_name_is_confined_and_the_cli_s_own_is_not(
    folders: tuple[Path, Path],
) -> None:
    scripts, outside = folders
    settings = ModelSettings(scripts_dir=scripts)
    profile = resolve_model(settings, "scripted:inside.yaml")
    assert (profile.provider, profile.name) == ("scripted", str(scripts / "inside.yaml"))
    with pytest.raises(ConfigError) as refused:
        resolve_model(settings, f"scripted:{outside}")
    assert "MODEL__SCRIPTS_DIR" in str(refused.value)
    # The local CLI's user names files of their own machine.
    own = resolve_model(settings, f"scripted:{outside}", any_script=True)
    assert own.name == str(outside)
    # The operator's own default and profiles are taken as configured.
    configured = ModelSettings(
        provider="scripted",
        name=str(outside),
        profiles={"replay": {"provider": "scripted", "name": str(outside)}},
    )
    assert resolve_model(configured, None).name == str(outside)
    assert resolve_model(configured, "replay").name == str(outside)


async def test_a_workers_providers_refuse_a_run_naming_a_script_outside_the_folder(
    folders: tuple[Path, Path],
) -> None:
    """A worker resolves the model a run names (whoever started the run): the same rule."""
    scripts, outside = folders
    models = ModelProviders(ModelSettings(provider="scripted", name=str(outside)))
    try:
        for named in ("scripted:/etc/passwd", f"scripted:{outside}", "scripted:inside.yaml"):
            with pytest.raises(ConfigError, match="MODEL__SCRIPTS_DIR"):
                models.provider_for(named)
        assert models.default.name == "scripted:outside"  # its own default still opens
    finally:
        await models.aclose()
    confined = ModelProviders(ModelSettings(scripts_dir=scripts))
    own = ModelProviders(ModelSettings(), any_script=True)
    try:
        assert confined.provider_for("scripted:sub/deeper.yaml").name == "scripted:deeper"
        assert own.provider_for(f"scripted:{outside}").name == "scripted:outside"
    finally:
        await confined.aclose()
        await own.aclose()


def test_the_folder_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert Settings(_env_file=None).model.scripts_dir is None
    monkeypatch.setenv("MODEL__SCRIPTS_DIR", str(tmp_path))
    assert Settings(_env_file=None).model.scripts_dir == tmp_path
    assert os.path.isdir(tmp_path)
