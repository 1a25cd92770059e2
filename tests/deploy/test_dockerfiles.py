"""deploy/docker: the three images are pinned, non-root, cache-free, and fit the manifests.

No Docker engine is needed: the Dockerfiles are read as text (continuation lines joined,
comments dropped) and checked instruction by instruction.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest
import yaml

from tests.deploy.support import BUILT_IN_TEMPLATE, DEPLOY, REPO

DOCKER: Final = DEPLOY / "docker"
IMAGES: Final = {
    "worker.Dockerfile": "skillweave/worker",
    "manager.Dockerfile": "skillweave/manager",
    "executor.Dockerfile": "skillweave/sandbox-executor",
}
NON_ROOT_UID: Final = "10001"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str


@dataclass(frozen=True)
class Stage:
    image: str
    alias: str | None
    instructions: tuple[Instruction, ...]

    def all(self, keyword: str) -> list[str]:
        return [i.args for i in self.instructions if i.keyword == keyword]


def instructions(path: Path) -> list[Instruction]:
    """The Dockerfile's instructions, continuation lines joined and comments dropped."""
    out: list[Instruction] = []
    pending = ""
    for raw in path.read_text("utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, args = (pending + line).partition(" ")
        out.append(Instruction(keyword.upper(), args.strip()))
        pending = ""
    assert not pending, f"{path.name}: ends in a continuation line"
    return out


def stages(path: Path) -> list[Stage]:
    found: list[Stage] = []
    current: list[Instruction] = []
    header: tuple[str, str | None] | None = None
    for instruction in instructions(path):
        if instruction.keyword == "FROM":
            if header is not None:
                found.append(Stage(*header, tuple(current)))
            words = [w for w in instruction.args.split() if not w.startswith("--")]
            alias = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            header, current = (words[0], alias), []
        else:
            current.append(instruction)
    assert header is not None, f"{path.name}: no FROM"
    found.append(Stage(*header, tuple(current)))
    return found


def pinned(image: str) -> bool:
    """A version tag with a digit (never `latest`), or a digest."""
    if "@sha256:" in image:
        return True
    name, _, tag = image.rpartition(":")
    return bool(name) and "/" not in tag and tag != "latest" and re.search(r"\d", tag) is not None


@pytest.fixture(params=sorted(IMAGES))
def dockerfile(request: pytest.FixtureRequest) -> Path:
    return DOCKER / request.param


def test_every_base_image_is_pinned(dockerfile: Path) -> None:
    found = stages(dockerfile)
    aliases = {stage.alias for stage in found if stage.alias}
    external = [stage.image for stage in found if stage.image not in aliases]
    assert external
    assert [image for image in external if not pinned(image)] == []


def test_the_final_stage_runs_as_a_numeric_non_root_user(dockerfile: Path) -> None:
    users = stages(dockerfile)[-1].all("USER")
    assert users, "the final stage sets no USER"
    uid, _, gid = users[-1].partition(":")
    assert uid == NON_ROOT_UID
    assert gid in {"", NON_ROOT_UID}


def test_installs_leave_no_caches(dockerfile: Path) -> None:
    runs = [run for stage in stages(dockerfile) for run in stage.all("RUN")]
    commands = [part.strip() for run in runs for part in re.split(r"&&|;|\|\|", run)]
    pip = [command for command in commands if re.search(r"\bpip3? install\b", command)]
    assert pip, "the image installs skillweave with pip"
    assert [command for command in pip if "--no-cache-dir" not in command] == []
    for run in runs:
        if re.search(r"\bapt-get install\b", run):
            assert "--no-install-recommends" in run, run
            assert "rm -rf /var/lib/apt/lists/*" in run, run


def test_images_install_what_the_lock_pins(dockerfile: Path) -> None:
    """Every package from the hashed lock; skillweave itself with nothing resolved anew."""
    runs = [run for stage in stages(dockerfile) for run in stage.all("RUN")]
    commands = [part.strip() for run in runs for part in re.split(r"&&|;|\|\|", run)]
    pip = [command for command in commands if re.search(r"\bpip3? install\b", command)]
    locked = [c for c in pip if "--require-hashes -r requirements/lock.txt" in c]
    assert len(locked) == 1, pip
    rest = [c for c in pip if c not in locked]
    assert rest, "the image installs skillweave itself"
    assert all("--no-deps" in command for command in rest), rest
    assert pip.index(locked[0]) < pip.index(rest[0])


def test_python_writes_no_bytecode(dockerfile: Path) -> None:
    env = " ".join(stages(dockerfile)[-1].all("ENV"))
    assert re.search(r"\bPYTHONDONTWRITEBYTECODE=1\b", env)


def test_the_build_context_holds_what_the_images_copy(dockerfile: Path) -> None:
    ignore = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text("utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert ignore[0] == "*", "the context is an allow-list"
    allowed = {line.removeprefix("!").rstrip("/") for line in ignore if line.startswith("!")}
    copies = [
        args
        for stage in stages(dockerfile)
        for args in stage.all("COPY")
        if not args.startswith("--from")
    ]
    assert copies
    for args in copies:
        for source in shlex.split(args)[:-1]:
            assert source.rstrip("/") in allowed, source
            assert (REPO / source).exists(), source


def test_images_the_manifests_name_are_the_ones_built_here() -> None:
    built: dict[str, str] = {}
    for name, image in IMAGES.items():
        header = (DOCKER / name).read_text("utf-8")
        tag = re.search(rf"docker build -f deploy/docker/{re.escape(name)} -t (\S+) \.", header)
        assert tag is not None, f"{name}: its header shows no build command"
        assert tag.group(1).startswith(f"{image}:"), name
        built[image] = tag.group(1)
    named = set(re.findall(r"image: (skillweave/\S+)", _all_k8s_text()))
    assert named
    assert named <= set(built.values())


def _all_k8s_text() -> str:
    return "\n".join(p.read_text("utf-8") for p in sorted((DEPLOY / "k8s").rglob("*.yaml")))


def test_the_executor_image_has_the_script_interpreters_and_the_templates_command() -> None:
    final = stages(DOCKER / "executor.Dockerfile")[-1]
    assert final.image.startswith("python:3.11"), "python3 comes from the base image"
    node_stages = {
        stage.alias for stage in stages(DOCKER / "executor.Dockerfile") if "node:" in stage.image
    }
    copies_node = any(
        copy.startswith(f"--from={alias} ") and copy.endswith(" /usr/local/bin/node")
        for alias in node_stages
        for copy in final.all("COPY")
    )
    installs_node = any(re.search(r"apt-get install .*\bnodejs\b", r) for r in final.all("RUN"))
    assert copies_node or installs_node, "no node in the executor image"
    entrypoint = final.all("ENTRYPOINT")[-1]
    assert entrypoint.endswith('"-m", "sandbox_executor"]')
    template = yaml.safe_load(BUILT_IN_TEMPLATE.read_text("utf-8"))
    assert yaml.safe_load(final.all("CMD")[-1]) == template["spec"]["containers"][0]["args"]
    workdir = final.all("WORKDIR")[-1]
    assert workdir == "/workspace"


def test_the_manager_image_can_run_node_scripts_on_its_local_backend() -> None:
    final = stages(DOCKER / "manager.Dockerfile")[-1]
    assert any(c.endswith("/usr/local/bin/node") for c in final.all("COPY"))
