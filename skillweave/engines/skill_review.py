"""The model review of new skill versions (``skills.scan.review_model``): the
:class:`~skillweave.skills.review.SkillReviewer` that asks a model.

It lives here, above both ``skillweave.skills`` and ``skillweave.llm`` (sibling layers that may
not import each other): :func:`skill_reviewer` makes one from the settings for each door that
admits versions (the CLI's install, the API's uploads and installs, the worker's
``create_skill`` and ``publish_skill``), which hands it to ``skills.Admissions`` or applies it to
a draft with :func:`~skillweave.skills.review.review_report` (the time bound and the rule that
a review never lowers the scanner's verdict live there).

One review is one model call: the fixed system prompt (``skills.review.rubric``), the skill's
files as one bounded user message (``skills.review.bundle``), and the tool ``report_findings``
whose arguments are the answer (a plain JSON answer is read too). The provider is opened for
the call and closed after it; it is not retried (a failed review is said in the report, and the
scanner's findings decide). An unknown or unusable profile, an unreachable model or an error
answer all end as ``not reviewed: <why>`` in the report's review, never as a refusal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final

import httpx

from skillweave.config import ModelSettings, ScanSettings, Settings
from skillweave.errors import ConfigError, ModelError
from skillweave.llm import (
    RAW_ARGUMENTS_KEY,
    Message,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ToolSpec,
    open_provider,
    resolve_model,
)
from skillweave.skills.review import (
    REVIEW_TOOL,
    REVIEW_TOOL_DESCRIPTION,
    REVIEW_TOOL_SCHEMA,
    SYSTEM_PROMPT,
    bundle_files,
    judged,
    not_reviewed,
    read_answer,
)
from skillweave.skills.scan import ScanReport

__all__ = ["REVIEW_OUTPUT_TOKENS", "ModelSkillReviewer", "skill_reviewer"]

REVIEW_OUTPUT_TOKENS: Final = 4096
"""The most tokens the review's answer may take (20 findings fit well within it)."""
_TOOL: Final = ToolSpec(
    name=REVIEW_TOOL, description=REVIEW_TOOL_DESCRIPTION, input_schema=REVIEW_TOOL_SCHEMA
)


class ModelSkillReviewer:
    """Reviews skill versions with the model `profile` names.

    Args:
        profile: ``skills.scan.review_model``: a profile of ``models`` (or PROVIDER:NAME).
        models: the model settings the profile is resolved in.
        scan: the review's bounds (``review_max_chars``, ``review_file_max_chars``).
        provider: the provider to ask instead of opening the profile's (tests); not closed.
        transport: an httpx transport for the HTTP providers (tests).
    """

    def __init__(
        self,
        profile: str,
        *,
        models: ModelSettings,
        scan: ScanSettings,
        provider: ModelProvider | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._profile = profile
        self._models = models
        self._scan = scan
        self._provider = provider
        self._transport = transport

    @property
    def profile(self) -> str:
        """The model profile asked."""
        return self._profile

    async def review(self, files: Mapping[str, bytes], report: ScanReport) -> ScanReport:
        """`report` with the model's findings joined, or with why there are none to join."""
        scan = self._scan
        bundle = await asyncio.to_thread(
            bundle_files,
            files,
            max_chars=scan.review_max_chars,
            file_max_chars=scan.review_file_max_chars,
        )
        try:
            model, provider = self._open()
        except ConfigError as exc:
            return not_reviewed(report, self._profile, str(exc), truncated=bundle.truncated)
        request = ModelRequest(
            model=model,
            system=SYSTEM_PROMPT,
            messages=(Message(role="user", text=bundle.text),),
            tools=(_TOOL,),
            max_output_tokens=REVIEW_OUTPUT_TOKENS,
            temperature=0,
        )
        try:
            response = await provider.complete(request)
        except ModelError as exc:
            return not_reviewed(
                report, self._profile, f"the model failed: {exc}", truncated=bundle.truncated
            )
        finally:
            if provider is not self._provider:
                await provider.aclose()
        answer = read_answer(_calls(response), response.message.text)
        if isinstance(answer, str) and response.stop_reason == "max_tokens":
            answer = f"the answer was cut at {REVIEW_OUTPUT_TOKENS} tokens ({answer})"
        return judged(
            report,
            answer,
            bundle,
            profile=self._profile,
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
        )

    def _open(self) -> tuple[str, ModelProvider]:
        """The model's name and its provider.

        Raises:
            ConfigError: the profile does not resolve or cannot be opened.
        """
        if self._provider is not None:
            return self._profile, self._provider
        profile = resolve_model(self._models, self._profile)
        return profile.name, open_provider(profile, transport=self._transport)


def skill_reviewer(
    settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
) -> ModelSkillReviewer | None:
    """The reviewer ``skills.scan.review_model`` names; None when it is unset (no review).
    Nothing is contacted or checked here: a profile that cannot be used says so in each
    report's review."""
    scan = settings.skills.scan
    if not scan.review_model:
        return None
    return ModelSkillReviewer(
        scan.review_model, models=settings.model, scan=scan, transport=transport
    )


def _calls(response: ModelResponse) -> list[tuple[str, dict[str, Any] | str]]:
    """The reply's tool calls as ``skills.review.read_answer`` takes them: arguments the
    provider could not read as an object (kept under ``RAW_ARGUMENTS_KEY``) as their text."""
    calls: list[tuple[str, dict[str, Any] | str]] = []
    for call in response.message.tool_calls:
        raw = call.arguments.get(RAW_ARGUMENTS_KEY)
        unread = set(call.arguments) == {RAW_ARGUMENTS_KEY} and isinstance(raw, str)
        calls.append((call.name, raw if unread else call.arguments))
    return calls
