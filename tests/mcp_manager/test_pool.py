"""The warm pool's bookkeeping, on a fake backend that starts sandboxes instantly."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from mcp_manager import pool as pool_module
from mcp_manager.backends import LocalBackend, Sandbox
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import WarmPool, after_answer
from sandbox_executor import ExecutorSettings
from skillweave.errors import PoolExhaustedError, SandboxStartError


class FakeBackend:
    name = "fake"
    one_shot = True

    def __init__(self) -> None:
        self.created: list[Sandbox] = []
        self.destroyed: list[Sandbox] = []
        self._ids = itertools.count()

    async def create(self) -> Sandbox:
        sandbox = Sandbox(id=str(next(self._ids)), url="http://fake", token="t")
        self.created.append(sandbox)
        return sandbox

    async def destroy(self, sandbox: Sandbox) -> None:
        self.destroyed.append(sandbox)

    async def close(self) -> None:
        return None


async def _pool(
    backend: FakeBackend, *, target: int = 1, maximum: int = 2, refill_delay: float = 0.2
) -> WarmPool:
    pool = WarmPool(
        backend,
        target=target,
        maximum=maximum,
        claim_timeout=0.3,
        metrics=ManagerMetrics(),
        refill_delay=refill_delay,
    )
    await pool.start()
    await pool.wait_ready(timeout=5)
    return pool


async def test_a_short_execution_gets_its_replacement_when_it_ends() -> None:
    backend = FakeBackend()
    pool = await _pool(backend, refill_delay=5.0)
    sandbox, warm = await pool.claim()
    assert warm
    await asyncio.sleep(0.05)
    assert len(backend.created) == 1, "no replacement may start while a short run is going"
    await pool.release(sandbox)
    await pool.wait_ready(timeout=5)
    assert len(backend.created) == 2
    assert backend.destroyed == [sandbox]
    await pool.close()


async def test_a_long_execution_gets_its_replacement_after_the_refill_delay() -> None:
    backend = FakeBackend()
    pool = await _pool(backend, refill_delay=0.05)
    sandbox, _ = await pool.claim()
    await pool.wait_ready(timeout=5)  # while the first is still busy
    assert len(backend.created) == 2
    assert pool.status()["busy"] == 1
    await pool.release(sandbox)
    await pool.close()


async def test_an_unused_sandbox_goes_back_ready() -> None:
    backend = FakeBackend()
    pool = await _pool(backend, refill_delay=5.0)
    sandbox, _ = await pool.claim()
    await pool.unclaim(sandbox)
    again, warm = await pool.claim()
    assert again is sandbox
    assert warm
    assert backend.destroyed == []
    await pool.release(again)
    await pool.close()


async def test_an_exhausted_pool_refuses_after_the_claim_timeout() -> None:
    backend = FakeBackend()
    pool = await _pool(backend, target=1, maximum=1)
    held, _ = await pool.claim()
    with pytest.raises(PoolExhaustedError) as refused:
        await pool.claim()
    assert refused.value.retry_after >= 1
    await pool.release(held)
    await pool.close()


async def test_a_sandbox_given_back_after_its_replacement_started_is_trimmed() -> None:
    backend = FakeBackend()
    pool = await _pool(backend, refill_delay=0.01)
    sandbox, _ = await pool.claim()
    await pool.wait_ready(timeout=5)  # the replacement is ready
    await pool.unclaim(sandbox)  # nothing ran in it after all
    assert pool.status()["ready"] == 1  # back at the target, not over it
    await asyncio.sleep(0.01)  # destruction runs in the background
    assert len(backend.destroyed) == 1
    await pool.close()


class _Exited:
    """A process stand-in: ``wait()`` returns once `gone` is set."""

    def __init__(self) -> None:
        self.gone = asyncio.Event()
        self.returncode: int | None = None

    async def wait(self) -> int:
        await self.gone.wait()
        self.returncode = -9
        return -9


class ProcessBackend(FakeBackend):
    """Fake sandboxes with a process each, which a test can make exit."""

    async def create(self) -> Sandbox:
        sandbox = await super().create()
        sandbox.process = _Exited()  # type: ignore[assignment]
        return sandbox


async def test_a_warm_sandbox_whose_process_exits_is_replaced_not_handed_out() -> None:
    backend = ProcessBackend()
    pool = await _pool(backend, target=1, maximum=2)
    [dead] = backend.created
    dead.process.gone.set()  # type: ignore[union-attr]

    async def replaced() -> bool:
        return len(backend.created) == 2 and pool.status()["ready"] == 1

    for _ in range(100):
        if await replaced():
            break
        await asyncio.sleep(0.01)
    assert await replaced()
    assert backend.destroyed == [dead]
    sandbox, _ = await pool.claim()
    assert sandbox is not dead
    await pool.release(sandbox)
    await pool.close()


async def test_waiting_claims_are_served_first_come_first_served() -> None:
    """A claim that arrives while a sandbox is being handed to the pool does not take it
    from a claim that was already waiting."""
    backend = FakeBackend()
    pool = WarmPool(
        backend, target=1, maximum=1, claim_timeout=10, metrics=ManagerMetrics(), refill_delay=5
    )
    await pool.start()
    await pool.wait_ready(timeout=5)
    first, _ = await pool.claim()
    served: list[str] = []

    async def claim(name: str) -> Sandbox:
        sandbox, _ = await pool.claim()
        served.append(name)
        return sandbox

    early = asyncio.create_task(claim("early"))
    await asyncio.sleep(0.01)  # waiting: the pool is at its maximum
    # A sandbox arrives (as a started one does, under the pool's lock) while a new claim is
    # already queued for that lock.
    async with pool._changed:
        late = asyncio.create_task(claim("late"))
        await asyncio.sleep(0.01)  # the late claim now waits for the lock
        pool._busy.discard(first)
        pool._ready.append(first)
        pool._changed.notify_all()
    await pool.release(await early)
    await pool.release(await late)
    assert served == ["early", "late"]
    await pool.close()


class RefusingBackend(FakeBackend):
    """Executors that refuse to start here (a setting or a missing requirement)."""

    async def create(self) -> Sandbox:
        raise SandboxStartError("EXECUTOR__ISOLATION=bubblewrap but …: install it", permanent=True)


async def test_sandboxes_that_refuse_to_start_fail_a_claim_at_once_with_why() -> None:
    pool = WarmPool(
        RefusingBackend(), target=1, maximum=2, claim_timeout=30, metrics=ManagerMetrics()
    )
    await pool.start()
    async with asyncio.timeout(5):  # not the 30 s claim timeout
        with pytest.raises(SandboxStartError, match="install it") as refused:
            await pool.claim()
    assert refused.value.permanent
    await pool.close()


class FlakyBackend(FakeBackend):
    """The second sandbox fails to start (a slow start under load), the rest start."""

    async def create(self) -> Sandbox:
        if len(self.created) == 1 and not getattr(self, "failed", False):
            self.failed = True
            raise SandboxStartError("did not become healthy in time")
        return await super().create()


async def test_a_sandbox_that_failed_to_start_is_tried_again_while_the_pool_is_idle() -> None:
    backend = FlakyBackend()
    pool = WarmPool(backend, target=2, maximum=4, claim_timeout=5, metrics=ManagerMetrics())
    await pool.start()
    await pool.wait_ready(timeout=5)  # no claim came: the pool refilled by itself
    assert pool.status()["ready"] == 2
    await pool.close()


async def test_within_after_answer_the_used_sandbox_goes_once_the_answer_is_out() -> None:
    backend = FakeBackend()
    pool = await _pool(backend, refill_delay=5.0)
    sandbox, _ = await pool.claim()
    with after_answer() as answered:
        await pool.release(sandbox)
    await asyncio.sleep(0.05)
    assert backend.destroyed == []  # nothing of it while the answer is on its way
    assert len(backend.created) == 1
    assert pool.status()["busy"] == 0  # but the pool counts it gone already

    answered()
    answered()  # once only
    await pool.wait_ready(timeout=5)
    assert backend.destroyed == [sandbox]
    assert len(backend.created) == 2
    await pool.close()


async def test_after_answer_left_by_an_error_releases_at_once() -> None:
    backend = FakeBackend()
    pool = await _pool(backend, refill_delay=5.0)
    sandbox, _ = await pool.claim()

    async def answer_fails() -> None:
        with after_answer():
            await pool.release(sandbox)
            raise RuntimeError("the answer failed")

    with pytest.raises(RuntimeError):
        await answer_fails()
    await pool.wait_ready(timeout=5)
    assert backend.destroyed == [sandbox]
    await pool.close()


async def test_after_answer_never_called_releases_anyway(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "_HELD_AT_MOST_SECONDS", 0.05)
    backend = FakeBackend()
    pool = await _pool(backend, refill_delay=5.0)
    sandbox, _ = await pool.claim()
    with after_answer():
        await pool.release(sandbox)
    await asyncio.sleep(0.3)
    assert backend.destroyed == [sandbox]
    await pool.close()


async def test_a_pool_closed_before_the_answer_destroys_the_used_sandbox() -> None:
    backend = FakeBackend()
    pool = await _pool(backend, refill_delay=5.0)
    sandbox, _ = await pool.claim()
    with after_answer():
        await pool.release(sandbox)
    await pool.close()
    assert sandbox in backend.destroyed


class _KeptBackend(FakeBackend):
    """A one-shot backend whose sandboxes serve `executions` each (the local backend's
    ``SANDBOX__EXECUTIONS_PER_EXECUTOR``)."""

    def __init__(self, executions: int) -> None:
        super().__init__()
        self.executions = executions

    async def create(self) -> Sandbox:
        sandbox = await super().create()
        sandbox.reuses_left = self.executions - 1
        return sandbox


class _Process:
    """A sandbox's executor process, as far as the pool looks at it."""

    def __init__(self) -> None:
        self.returncode: int | None = None
        self._exited = asyncio.Event()

    async def wait(self) -> int:
        await self._exited.wait()
        return self.returncode or 0

    def exit(self, code: int) -> None:
        self.returncode = code
        self._exited.set()


