"""What makes a fresh executor cheap without making it less fresh: the uid's clean mark, the
sweep rule of an executor's holdings, the isolation settled once by the zygote, and the stage
started without the launcher's program start while the executor has one thread."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import threading
from pathlib import Path

import pytest

from sandbox_executor import holdings as holdings_module
from sandbox_executor import isolation, sandbox_user
from sandbox_executor import stage as stage_module
from sandbox_executor.errors import IsolationUnavailableError
from sandbox_executor.isolation import IsolationPlan, plan_isolation, settle_isolation, write_etc
from sandbox_executor.sandbox_user import SandboxUser
from sandbox_executor.settings import ExecutorSettings
from sandbox_executor.workspace import Workspace
from skillweave.sandbox.models import ExecutionLimits

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="sandbox uids are held by root only")


@pytest.fixture
def settings(tmp_path: Path) -> ExecutorSettings:
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o700)
    return ExecutorSettings(uid_lock_dir=locks, uid_range_start=64_000, uid_range_size=4)


@pytest.fixture
def sweeps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The uids swept (the real sweep runs too)."""
    swept: list[int] = []
    real = SandboxUser._sweep

    def counting(user: SandboxUser) -> bool:
        swept.append(user.uid)
        return real(user)

    monkeypatch.setattr(SandboxUser, "_sweep", counting)
    return swept


@root_only
def test_a_uid_left_clean_is_taken_again_without_a_sweep(
    settings: ExecutorSettings, sweeps: list[int]
) -> None:
    first = SandboxUser.acquire(settings)
    assert first is not None
    assert first.uid == 64_000  # the lowest free uid, so few uids go round
    assert sweeps == [64_000]  # a new lock file: nothing says it is clean
    lock = settings.uid_lock_dir / "64000.lock"  # type: ignore[operator]
    assert lock.read_bytes() == b"held\n"
    first.release(clean=True)
    assert lock.read_bytes() == b"clean\n"

    second = SandboxUser.acquire(settings)
    assert second is not None
    assert second.uid == 64_000
    assert sweeps == [64_000]  # no second sweep
    second.release()


@root_only
def test_a_uid_whose_holder_did_not_leave_it_clean_is_swept_first(
    settings: ExecutorSettings, sweeps: list[int]
) -> None:
    crashed = SandboxUser.acquire(settings)
    assert crashed is not None
    crashed.release()  # as when a holder dies: the lock goes, "held" stays
    again = SandboxUser.acquire(settings)
    assert again is not None
    assert sweeps == [64_000, 64_000]
    again.release()


class _Stage:
    def __init__(self, running: bool) -> None:
        self.running = running

    def kill(self) -> bool:
        return self.running


class _User:
    def __init__(self, *, sweep_works: bool = True, sweep_failed: bool = False) -> None:
        self.swept = 0
        self.sweep_works = sweep_works
        self.sweep_failed = sweep_failed
        self.released_clean: bool | None = None

    def kill_all(self) -> bool:
        self.swept += 1
        return self.sweep_works

    def release(self, *, clean: bool = False) -> None:
        self.released_clean = clean


@pytest.mark.parametrize(
    "case",
    [
        # The script ended by itself in its pid namespace: nothing of the uid is left.
        (True, False, False, True, 0, True),
        # A stage killed now leaves its namespace dying for a moment: sweep.
        (True, True, False, True, 1, True),
        # The run's own sweep (after a kill) failed: sweep again.
        (True, False, True, True, 1, True),
        # No namespace: always sweep.
        (False, False, False, True, 1, True),
        # A sweep that cannot show the uid is empty never marks it clean.
        (True, True, False, False, 1, False),
    ],
)
def test_holdings_sweep_the_uid_only_when_something_could_be_left(
    tmp_path: Path, case: tuple[bool, bool, bool, bool, int, bool]
) -> None:
    contained, stage_running, sweep_failed, sweep_works, swept, clean = case
    user = _User(sweep_works=sweep_works, sweep_failed=sweep_failed)
    folder = tmp_path / "executor"
    folder.mkdir()
    holdings = holdings_module.Holdings(
        folder,
        user,  # type: ignore[arg-type]
        stages=[_Stage(stage_running)],  # type: ignore[list-item]
        contained=contained,
    )
    holdings.give_back()
    assert user.swept == swept
    assert user.released_clean is clean
    assert not folder.exists()


