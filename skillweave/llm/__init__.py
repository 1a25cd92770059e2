"""Model providers: the :class:`ModelProvider` protocol, its three providers, and the messages
they share.

- :class:`OpenAIProvider`: OpenAI Chat Completions and the servers that copy it (vLLM, Ollama,
  LM Studio…);
- :class:`AnthropicProvider`: the Anthropic Messages API;
- :class:`ScriptedProvider`: replays a YAML script, for tests and the offline demo.

:func:`resolve_model` turns what an agent names (nothing, a profile of ``MODEL__PROFILES__``
or ``provider:name``) into a checked profile, :func:`open_provider` opens one, and
:class:`ModelProviders` keeps those a process opened. Providers never retry;
:mod:`skillweave.llm.retry` decides whether a failed call may be retried, and the caller does it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillweave.lazy import lazy_exports

if TYPE_CHECKING:
    from skillweave.llm.anthropic import DEFAULT_ANTHROPIC_BASE_URL, AnthropicProvider
    from skillweave.llm.base import ModelProvider
    from skillweave.llm.factory import (
        NAME_A_MODEL,
        ModelProviders,
        ProviderKind,
        check_profile,
        default_model_name,
        default_model_problem,
        describe_default,
        describe_model,
        names_default,
        open_default_provider,
        open_provider,
        parse_model_option,
        resolve_model,
    )
    from skillweave.llm.messages import (
        RAW_ARGUMENTS_KEY,
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
    "ModelProviders": "factory",
    "ModelResponse": "messages",
    "OpenAIProvider": "openai",
    "ProviderKind": "factory",
    "RAW_ARGUMENTS_KEY": "messages",
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
    "check_profile": "factory",
    "classify_status": "retry",
    "describe_model": "factory",
    "error_from_response": "retry",
    "error_from_transport": "retry",
    "open_provider": "factory",
    "parse_model_option": "factory",
    "resolve_model": "factory",
    "NAME_A_MODEL": "factory",
    "default_model_name": "factory",
    "default_model_problem": "factory",
    "describe_default": "factory",
    "names_default": "factory",
    "open_default_provider": "factory",
}

__all__ = [
    "DEFAULT_ANTHROPIC_BASE_URL",
    "DEFAULT_OPENAI_BASE_URL",
    "NAME_A_MODEL",
    "RAW_ARGUMENTS_KEY",
    "AnthropicProvider",
    "Message",
    "ModelProvider",
    "ModelProviders",
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
    "check_profile",
    "classify_status",
    "default_model_name",
    "default_model_problem",
    "describe_default",
    "describe_model",
    "error_from_response",
    "error_from_transport",
    "names_default",
    "open_default_provider",
    "open_provider",
    "parse_model_option",
    "resolve_model",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