async def test_a_sandbox_that_serves_several_executions_comes_back_until_they_are_spent() -> None:
    backend = _KeptBackend(executions=3)
    pool = await _pool(backend, refill_delay=0.01)
    served = []
    for _ in range(4):
        sandbox, warm = await pool.claim()
        assert warm
        served.append(sandbox.id)
        await asyncio.sleep(0.05)  # past the refill delay: nothing starts for one coming back
        await pool.release(sandbox, clean=True)
        await pool.wait_ready(timeout=5)
    assert served == ["0", "0", "0", "1"]
    assert [s.id for s in backend.destroyed] == ["0"]
    assert [s.id for s in backend.created] == ["0", "1"]
    await pool.close()


@pytest.mark.parametrize("executions", [1, 10])
async def test_the_local_backend_tells_its_executors_how_many_executions_they_serve(
    executions: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the pool's zygote passes on is what each executor it forks reads: one execution,
    or several and which is the last (after it the executor makes no next sandbox)."""
    backend = LocalBackend(executions=executions)
    env = backend._environment()
    await backend.close()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = ExecutorSettings()
    assert settings.reusable is (executions > 1)
    assert settings.max_executions == (executions if executions > 1 else None)


@pytest.mark.parametrize(
    ("executions", "died", "clean"),
    [(1, False, True), (10, True, True), (10, False, False)],
    ids=["one-shot", "kept-but-its-process-died", "kept-but-its-execution-did-not-end-clean"],
)
async def test_a_used_sandbox_is_not_handed_out_again(
    executions: int, died: bool, clean: bool
) -> None:
    # Not clean: a request dropped part-way, a lost sandbox, a cancel, an executor's error.
    backend = _KeptBackend(executions=executions)
    pool = await _pool(backend)
    sandbox, _ = await pool.claim()
    if died:
        process = _Process()
        sandbox.process = process  # type: ignore[assignment]
        process.exit(-9)  # killed while it ran
    await pool.release(sandbox, clean=clean)
    await pool.wait_ready(timeout=5)
    again, _ = await pool.claim()
    assert again is not sandbox
    assert backend.destroyed == [sandbox]
    await pool.release(again, clean=True)
    await pool.close()
