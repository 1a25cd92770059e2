"""The model provider contract: :class:`ModelProvider`.

The agent's ``invoke_model`` step (an activity under Temporal, a direct call otherwise) holds one
provider and calls :meth:`ModelProvider.complete` once per model turn. Three implementations:
OpenAI-compatible chat completions, Anthropic messages, and the scripted fake that replays a
YAML script for tests and the offline demo.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from skillweave.llm.messages import ModelRequest, ModelResponse

__all__ = ["ModelProvider"]


@runtime_checkable
class ModelProvider(Protocol):
    """A model behind an API, bound to one model at construction.

    A provider sends the model it was built for; ``ModelRequest.model`` is what the caller
    believes it talks to and is kept for the record, not sent. ``ModelResponse.model`` is the
    model the API says answered.

    Providers never retry: a failed call raises :class:`~skillweave.errors.ModelError` whose
    ``retryable`` and ``retry_after`` (decided in :mod:`skillweave.llm.retry`) tell the caller
    whether and when to try again. Calls hold no state between them, so a retried call is safe.
    """

    @property
    def name(self) -> str:
        """``provider:model``, e.g. ``openai:gpt-4o``: for logs, the UI and error messages."""
        ...

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One model turn: the assistant's answer to `request`.

        Raises:
            ModelError: the call failed; ``retryable`` says whether the same call may succeed.
        """
        ...

    async def aclose(self) -> None:
        """Release connections; the provider is not used afterwards."""
        ...
