"""Model providers: the :class:`ModelProvider` protocol, its three providers, and the messages
they share.

- :class:`OpenAIProvider`: OpenAI Chat Completions and the servers that copy it (vLLM, Ollama,
  LM Studio…);
- :class:`AnthropicProvider`: the Anthropic Messages API;
- :class:`ScriptedProvider`: replays a YAML script, for tests and the offline demo.

:func:`open_provider` builds the one the settings (``MODEL__*``) or the CLI's
``--model provider:name`` (read by :func:`parse_model_option`) ask for. Providers never retry;
:mod:`skillweave.llm.retry` decides whether a failed call may be retried, and the caller does it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillweave.llm._http import RAW_ARGUMENTS_KEY
    from skillweave.llm.anthropic import DEFAULT_ANTHROPIC_BASE_URL, AnthropicProvider
    from skillweave.llm.base import ModelProvider
    from skillweave.llm.factory import ProviderKind, open_provider, parse_model_option
    from skillweave.llm.messages import (
        Message,
        ModelRequest,
        ModelResponse,
        Role,
        StopReason,
        ToolCall,
        ToolSpec,
        Usage,
    )
    from skillweave.llm.openai import DEFAULT_OPENAI_BASE_URL, OpenAIProvider
    from skillweave.llm.retry import classify_status, error_from_response, error_from_transport
    from skillweave.llm.scripted import (
        ResultExpectation,
        ScriptedExpectation,
        ScriptedProvider,
        ScriptedToolCall,
        ScriptedTurn,
        ScriptedUsage,
    )

# Public names resolve on first use (PEP 562): the agent loop imports `messages` and must
# not pull httpx and the HTTP providers in with it (it runs in Temporal's workflow sandbox).
_EXPORTS: dict[str, str] = {
    "AnthropicProvider": "anthropic",
    "DEFAULT_ANTHROPIC_BASE_URL": "anthropic",
    "DEFAULT_OPENAI_BASE_URL": "openai",
    "Message": "messages",
    "ModelProvider": "base",
    "ModelRequest": "messages",
    "ModelResponse": "messages",
    "OpenAIProvider": "openai",
    "ProviderKind": "factory",
    "RAW_ARGUMENTS_KEY": "_http",
    "ResultExpectation": "scripted",
    "Role": "messages",
    "ScriptedExpectation": "scripted",
    "ScriptedProvider": "scripted",
    "ScriptedToolCall": "scripted",
    "ScriptedTurn": "scripted",
    "ScriptedUsage": "scripted",
    "StopReason": "messages",
    "ToolCall": "messages",
    "ToolSpec": "messages",
    "Usage": "messages",
    "classify_status": "retry",
    "error_from_response": "retry",
    "error_from_transport": "retry",
    "open_provider": "factory",
    "parse_model_option": "factory",
}

__all__ = [
    "DEFAULT_ANTHROPIC_BASE_URL",
    "DEFAULT_OPENAI_BASE_URL",
    "RAW_ARGUMENTS_KEY",
    "AnthropicProvider",
    "Message",
    "ModelProvider",
    "ModelRequest",
    "ModelResponse",
    "OpenAIProvider",
    "ProviderKind",
    "ResultExpectation",
    "Role",
    "ScriptedExpectation",
    "ScriptedProvider",
    "ScriptedToolCall",
    "ScriptedTurn",
    "ScriptedUsage",
    "StopReason",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "classify_status",
    "error_from_response",
    "error_from_transport",
    "open_provider",
    "parse_model_option",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