@pytest.mark.skipif(
    shutil.which("bwrap") is None and os.geteuid() == 0,
    reason="as root with no sandbox uid only bubblewrap can be probed here (the namespaces"
    " mode refuses to run as root); the settled namespaces mode is covered by real executors",
)
def test_a_settled_isolation_is_planned_without_a_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(isolation, "_settled", {})
    settings = ExecutorSettings(isolation="auto")
    etc = write_etc(tmp_path / "etc", None)
    probes: list[str] = []
    real_probe = isolation._probe

    def probe(plan: IsolationPlan, **kwargs: object) -> str | None:
        probes.append(plan.isolation)
        return real_probe(plan, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(isolation, "_probe", probe)
    (tmp_path / "zygote").mkdir()
    decided = plan_isolation(settings, user=None, etc_dir=etc, folder=tmp_path / "zygote")
    assert probes  # the zygote probes
    settle_isolation(settings, decided)

    probes.clear()
    (tmp_path / "forked").mkdir()
    forked = plan_isolation(settings, user=None, etc_dir=etc, folder=tmp_path / "forked")
    assert probes == []
    assert forked.isolation == decided.isolation  # never another mode than the settled one
    assert forked.bwrap == decided.bwrap
    assert forked.seccomp == tmp_path / "forked" / "seccomp.bpf"  # its own filter file
    assert forked.seccomp.exists()

    # Another setting is not settled: probed as before.
    other = ExecutorSettings(isolation="auto", bwrap_path="/nonexistent/bwrap")
    (tmp_path / "other").mkdir()
    with contextlib.suppress(IsolationUnavailableError):  # as root with no uid: refused
        plan_isolation(other, user=None, etc_dir=etc, folder=tmp_path / "other")
    assert probes


def test_the_first_stage_skips_the_launcher_only_with_a_single_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = stage_module._StageSpec(
        workspace=None,  # type: ignore[arg-type]
        plan=IsolationPlan("none"),
        user=None,
        etc_dir=tmp_path,
        launcher=tmp_path / "stage.py",
        limits=ExecutionLimits(),
    )
    monkeypatch.setattr(stage_module, "single_threaded", lambda: True)
    launch = stage_module._launch(spec, 5, -1)
    assert launch.prepare is not None
    assert str(sandbox_user.LAUNCHER) not in launch.argv  # the same steps, between fork and exec

    monkeypatch.setattr(stage_module, "single_threaded", lambda: False)
    launch = stage_module._launch(spec, 5, -1)
    assert launch.prepare is None
    assert str(sandbox_user.LAUNCHER) in launch.argv  # a program of its own


def _bubblewrap_spec(tmp_path: Path) -> stage_module._StageSpec:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "stage.py").write_text("")
    user = SandboxUser(64123, 64124, dedicated=True)
    return stage_module._StageSpec(
        workspace=Workspace(root=tmp_path / "workspace", tmp=tmp_path / "tmp"),
        plan=IsolationPlan("bubblewrap", bwrap="/usr/bin/bwrap", seccomp=tmp_path / "f.bpf"),
        user=user,
        etc_dir=write_etc(tmp_path / "etc", user),
        launcher=tmp_path / "stage.py",
        limits=ExecutionLimits(),
    )


def _launched(spec: stage_module._StageSpec) -> stage_module._Launch:
    launch = stage_module._launch(spec, 5, 6)
    for fd in launch.fds:
        os.close(fd)
    return launch


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root executor drops to a sandbox user")
def test_under_bubblewrap_setpriv_and_popen_do_the_launchers_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Python runs between fork and exec, whatever the threads: the umask is Popen's
    option, the sandbox user setpriv's (so that Popen can vfork), bubblewrap dies with the
    executor by its own flag."""
    spec = _bubblewrap_spec(tmp_path)
    monkeypatch.setattr(stage_module, "setpriv", lambda: "/usr/bin/setpriv")
    for threads in (True, False):
        monkeypatch.setattr(stage_module, "single_threaded", lambda threads=threads: threads)
        launch = _launched(spec)
        assert launch.prepare is None
        assert launch.argv[:7] == [
            "/usr/bin/setpriv",
            "--reuid",
            "64123",
            "--regid",
            "64124",
            "--clear-groups",
            "--",
        ]
        assert launch.argv[7] == "/usr/bin/bwrap"
        assert "--die-with-parent" in launch.argv
        assert str(sandbox_user.LAUNCHER) not in launch.argv
        assert launch.options == {"umask": 0o022}  # no user option: Popen may vfork
    assert resource.getrlimit(resource.RLIMIT_CORE) == (0, 0)  # inherited by the stage


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root executor drops to a sandbox user")
def test_without_a_setpriv_to_trust_popen_drops_to_the_sandbox_user_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _bubblewrap_spec(tmp_path)
    monkeypatch.setattr(stage_module, "setpriv", lambda: None)
    launch = _launched(spec)
    assert launch.argv[0] == "/usr/bin/bwrap"
    assert launch.options == {
        "umask": 0o022,
        "user": 64123,
        "group": 64124,
        "extra_groups": [],
    }


def test_setpriv_is_trusted_only_as_a_root_owned_file_only_root_may_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = tmp_path / "setpriv"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setattr(sandbox_user, "_SETPRIV_PLACES", (str(tmp_path / "absent"), str(tool)))

    def found() -> str | None:
        sandbox_user.setpriv.cache_clear()
        return sandbox_user.setpriv()

    try:
        if os.geteuid() == 0:
            assert found() == str(tool)
            os.chown(tool, 1234, -1)  # another user's
            assert found() is None
            os.chown(tool, 0, -1)
        tool.chmod(0o775)  # writable by its group
        assert found() is None
        tool.chmod(0o757)  # by anyone
        assert found() is None
        tool.unlink()
        tool.mkdir()  # not a file
        assert found() is None
    finally:
        sandbox_user.setpriv.cache_clear()


def test_single_threaded_sees_threads_the_threading_module_does_not_know() -> None:
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    try:
        assert not stage_module.single_threaded()
    finally:
        done.set()
        thread.join()
