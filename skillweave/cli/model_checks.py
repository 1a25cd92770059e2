"""The model checks of ``skillweave doctor`` and of the long-running commands' start-up
(:mod:`skillweave.cli.checks` runs them; what they share is :mod:`skillweave.cli.probe`).

- **model**: the default model, if there is one (servers start without: each run then names
  its own, ``llm.factory.default_model_problem``), and every model profile, have what they
  need: credentials, and an endpoint that answers a listing of its models (no tokens spent);
- **agents** (``doctor``): the agents stored for the API (``api.agent_store.AgentStore``) whose
  model does not resolve, as the API resolves it when a run of theirs is submitted: such a run
  is refused.
"""

from __future__ import annotations

from typing import Final

from skillweave.cli.probe import TIMEOUT, Check, Probe, Status, first_line
from skillweave.config import ModelProfile
from skillweave.errors import ConfigError
from skillweave.terminal import counted

__all__ = ["agents_check", "model_check"]

_AGENTS_SHOWN: Final = 5


async def _model_profile(
    label: str, setting: str, profile: ModelProfile
) -> tuple[Status, str, bool]:
    """One profile: (status, detail, transient)."""
    from pathlib import Path

    import httpx

    from skillweave.llm import DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_OPENAI_BASE_URL, check_profile

    if profile.provider == "scripted":
        if Path(profile.name).is_file():
            return "ok", f"{label}: replays the script {profile.name}", False
        return (
            "warn",
            f"{label}: the scripted model ({profile.name}) answers from a script: set "
            f"{setting}PROVIDER, {setting}NAME and {setting}API_KEY for a real one",
            False,
        )
    try:
        check_profile(profile, what=label, setting=setting)
    except ConfigError as exc:
        return "fail", str(exc), False
    openai = profile.provider == "openai"
    base = profile.base_url or (DEFAULT_OPENAI_BASE_URL if openai else DEFAULT_ANTHROPIC_BASE_URL)
    base = base.rstrip("/")
    key = profile.api_key.get_secret_value() if profile.api_key is not None else ""
    headers = (
        ({"Authorization": f"Bearer {key}"} if key else {})
        if openai
        else {"x-api-key": key, "anthropic-version": "2023-06-01"}
    )
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            answer = await client.get(f"{base}/models", headers=headers)
    except httpx.HTTPError as exc:
        return "fail", f"{label}: cannot reach {base} ({type(exc).__name__})", True
    if answer.status_code in (401, 403):
        return "fail", f"{label}: {base} refuses {setting}API_KEY ({answer.status_code})", False
    if answer.is_error:
        return "warn", f"{label}: {base}/models answered {answer.status_code}", False
    return "ok", f"{label} at {base} answers", False


async def model_check(probe: Probe) -> Check:
    """The default model, if one is set (none: a warning), and every profile; the worst line
    of them. A server (worker, API) starts whatever its default says: its failure is a
    warning there."""
    from skillweave.llm import NAME_A_MODEL, default_model_problem

    model = probe.settings.model
    answers: list[tuple[Status, str, bool]] = []
    if not model.configured:
        answers.append(("warn", f"{default_model_problem(model)}: {NAME_A_MODEL}", False))
    else:
        said = await _model_profile(f"model '{model.provider}:{model.name}'", "MODEL__", model)
        if said[0] == "fail" and probe.role in ("worker", "api"):
            said = ("warn", f"{said[1]}; until it is fixed, {NAME_A_MODEL}", False)
        answers.append(said)
    profiles: list[tuple[str, str, ModelProfile]] = [
        (f"model profile {name!r}", f"MODEL__PROFILES__{name.upper()}__", profile)
        for name, profile in sorted(model.profiles.items())
    ]
    answers += [await _model_profile(*each) for each in profiles]
    worst: Status = "ok"
    for status, _, _ in answers:
        if status == "fail" or (status == "warn" and worst == "ok"):
            worst = status
    shown = [detail for status, detail, _ in answers if status == worst]
    transient = all(transient for status, _, transient in answers if status == "fail")
    return Check("model", worst, "; ".join(shown), transient=worst == "fail" and transient)


async def agents_check(probe: Probe) -> Check:
    """The agents stored for the API (``api.agent_store.AgentStore``) whose model does not resolve
    here, as the API would resolve it when a run of theirs is submitted."""
    from skillweave.api import AgentStore
    from skillweave.cli.compose import open_store
    from skillweave.llm import default_model_problem, resolve_model

    settings = probe.settings
    try:
        async with open_store(settings) as store:
            agents = await AgentStore(store).list()
    except Exception as exc:  # the store check says what is wrong with the store
        return Check("agents", "warn", f"not read from the store: {first_line(exc)}")
    if not agents:
        return Check("agents", "ok", "none stored")
    # As the API resolves it: on the temporal engine its workers hold the default's key.
    here = settings.workflow.execution_engine == "direct"
    missing = default_model_problem(settings.model, runs_here=here)
    unresolved = []
    for agent in agents:
        if not agent.model_id:
            if missing is not None:
                unresolved.append(f"{agent.name!r} ({agent.id}) names none and {missing}")
            continue
        try:
            resolve_model(settings.model, agent.model_id)
        except ConfigError as exc:
            unresolved.append(f"{agent.name!r} ({agent.id}): {first_line(exc)}")
    if not unresolved:
        return Check("agents", "ok", f"{counted(len(agents), 'stored agent')}, each with a model")
    shown = "; ".join(unresolved[:_AGENTS_SHOWN])
    if len(unresolved) > _AGENTS_SHOWN:
        shown += f"; and {len(unresolved) - _AGENTS_SHOWN} more"
    return Check(
        "agents",
        "warn",
        f"{len(unresolved)} of {counted(len(agents), 'stored agent')} "
        f"{'has' if len(unresolved) == 1 else 'have'} no model that "
        f"resolves (their runs are refused): {shown}; give each a model_id "
        "(PATCH /v1/agents/{id}) or set a default model",
    )
