"""`ModelCalls`: the ``invoke_model`` side effect (``AgentServices`` hands it here), and which
model a run's request names.

A model call does the resource reads the loop answered since the last call (a read rides with
the model call that first sees it, instead of a call of its own), reads the transcript back up
to the view's boundary (eliding what the view compacted; the loop's pending messages and the
reads are shown from memory), calls the model the run names (its profile's provider, or this
process's default), and then stores the pending records and the reply, each at its own seq, in
one append (one write and one flush where the store keeps record logs). The call returns once
all of them are on disk. A model that does not resolve here is a
:class:`~skillweave.errors.ConfigError`, never retried.
"""

from __future__ import annotations

import asyncio
import time

from skillweave.agent import InvokeModelInput, ModelTurn
from skillweave.engines._resource_reads import ResourceReads
from skillweave.engines.transcript import TranscriptRecord, TranscriptRecorder
from skillweave.engines.worker_metrics import WorkerMetrics
from skillweave.errors import AgentError, ConfigError, ModelError
from skillweave.llm import (
    NAME_A_MODEL,
    ModelProvider,
    ModelProviders,
    ModelRequest,
    default_model_problem,
    names_default,
)

__all__ = ["ModelCalls"]


class ModelCalls:
    """Model calls of runs, with `provider` (named `model`) by default and `models` by name.

    Args:
        provider: the default model, for runs whose agent names none; None: there is none.
        model: its name, as model requests carry it (None with no default).
        models: the models runs may name (profiles, ``provider:name``), opened on first use;
            None: only the default resolves.
        transcript: where the messages are read and the reply stored.
        reads: what does the request's resource reads.
        metrics: where calls and tokens are counted.
    """

    def __init__(
        self,
        provider: ModelProvider | None,
        model: str | None,
        *,
        models: ModelProviders | None,
        transcript: TranscriptRecorder,
        reads: ResourceReads,
        metrics: WorkerMetrics,
    ) -> None:
        self.provider = provider
        self.model = model
        self.models = models
        self._transcript = transcript
        self._reads = reads
        self._metrics = metrics

    @property
    def default_model(self) -> str | None:
        """The default model as configured (``provider:name``), or None: there is none."""
        if self.provider is None or self.models is None:
            return None
        return f"{self.models.settings.provider}:{self.models.settings.name}"

    async def invoke(self, request: InvokeModelInput) -> ModelTurn:
        """Do the loop's pending reads, call the model on the transcript (the pending
        messages and reads shown from memory), then store them with its reply in one append
        (one write and one flush where the store keeps record logs), on disk before this
        returns. When the model fails, the pending records are stored all the same.

        Raises:
            AgentError: a read of another run, or at or past the reply's seq (the loop never
                asks for one; never retried).
        """
        staged: dict[int, TranscriptRecord] = {
            write.seq: TranscriptRecord(message=write.message) for write in request.writes
        }
        reads = []
        for read in request.reads:
            if read.run_id != request.run_id or read.seq >= request.reply_seq:
                raise AgentError(
                    f"a model call of run {request.run_id!r} (reply at seq {request.reply_seq})"
                    f" cannot do a read of run {read.run_id!r} at seq {read.seq}"
                )
            staged[read.seq], outcome = await self._reads.answer(read)
            reads.append(outcome)
        try:
            turn = await self._call(request, staged)
        except BaseException:
            # What the run sent is kept though the model failed (a retry stores it again).
            await asyncio.gather(
                self._transcript.store_all(request.run_id, staged), return_exceptions=True
            )
            raise
        staged[request.reply_seq] = TranscriptRecord(message=turn.message)
        await self._transcript.store_all(request.run_id, staged)
        return turn.model_copy(update={"reads": tuple(reads)}) if reads else turn

    async def _call(
        self, request: InvokeModelInput, staged: dict[int, TranscriptRecord]
    ) -> ModelTurn:
        """Call the model on the transcript (`staged` records shown from memory); its reply,
        not stored."""
        transcript = self._transcript
        view = request.view
        messages = []
        for seq in range(view.upto):
            record = staged.get(seq)
            if record is None:
                record = await transcript.load(request.run_id, seq)
            messages.append(record.seen(elided=seq < view.elide_before))
        provider, model, attempts = self.resolve(request)
        started = time.perf_counter()
        try:
            response = await provider.complete(
                ModelRequest(
                    model=model,
                    system=request.system,
                    messages=tuple(messages),
                    tools=request.tools,
                    max_output_tokens=request.max_output_tokens,
                )
            )
        except Exception as exc:
            self._metrics.model_called(
                provider.name, seconds=time.perf_counter() - started, usage=None
            )
            if isinstance(exc, ModelError) and exc.max_attempts is None:
                exc.max_attempts = attempts  # the model's own retry policy, for the engine
            raise
        self._metrics.model_called(
            provider.name, seconds=time.perf_counter() - started, usage=response.usage
        )
        reply = response.message
        if reply.role != "assistant":
            reply = reply.model_copy(update={"role": "assistant"})
        return ModelTurn(
            message=reply,
            stop_reason=response.stop_reason,
            usage=response.usage,
            model=response.model or model,
        )

    def name_of(self, request: InvokeModelInput) -> str:
        """The model `request` calls, for its retry notices ('' when none resolves)."""
        try:
            return self.resolve(request)[0].name
        except ConfigError:  # not retried: its notice is never shown
            return request.model or self.model or ""

    def resolve(self, request: InvokeModelInput) -> tuple[ModelProvider, str, int | None]:
        """The provider of the model the run names, that model's name, and the most tries
        its profile allows one call (None: the engine's).

        Raises:
            ConfigError: the run names a model that does not resolve here (never retried).
        """
        return self.resolve_named(request.model)

    def resolve_named(self, named: str | None) -> tuple[ModelProvider, str, int | None]:
        """:meth:`resolve` of the model `named` (a run's, or an eval's grader: the one rule).

        Raises:
            ConfigError: `named` does not resolve here (never retried).
        """
        # A process that resolves no names (no `models`) runs its one model as the default.
        if not named or (self.models is None and names_default(named)):
            if self.provider is None or self.model is None:
                problem = (
                    default_model_problem(self.models.settings) if self.models else None
                ) or "no default model"
                raise ConfigError(
                    f"the run names no model and this worker has none by default ({problem}):"
                    f" {NAME_A_MODEL}"
                )
            attempts = self.models.settings.max_attempts if self.models is not None else None
            return self.provider, self.model, attempts
        if self.models is None:
            raise ConfigError(
                f"the run names model {named!r}, and this process runs only its default model"
            )
        provider = self.models.provider_for(named)
        attempts = self.models.profile_for(named).max_attempts
        return provider, provider.name.partition(":")[2] or provider.name, attempts
