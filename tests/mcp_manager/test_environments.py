"""The environment builder, hermetic: wheels and sdists written here in a find-links folder,
npm packages on a loopback registry, real pip and npm in the real build sandbox (bubblewrap),
a real local store. Nothing reaches the internet.

What it shows: environments are built from the local indexes and work (imported by python,
required by node); built once per key (a repeat, five concurrent requests, two builders on
one store, a build claimed by another manager, a lapsed claim); used prebuilt when builds are
off; and hostile specs (an unresolvable package, a setup.py writing outside its build, too
many dependencies, an environment over max_bytes, options smuggled into requirements, a build
that runs too long) fail with an error that says why, keep the build log, and leave nothing
behind: no environment stored, no build folder, no claim.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from mcp_manager.environments import ENVIRONMENT_MANIFEST, Environment, EnvironmentBuilder
from skillweave.config import EnvironmentSettings
from skillweave.errors import (
    DependencyError,
    EnvironmentBuildError,
    EnvironmentUnavailableError,
    InvalidKeyError,
)
from skillweave.skills.dependencies import DependencySpec, discover_dependencies
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.mcp_manager.environment_support import (
    SWDEMO_VALUE,
    NpmRegistry,
    bwrap_works,
    hostile_setup_py,
    python_index,
    setuptools_importable,
    unpack,
    write_sdist,
)

pytestmark = pytest.mark.timeout(60)

SANDBOX = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap cannot run a sandbox here")
NPM = pytest.mark.skipif(
    shutil.which("npm") is None or shutil.which("node") is None, reason="npm is not installed"
)
SKILL = "demo"
VERSION = "a" * 64
PYTHON_SPEC = DependencySpec(python=("swdemo-plus",))
NODE_SPEC = DependencySpec(node=(("swnode-plus", "^1.0.0"),))

MakeBuilder = Callable[..., EnvironmentBuilder]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return python_index(tmp_path_factory.mktemp("index"))


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store", fsync=False)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return tmp_path / "work"


@pytest.fixture
def make_builder(index: Path, store: LocalArtifactStore, work: Path) -> MakeBuilder:
    """A builder on the local index (and `npm_registry` when given), building under `work`."""

    def make(
        *, store_: LocalArtifactStore | None = None, claim_lease: float = 2.0, **settings: object
    ) -> EnvironmentBuilder:
        values: dict[str, object] = {
            "find_links": [str(index)],
            "no_index": True,
            "build_timeout_seconds": 45.0,
        }
        values.update(settings)
        return EnvironmentBuilder(
            EnvironmentSettings.model_validate(values),
            store_ or store,
            work_dir=work,
            claim_lease=claim_lease,
        )

    return make


@pytest.fixture
async def registry() -> AsyncIterator[NpmRegistry]:
    async with NpmRegistry() as served:
        served.add("swnode", "1.0.0", f"module.exports = {{ value: {SWDEMO_VALUE} }};\n")
        served.add(
            "swnode-plus",
            "1.0.0",
            "module.exports = { double: require('swnode').value * 2 };\n",
            dependencies={"swnode": "^1.0.0"},
        )
        yield served


def _names(builder_key: str) -> tuple[str, str]:
    """(runtime, platform) from an environment key."""
    *_, runtime, platform = builder_key.removesuffix(".tar.gz").split("/")
    return runtime, platform


async def _archive(store: LocalArtifactStore, environment: Environment) -> bytes:
    return await store.get_bytes(environment.ref)


def _members(archive: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        return {member.name: member for member in tar.getmembers()}


def _manifest(archive: bytes) -> dict[str, object]:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        extracted = tar.extractfile(ENVIRONMENT_MANIFEST)
        assert extracted is not None
        return json.loads(extracted.read())


async def _log(store: LocalArtifactStore, key: str) -> str:
    ref = await store.stat(key)
    assert ref is not None, f"no build log under {key}"
    return (await store.get_bytes(ref)).decode()


async def _assert_nothing_left(
    store: LocalArtifactStore, work: Path, failure: EnvironmentBuildError
) -> None:
    """No environment, no claim, no build folder; the log is kept where the error says."""
    assert failure.log_key is not None
    stem = failure.log_key.removesuffix(".log")
    stored = {ref.key for ref in await store.list(stem)}
    assert f"{stem}.tar.gz" not in stored
    assert not any(".claim" in key for key in stored)
    assert failure.log_key in stored
    assert not work.exists() or list(work.iterdir()) == []


# --- built from the local indexes, and working --------------------------------------------


@SANDBOX
async def test_a_python_environment_is_built_from_the_local_index_and_imports(
    make_builder: MakeBuilder, store: LocalArtifactStore, work: Path, tmp_path: Path
) -> None:
    builder = make_builder()
    started = time.perf_counter()
    environment = await builder.ensure(SKILL, VERSION, PYTHON_SPEC)
    elapsed = time.perf_counter() - started
    assert environment is not None
    assert environment.built
    assert builder.builds == 1
    runtime, platform = _names(environment.key)
    assert runtime.startswith(f"cp{sys.version_info.major}{sys.version_info.minor}")
    assert platform == sysconfig.get_platform()
    assert environment.key == keys.environment_key(SKILL, VERSION, runtime, platform)

    archive = await _archive(store, environment)
    members = _members(archive)
    assert {"python/swdemo/__init__.py", "python/swdemo_plus/__init__.py"} <= set(members)
    assert all(member.isfile() or member.isdir() for member in members.values())
    manifest = _manifest(archive)
    assert manifest["spec_digest"] == PYTHON_SPEC.digest()
    assert (manifest["runtime"], manifest["platform"]) == (runtime, platform)
    assert manifest["built_at"]

    # swdemo-plus needs swdemo: pip resolved it from the same folder; the pair imports.
    folder = unpack(archive, tmp_path / "unpacked")
    done = subprocess.run(
        [sys.executable, "-c", "import swdemo_plus; print(swdemo_plus.DOUBLE)"],
        env={"PYTHONPATH": str(folder / "python"), "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    assert done.stdout.strip() == str(2 * SWDEMO_VALUE)

    # The log of a build that succeeded is kept; nothing else is left behind.
    log = await _log(store, keys.environment_log_key(SKILL, VERSION, runtime, platform))
    assert "Successfully installed swdemo-1.0 swdemo-plus-1.0" in log
    assert list(work.iterdir()) == []
    assert [ref.key for ref in await store.list("environments/")] == sorted(
        [environment.key, keys.environment_log_key(SKILL, VERSION, runtime, platform)]
    )

    # A second request reuses it.
    again = await builder.ensure(SKILL, VERSION, PYTHON_SPEC)
    assert again == Environment(environment.key, environment.ref, built=False)
    assert builder.builds == 1
    print(f"\npython environment built in {elapsed:.2f} s")


@SANDBOX
@NPM
async def test_inferred_node_packages_are_installed_when_the_registry_has_them(
    make_builder: MakeBuilder, store: LocalArtifactStore, registry: NpmRegistry
) -> None:
    """Best effort: what a script requires and nothing declares is installed if it can be;
    a package the registry lacks is skipped and said so, not fatal."""
    script = b"const p = require('swnode-plus');\nconst q = require('nowhere-pkg');\n"
    spec = discover_dependencies({"scripts/use.js": script}, infer=True)
    assert spec.inferred == ("swnode-plus", "nowhere-pkg")
    builder = make_builder(npm_registry=registry.url)
    environment = await builder.ensure(SKILL, VERSION, spec)
    assert environment is not None
    archive = await _archive(store, environment)
    assert "node/node_modules/swnode-plus/index.js" in _members(archive)
    manifest = _manifest(archive)
    assert (manifest["inferred"], manifest["skipped"]) == (
        ["swnode-plus", "nowhere-pkg"],
        ["nowhere-pkg"],
    )


@SANDBOX
@NPM
async def test_a_node_environment_is_built_from_the_loopback_registry_and_requires(
    make_builder: MakeBuilder, store: LocalArtifactStore, registry: NpmRegistry, tmp_path: Path
) -> None:
    builder = make_builder(npm_registry=registry.url)
    started = time.perf_counter()
    environment = await builder.ensure(SKILL, VERSION, NODE_SPEC)
    elapsed = time.perf_counter() - started
    assert environment is not None
    assert environment.built
    archive = await _archive(store, environment)
    members = _members(archive)
    assert "node/node_modules/swnode-plus/index.js" in members
    assert "node/node_modules/swnode/index.js" in members  # resolved from the registry
    # Files and folders only: no node_modules/.bin symlinks (the executor unpacks no links).
    assert all(member.isfile() or member.isdir() for member in members.values())
    assert _manifest(archive)["node"] == {"swnode-plus": "^1.0.0"}
    # npm asked our registry, and only for these two packages.
    assert set(registry.requests) == {
        "/swnode-plus",
        "/swnode",
        "/-/swnode-plus-1.0.0.tgz",
        "/-/swnode-1.0.0.tgz",
    }

    folder = unpack(archive, tmp_path / "unpacked")
    done = subprocess.run(
        ["node", "-e", "console.log(require('swnode-plus').double)"],
        env={"NODE_PATH": str(folder / "node" / "node_modules"), "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert done.stdout.strip() == str(2 * SWDEMO_VALUE)
    print(f"\nnode environment built in {elapsed:.2f} s")


async def test_an_empty_spec_needs_no_environment(
    make_builder: MakeBuilder, store: LocalArtifactStore
) -> None:
    builder = make_builder()
    assert await builder.ensure(SKILL, VERSION, DependencySpec()) is None
    assert await builder.ensure(SKILL, VERSION, DependencySpec(requires_python=">=99")) is None
    assert builder.builds == 0
    assert await store.list("") == []


# --- once per key ---------------------------------------------------------------------------


@SANDBOX
async def test_concurrent_requests_for_one_key_share_one_build(
    make_builder: MakeBuilder,
) -> None:
    builder = make_builder()
    results = await asyncio.gather(*(builder.ensure(SKILL, VERSION, PYTHON_SPEC) for _ in range(5)))
    assert builder.builds == 1
    assert all(result is not None for result in results)
    assert len({result.ref for result in results if result is not None}) == 1
    assert sum(result.built for result in results if result is not None) == 1


@SANDBOX
async def test_two_builders_on_one_store_build_once(
    make_builder: MakeBuilder, store: LocalArtifactStore
) -> None:
    # Two managers: nothing shared but the store (and its claims).
    first, second = make_builder(), make_builder()
    results = await asyncio.gather(
        first.ensure(SKILL, VERSION, PYTHON_SPEC), second.ensure(SKILL, VERSION, PYTHON_SPEC)
    )
    assert first.builds + second.builds == 1
    assert results[0] is not None
    assert results[1] is not None
    assert results[0].ref == results[1].ref
    assert sorted(result.built for result in results if result is not None) == [False, True]
    assert not [ref for ref in await store.list("environments/") if ".claim" in ref.key]


@SANDBOX
async def test_a_build_claimed_by_another_manager_is_waited_for(
    make_builder: MakeBuilder, store: LocalArtifactStore
) -> None:
    # Another manager holds a live claim; its environment appears a moment later.
    runtime_builder = make_builder()
    probe = await runtime_builder.ensure(SKILL, "b" * 64, PYTHON_SPEC)  # learn the key layout
    assert probe is not None
    runtime, platform = _names(probe.key)
    claim = keys.environment_claim_key(SKILL, VERSION, runtime, platform)
    record = {"builder": "other", "attempt": 1, "at": time.time(), "renewed": time.time()}
    await store.put_bytes(claim, json.dumps(record).encode())

    waiter = make_builder()
    waiting = asyncio.create_task(waiter.ensure(SKILL, VERSION, PYTHON_SPEC))
    await asyncio.sleep(0.8)
    assert not waiting.done()  # it waits rather than building beside the other
    prebuilt = await store.get_bytes(probe.ref)
    stored = await store.put_bytes(
        keys.environment_key(SKILL, VERSION, runtime, platform), prebuilt
    )
    await store.delete(claim)
    environment = await asyncio.wait_for(waiting, timeout=10)
    assert environment == Environment(stored.key, stored, built=False)
    assert waiter.builds == 0


@SANDBOX
async def test_a_lapsed_claim_is_taken_over(
    make_builder: MakeBuilder, store: LocalArtifactStore
) -> None:
    builder = make_builder(claim_lease=1.0)
    probe = await builder.ensure(SKILL, "b" * 64, PYTHON_SPEC)
    assert probe is not None
    runtime, platform = _names(probe.key)
    claim = keys.environment_claim_key(SKILL, VERSION, runtime, platform)
    stale = time.time() - 3600  # its manager stopped an hour ago
    record = {"builder": "gone", "attempt": 1, "at": stale, "renewed": stale}
    await store.put_bytes(claim, json.dumps(record).encode())

    environment = await builder.ensure(SKILL, VERSION, PYTHON_SPEC)
    assert environment is not None
    assert environment.built
    assert builder.builds == 2
    # Its claim (.claim.2) and the lapsed one are both gone: the chain restarts at 1.
    assert not [ref for ref in await store.list("environments/") if ".claim" in ref.key]


@SANDBOX
async def test_with_builds_off_a_prebuilt_environment_is_used_and_a_missing_one_refused(
    make_builder: MakeBuilder, store: LocalArtifactStore
) -> None:
    offline = make_builder(builds=False)
    with pytest.raises(EnvironmentUnavailableError, match="builds are off"):
        await offline.ensure(SKILL, VERSION, PYTHON_SPEC)
    assert await store.list("") == []

    built = await make_builder().ensure(SKILL, VERSION, PYTHON_SPEC)  # built elsewhere
    assert built is not None
    used = await offline.ensure(SKILL, VERSION, PYTHON_SPEC)
    assert used == Environment(built.key, built.ref, built=False)
    assert offline.builds == 0


# --- hostile specs: a clear error, the log kept, nothing left behind -------------------------


@SANDBOX
async def test_a_dependency_that_does_not_resolve_is_named(
    make_builder: MakeBuilder, store: LocalArtifactStore, work: Path
) -> None:
    builder = make_builder()
    spec = DependencySpec(python=("swdemo-plus", "swmissing>=2"))
    with pytest.raises(EnvironmentBuildError) as caught:
        await builder.ensure(SKILL, VERSION, spec)
    failure = caught.value
    assert failure.package == "swmissing"
    assert "swmissing" in str(failure)
    assert "satisfies the requirement" in str(failure)
    assert failure.log_key is not None
    assert failure.log_key in str(failure)
    await _assert_nothing_left(store, work, failure)
    assert "No matching distribution found for swmissing" in await _log(store, failure.log_key)

    # A later request builds again (the index may have been down), and fails the same way.
    with pytest.raises(EnvironmentBuildError):
        await builder.ensure(SKILL, VERSION, spec)
    assert builder.builds == 2


@SANDBOX
async def test_requests_waiting_on_a_failed_build_share_its_error(
    make_builder: MakeBuilder, store: LocalArtifactStore, work: Path
) -> None:
    first, second = make_builder(), make_builder()
    spec = DependencySpec(python=("swmissing",))
    results = await asyncio.gather(
        *(builder.ensure(SKILL, VERSION, spec) for builder in (first, first, second, second)),
        return_exceptions=True,
    )
    assert first.builds + second.builds == 1  # the waiters did not build it again
    assert all(isinstance(result, EnvironmentBuildError) for result in results)
    assert {result.package for result in results if isinstance(result, EnvironmentBuildError)} == {
        "swmissing"
    }
    assert isinstance(results[0], EnvironmentBuildError)
    await _assert_nothing_left(store, work, results[0])


@SANDBOX
@NPM
async def test_an_npm_dependency_that_does_not_resolve_is_named(
    make_builder: MakeBuilder, store: LocalArtifactStore, work: Path, registry: NpmRegistry
) -> None:
    builder = make_builder(npm_registry=registry.url)
    cases = [
        (DependencySpec(node=(("swmissing", "^1.0.0"),)), "swmissing", "404"),  # no package
        (DependencySpec(node=(("swnode", "^9.0.0"),)), "swnode", "No matching version"),
    ]
    for number, (spec, package, said) in enumerate(cases):
        with pytest.raises(EnvironmentBuildError) as caught:
            await builder.ensure(SKILL, f"{number}" * 64, spec)
        assert caught.value.package == package
        assert said in str(caught.value)
        await _assert_nothing_left(store, work, caught.value)


@SANDBOX
@pytest.mark.skipif(
    not setuptools_importable(), reason="the interpreter has no setuptools to build an sdist"
)
async def test_a_setup_script_cannot_write_outside_its_build(
    make_builder: MakeBuilder,
    store: LocalArtifactStore,
    work: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = python_index(tmp_path / "hostile-index")
    outside = tmp_path / "outside"  # a folder of the test's, on the host
    outside.mkdir()
    targets = [
        index / "pwned.txt",  # visible in the sandbox (pip reads the index there): read-only
        outside / "pwned.txt",  # not in the sandbox at all
        Path.home() / f"skillweave-pwned-{uuid.uuid4().hex}.txt",  # the manager's HOME
    ]
    secret = f"manager-secret-{uuid.uuid4().hex}"
    secret_file = outside / "credentials"  # a file of the manager's: not to be read either
    secret_file.write_text(secret)
    monkeypatch.setenv("SKILLWEAVE_TEST_SECRET", secret)  # nor its environment
    setup_py = hostile_setup_py("swhostile", targets, reads=[secret_file])
    write_sdist(index, "swhostile", "1.0", setup_py)
    # No build isolation: pip would fetch setuptools from an index otherwise, and fail for
    # that reason; with it, setup.py runs and the write outside is what fails.
    builder = make_builder(find_links=[str(index)], pip_args=["--no-build-isolation"])
    try:
        with pytest.raises(EnvironmentBuildError) as caught:
            await builder.ensure(SKILL, VERSION, DependencySpec(python=("swhostile",)))
        failure = caught.value
        assert failure.package == "swhostile"
        # The reason is the refused write, not something else that broke the build.
        assert "Read-only file system" in str(failure)
        assert str(targets[0]) in str(failure)
        for target in targets:
            assert not target.exists(), f"{target} was written from the build"
        log = await _log(store, failure.log_key or "")
        assert "HOSTILE WROTE" not in log
        assert all(f"HOSTILE BLOCKED {target}" in log for target in targets)
        assert f"HOSTILE UNREADABLE {secret_file}" in log
        seen = next(line for line in log.splitlines() if "HOSTILE ENV " in line).split()
        assert {"HOME", "PATH", "LANG"} <= set(seen)
        assert "SKILLWEAVE_TEST_SECRET" not in seen
        assert secret not in log
        await _assert_nothing_left(store, work, failure)
    finally:
        for target in targets:
            target.unlink(missing_ok=True)


def _processes_with(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(name))
    return found


@SANDBOX
@pytest.mark.skipif(
    not setuptools_importable(), reason="the interpreter has no setuptools to build an sdist"
)
async def test_a_hanging_build_is_stopped_with_everything_it_started(
    make_builder: MakeBuilder, store: LocalArtifactStore, work: Path, tmp_path: Path
) -> None:
    marker = f"{time.time_ns() % 1000}.{os.getpid()}"  # sleep's argument: finds its process
    setup_py = textwrap.dedent(
        f"""\
        import subprocess, time
        # A process in a session of its own, as a daemon would start one, then a hang.
        subprocess.Popen(["sleep", "{marker}"], start_new_session=True)
        time.sleep(600)
        """
    )
    index = python_index(tmp_path / "hanging-index")
    write_sdist(index, "swhang", "1.0", setup_py)
    builder = make_builder(
        find_links=[str(index)], pip_args=["--no-build-isolation"], build_timeout_seconds=4.0
    )
    building = asyncio.create_task(
        builder.ensure(SKILL, VERSION, DependencySpec(python=("swhang",)))
    )
    deadline = time.monotonic() + 4.0
    while not _processes_with(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert _processes_with(marker), "the setup script did not start its process"
    with pytest.raises(EnvironmentBuildError, match=r"did not finish within 4 s") as caught:
        await building
    deadline = time.monotonic() + 5.0
    while _processes_with(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert _processes_with(marker) == []  # the whole sandbox went, not only pip
    await _assert_nothing_left(store, work, caught.value)


async def test_a_huge_dependency_list_is_refused_before_anything_runs(
    make_builder: MakeBuilder, store: LocalArtifactStore, work: Path
) -> None:
    builder = make_builder(max_dependencies=5)
    spec = DependencySpec(
        python=tuple(f"swpkg{number}" for number in range(4)),
        node=(("swnode", "^1.0.0"), ("swnode-plus", "^1.0.0")),
    )
    with pytest.raises(DependencyError, match="6 dependencies, more than the 5 allowed"):
        await builder.ensure(SKILL, VERSION, spec)
    assert builder.builds == 0
    assert await store.list("") == []
    assert not work.exists()


@SANDBOX
async def test_an_environment_over_max_bytes_is_refused(
    make_builder: MakeBuilder, store: LocalArtifactStore, work: Path
) -> None:
    builder = make_builder(max_bytes=64 * 1024)  # swbig holds 256 KiB
    with pytest.raises(EnvironmentBuildError, match="max_bytes") as caught:
        await builder.ensure(SKILL, VERSION, DependencySpec(python=("swbig",)))
    await _assert_nothing_left(store, work, caught.value)


@SANDBOX
async def test_a_build_past_its_timeout_is_stopped(
    make_builder: MakeBuilder, store: LocalArtifactStore, work: Path
) -> None:
    builder = make_builder(build_timeout_seconds=0.05)
    with pytest.raises(EnvironmentBuildError, match=r"did not finish within 0\.05 s") as caught:
        await builder.ensure(SKILL, VERSION, PYTHON_SPEC)
    await _assert_nothing_left(store, work, caught.value)


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (DependencySpec(python=("--index-url http://evil.invalid/simple",)), "plain requirement"),
        (DependencySpec(python=("swdemo --global-option=--pwn",)), "plain requirement"),
        (DependencySpec(python=("swdemo\n-r /etc/passwd",)), "plain requirement"),
        (DependencySpec(python=("swdemo # comment",)), "plain requirement"),
        (DependencySpec(python=("swdemo @ https://evil.invalid/x.whl",)), "direct reference"),
        (DependencySpec(python=("not a requirement!",)), "PEP 508"),
        (DependencySpec(node=(("swnode", "file:../../etc"),)), "registry version range"),
        (DependencySpec(node=(("swnode", "git+https://evil.invalid/x"),)), "registry version"),
        (DependencySpec(node=(("../swnode", "1.0.0"),)), "npm package name"),
        (DependencySpec(python=("swdemo",), requires_python=">=99"), "requires Python >=99"),
    ],
)
async def test_requirements_that_would_be_obeyed_as_options_are_refused(
    make_builder: MakeBuilder,
    store: LocalArtifactStore,
    spec: DependencySpec,
    said: str,
) -> None:
    # Discovery refuses these too; the builder does not trust it.
    builder = make_builder()
    with pytest.raises(DependencyError, match=said):
        await builder.ensure(SKILL, VERSION, spec)
    assert builder.builds == 0
    assert await store.list("") == []


async def test_without_a_working_sandbox_nothing_is_built(
    make_builder: MakeBuilder, store: LocalArtifactStore, index: Path, work: Path
) -> None:
    builder = EnvironmentBuilder(
        EnvironmentSettings(find_links=[str(index)], no_index=True),
        store,
        bwrap=str(work / "no-such-bwrap"),
        work_dir=work,
    )
    with pytest.raises(EnvironmentBuildError, match="bubblewrap") as caught:
        await builder.ensure(SKILL, VERSION, PYTHON_SPEC)
    assert "unsandboxed" in str(caught.value)
    assert builder.builds == 0
    assert await store.list("") == []


def test_environment_keys() -> None:
    stem = f"environments/demo/{VERSION}/cp311-node20/linux-x86_64"
    assert keys.environment_key("demo", VERSION, "cp311-node20", "linux-x86_64") == (
        f"{stem}.tar.gz"
    )
    assert keys.environment_log_key("demo", VERSION, "cp311-node20", "linux-x86_64") == (
        f"{stem}.log"
    )
    assert keys.environment_failure_key("demo", VERSION, "cp311-node20", "linux-x86_64") == (
        f"{stem}.failed"
    )
    claim = keys.environment_claim_key
    assert claim("demo", VERSION, "cp311-node20", "linux-x86_64") == f"{stem}.claim"
    assert claim("demo", VERSION, "cp311-node20", "linux-x86_64", 3) == f"{stem}.claim.3"
    for bad in ("../x", "a/b", ""):
        with pytest.raises(InvalidKeyError):
            keys.environment_key("demo", VERSION, bad, "linux-x86_64")
    with pytest.raises(InvalidKeyError):
        claim("demo", VERSION, "cp311", "linux-x86_64", 0)
