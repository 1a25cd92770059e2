"""Choosing a provider: which model a run names (:func:`resolve_model`), and opening it.

A run's model is named by its agent (``model`` in a spec, ``model_id`` in the API, ``--model``
on the CLI): nothing (the default, ``MODEL__*``), a profile (``MODEL__PROFILES__<NAME>__*``) or
``provider:name``. :func:`resolve_model` turns the name into a :class:`ModelProfile`, checked
without contacting anything; :func:`open_provider` opens one; :class:`ModelProviders` keeps the
providers a process opened, so one worker serves runs of several models.

**A scripted model a request names** (``scripted:NAME`` in an API agent's ``model_id`` or a
run's ``model``) replays a file of the machine that resolves it. A server (the control API, a
worker, ``skillweave dev``) resolves names it did not write, so there it is only a script
inside ``MODEL__SCRIPTS_DIR`` (:func:`requested_script`, the one rule), and every refusal reads
the same whether or not a file of that name exists: a client cannot probe the server's files
with it. Unset, servers refuse such models. The local CLI names models for its own user and
reads any file (``any_script=True``): ``run``'s ``--model`` and agent spec (resolved by
``skillweave.cli.agent_run.choose_model``, and again by its direct engine's providers), and the
``--model`` a ``worker`` or ``dev`` is started with (its default model). The default model
and the profiles are the operator's settings and are taken as configured.

**The default model may be absent** (:func:`default_model_problem`): nothing set in
``MODEL__PROVIDER``/``MODEL__NAME`` (the built-in ``scripted:demo`` is a placeholder, no model),
or a configured default that cannot be used. Servers start without one: a run must then name its
model (:data:`NAME_A_MODEL`), and one that names none is refused when it is submitted (the API)
or failed for good (a worker). The API gives a run its default model explicitly, as
``default:provider:name`` (:func:`default_model_name`): a worker runs it on its own default, with
its endpoint, key and retries, only when that is the same model, and otherwise fails the run for
good saying the two differ (:class:`ModelProviders`). Only runs name a model so: an agent's
``model_id`` or ``--model`` cannot (``default`` is no provider).

A ``provider:name`` takes the default's endpoint and key only when they were configured for
that provider (or for no real one: ``MODEL__PROVIDER`` unset or ``scripted``, which is how
``MODEL__BASE_URL=… MODEL__API_KEY=… skillweave run --model openai:NAME`` reaches a local server).
Otherwise it gets the provider's public endpoint and no key: a key is only ever sent to the
endpoint it was configured with.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path, PurePath
from typing import Final, Literal, assert_never, cast, get_args

import httpx

from skillweave.config import PROFILE_NAME_PATTERN, ModelProfile, ModelSettings
from skillweave.errors import ConfigError
from skillweave.llm.anthropic import DEFAULT_ANTHROPIC_BASE_URL, AnthropicProvider
from skillweave.llm.base import ModelProvider
from skillweave.llm.openai import DEFAULT_OPENAI_BASE_URL, OpenAIProvider
from skillweave.llm.scripted import ScriptedProvider

__all__ = [
    "NAME_A_MODEL",
    "ModelProviders",
    "ProviderKind",
    "check_profile",
    "default_model_name",
    "default_model_problem",
    "describe_default",
    "describe_model",
    "names_default",
    "open_default_provider",
    "open_provider",
    "parse_model_option",
    "requested_script",
    "resolve_model",
]

ProviderKind = Literal["openai", "anthropic", "scripted"]
"""The providers ``MODEL__PROVIDER`` and ``--model`` accept (those of ``ModelSettings``)."""

_MODEL_OPTION_HINT = (
    "expected PROVIDER:NAME, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5 "
    "or scripted:path/to/script.yaml"
)
_OPENAI_API_HOST = "api.openai.com"
_log = logging.getLogger("skillweave.models")
SCRIPT_NAME_MAX_CHARS: Final = 1024
"""The longest ``NAME`` of a requested ``scripted:NAME``; a longer one is refused unread."""
_NOT_A_SERVED_SCRIPT: Final = (
    "a scripted model named by a request must be a script file inside MODEL__SCRIPTS_DIR,"
    " named by its path there (scripted:NAME.yaml)"
)


NAME_A_MODEL: Final = (
    "each run must name its model: an agent's model_id (API) or model (spec) or run's --model,"
    " as a profile (MODEL__PROFILES__<NAME>__PROVIDER, __NAME…) or PROVIDER:NAME; or set"
    " MODEL__PROVIDER and MODEL__NAME for a default"
)
"""What to do when there is no default model, for every message that says so."""


def default_model_problem(settings: ModelSettings, *, runs_here: bool = True) -> str | None:
    """Why there is no default model (``MODEL__*``), in one line; None when there is one.

    It is absent when ``MODEL__PROVIDER`` and ``MODEL__NAME`` name no model (the built-in
    ``scripted:demo`` is a placeholder: ``ModelSettings.configured``), or, in a process that
    runs it (`runs_here`), when the configured one cannot be used here (:func:`check_profile`:
    a missing key, a script that is not a file). A process whose runs run on workers (the API
    on the temporal engine) names the default to them and need not hold its key. Nothing is
    contacted.
    """
    if not settings.configured:
        return "no default model is configured (MODEL__PROVIDER, MODEL__NAME)"
    if not runs_here:
        return None
    try:
        resolve_model(settings, None)
    except ConfigError as exc:
        return str(exc)
    return None


_DEFAULT_PREFIX: Final = "default:"


def default_model_name(settings: ModelSettings | str) -> str:
    """The default model as a run is given it explicitly (the API's runs of agents that name
    none): ``default:provider:name``, as configured (`settings`, or its ``provider:name``, as
    a worker's identity names it). See :class:`ModelProviders`."""
    named = settings if isinstance(settings, str) else f"{settings.provider}:{settings.name}"
    return f"{_DEFAULT_PREFIX}{named}"


def open_default_provider(settings: ModelSettings, *, required: bool) -> ModelProvider | None:
    """The default model's provider. A server (`required` False) starts without one when
    there is none (:func:`default_model_problem`) or it cannot be opened: it says so in one
    log line and returns None, and its runs must name their model.

    Raises:
        ConfigError: `required`, and the default cannot be opened (see :func:`open_provider`).
    """
    if required:
        return open_provider(settings)
    problem = default_model_problem(settings)
    if problem is None:
        try:
            return open_provider(settings)
        except ConfigError as exc:
            problem = str(exc)
    _log.warning("%s; %s", problem, NAME_A_MODEL)
    return None


def describe_default(provider: ModelProvider | None) -> str:
    """A process's default model as its start-up lines show it."""
    return "none (each run names its own)" if provider is None else provider.name


def names_default(named: str | None) -> bool:
    """Whether `named` is a default model given by name (:func:`default_model_name`)."""
    return bool(named) and str(named).startswith(_DEFAULT_PREFIX)


def _key_of(settings: ModelSettings, named: str | None) -> str:
    """How :class:`ModelProviders` keeps the model `named`: ``""`` for the default (None, empty,
    or :func:`default_model_name` of this very default), else the name.

    Raises:
        ConfigError: `named` is another process's default, and this one's differs (or it has
            none): the run would not run the model it was given.
    """
    if not named:
        return ""
    if not named.startswith(_DEFAULT_PREFIX):
        return named
    given = named.removeprefix(_DEFAULT_PREFIX)
    ours = f"{settings.provider}:{settings.name}" if settings.configured else None
    if given != ours:
        raise ConfigError(
            f"the run was given the default model {given!r} of the process that started it, and "
            + (f"this one's default is {ours!r}" if ours else "this one has no default model")
            + ": give both the same MODEL__PROVIDER and MODEL__NAME"
        )
    return ""


def parse_model_option(value: str, *, what: str = "--model") -> tuple[ProviderKind, str]:
    """Split the CLI's ``--model PROVIDER:NAME`` into the provider and the name.

    For ``scripted`` the name is the path of the script. Only the first colon splits, so a
    name may hold colons (``openai:qwen2.5:7b``).

    Raises:
        ConfigError: no colon, an empty part, or an unknown provider.
    """
    provider, colon, name = value.partition(":")
    provider, name = provider.strip().lower(), name.strip()
    if not colon or not provider or not name:
        raise ConfigError(f"{what} {value!r}: {_MODEL_OPTION_HINT}")
    if provider not in get_args(ProviderKind):
        choices = ", ".join(get_args(ProviderKind))
        raise ConfigError(
            f"{what} {value!r}: unknown provider {provider!r}, choose one of {choices} "
            f"({_MODEL_OPTION_HINT})"
        )
    return cast(ProviderKind, provider), name


def requested_script(name: str, *, folder: Path | None) -> Path:
    """The script a ``scripted:NAME`` model named by a request replays on a server: the file
    `name` inside `folder` (``MODEL__SCRIPTS_DIR``), as a resolved path.

    `name` is judged before any file is touched: no NUL or control character, no ``..``, and an
    absolute path only inside `folder`. Only then is the path resolved (symlinks followed): it
    must still lie inside `folder` and be a file.

    Raises:
        ConfigError: `folder` is None, or `name` is not a file inside it. The message is the
            same for every name, whether or not a file exists there (no probing a server's
            files); only whether the server has a folder shows.
    """
    refusal = _NOT_A_SERVED_SCRIPT + ("; this server has none set" if folder is None else "")
    if folder is None or not name or len(name) > SCRIPT_NAME_MAX_CHARS:
        raise ConfigError(refusal)
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in name):
        raise ConfigError(refusal)
    try:
        configured = Path(os.path.abspath(folder.expanduser()))
        root = configured.resolve(strict=True)
        given = PurePath(name)
        if ".." in given.parts:
            raise ConfigError(refusal)
        if given.is_absolute():  # inside the folder as configured or as resolved; else refused
            inside = [given.relative_to(r) for r in (configured, root) if given.is_relative_to(r)]
            given = inside[0]  # IndexError: outside the folder, judged unread
        resolved = (root / given).resolve(strict=True)
        if resolved.is_relative_to(root) and resolved.is_file():
            return resolved
    except (OSError, ValueError, IndexError, RuntimeError):
        pass  # a missing folder or file, a name too long, a symlink loop: the same refusal
    raise ConfigError(refusal)


def resolve_model(
    settings: ModelSettings, named: str | None, *, any_script: bool = False
) -> ModelProfile:
    """The profile of the model `named` (None or empty: the default). Nothing is contacted.

    Args:
        settings: the default model, the profiles and ``scripts_dir``.
        named: what the agent, run or ``--model`` names.
        any_script: `named` was written by this process's own user (the local CLI), so
            a ``scripted:PATH`` may be any file; otherwise (a server resolving a request's
            name) only a script inside ``MODEL__SCRIPTS_DIR`` (:func:`requested_script`).

    Raises:
        ConfigError: an unknown profile, a ``provider:name`` that does not parse, or a model
            whose credentials or endpoint are missing or unusable (see `check_profile`); the
            message names the model and the setting to fix.
    """
    if not named:
        profile = ModelProfile.model_validate(
            settings.model_dump(exclude={"profiles", "scripts_dir"})
        )
        check_profile(profile, what="the default model (MODEL__*)")
        return profile
    if ":" not in named:
        profile = settings.profiles.get(named)
        if profile is None:
            known = ", ".join(sorted(settings.profiles)) or "none"
            hint = (
                "set MODEL__PROFILES__<NAME>__PROVIDER and __NAME"
                if re.fullmatch(PROFILE_NAME_PATTERN, named)
                else "a profile name is lowercase letters, digits, '-' and '_'"
            )
            raise ConfigError(
                f"unknown model profile {named!r} (configured: {known}): {hint}, or name a"
                " model as PROVIDER:NAME"
            )
        check_profile(
            profile, what=f"model profile {named!r}", setting=f"MODEL__PROFILES__{named.upper()}__"
        )
        return profile
    provider, name = parse_model_option(named, what="model")
    if provider == "scripted" and not any_script:
        name = str(requested_script(name, folder=settings.scripts_dir))
    profile = ModelProfile(provider=provider, name=name)
    if settings.provider in (provider, "scripted"):
        # The default's endpoint and key were configured for this provider (or for none).
        profile = profile.model_copy(
            update={
                "base_url": settings.base_url,
                "api_key": settings.api_key,
                "timeout_seconds": settings.timeout_seconds,
            }
        )
        check_profile(profile, what=f"model {named!r}")
        return profile
    check_profile(
        profile,
        what=f"model {named!r}",
        hint=(
            f"MODEL__API_KEY and MODEL__BASE_URL belong to the default model ({settings.provider})"
            f" and are not sent to {provider}; configure a profile for it"
            f" (MODEL__PROFILES__<NAME>__PROVIDER={provider}, __NAME, __API_KEY)"
        ),
    )
    return profile


def check_profile(
    profile: ModelProfile, *, what: str, setting: str = "MODEL__", hint: str | None = None
) -> None:
    """Refuse a profile that cannot work, without contacting anything: a key it needs is
    missing, its base URL is not an http(s) URL, or its script is not a file.

    Args:
        profile: the profile.
        what: how the message names it (``model 'openai:gpt-4o'``, ``model profile 'local'``).
        setting: the prefix of its settings (``MODEL__``, ``MODEL__PROFILES__LOCAL__``).
        hint: what to do about a missing key, instead of setting ``<setting>API_KEY``.

    Raises:
        ConfigError: one line naming `what`, the problem and how to fix it.
    """
    api_key = profile.api_key.get_secret_value() if profile.api_key is not None else None
    match profile.provider:
        case "scripted":
            if not Path(profile.name).is_file():
                raise ConfigError(
                    f"{what}: model script {profile.name!r} not found: set {setting}NAME to a"
                    " script file (or pass --model scripted:PATH)"
                )
        case "openai":
            base_url = profile.base_url or DEFAULT_OPENAI_BASE_URL
            _check_base_url(base_url, what=what, setting=setting)
            if not api_key and httpx.URL(base_url).host == _OPENAI_API_HOST:
                raise ConfigError(
                    f"{what} needs an API key at api.openai.com: "
                    + (
                        hint
                        or f"set {setting}API_KEY (or {setting}BASE_URL to an OpenAI-compatible"
                        " server that needs none)"
                    )
                )
        case "anthropic":
            _check_base_url(
                profile.base_url or DEFAULT_ANTHROPIC_BASE_URL, what=what, setting=setting
            )
            if not api_key:
                raise ConfigError(f"{what} needs an API key: " + (hint or f"set {setting}API_KEY"))
        case _:
            assert_never(profile.provider)


def describe_model(profile: ModelProfile, named: str | None = None) -> str:
    """``provider:name`` of a profile, with the profile's name when it has one: for run
    records, the UI and logs (never a key or an endpoint's credentials)."""
    model = f"{profile.provider}:{profile.name}"
    if named and ":" not in named:
        return f"{model} (profile {named})"
    return model


def open_provider(
    settings: ModelProfile,
    *,
    model: str | None = None,
    script: Path | None = None,
    setting: str = "MODEL__",
    transport: httpx.AsyncBaseTransport | None = None,
) -> ModelProvider:
    """The provider of a profile (``MODEL__*`` settings are the default profile). Nothing is
    contacted here.

    Args:
        settings: the profile; ``name`` is the model, or for ``scripted`` the path of the
            script.
        model: replaces ``settings.name`` (the NAME of ``--model``).
        script: for ``scripted``, the script to replay, whatever the name says.
        setting: the prefix of the profile's settings, for messages (see `check_profile`).
        transport: an httpx transport for the HTTP providers (tests).

    Raises:
        ConfigError: see `check_profile`, or the script is not a script.
    """
    profile = ModelProfile.model_validate(
        {
            **settings.model_dump(include=set(ModelProfile.model_fields)),
            "name": str(script) if script is not None else (model or settings.name),
        }
    )
    check_profile(profile, what=f"model {profile.provider}:{profile.name}", setting=setting)
    api_key = profile.api_key.get_secret_value() if profile.api_key is not None else None
    match profile.provider:
        case "scripted":
            return ScriptedProvider.from_file(Path(profile.name))
        case "openai":
            return OpenAIProvider(
                model=profile.name,
                base_url=profile.base_url or DEFAULT_OPENAI_BASE_URL,
                api_key=api_key,
                timeout=profile.timeout_seconds,
                transport=transport,
            )
        case "anthropic":
            return AnthropicProvider(
                model=profile.name,
                base_url=profile.base_url or DEFAULT_ANTHROPIC_BASE_URL,
                api_key=api_key,
                timeout=profile.timeout_seconds,
                transport=transport,
            )
        case _:
            assert_never(profile.provider)


class ModelProviders:
    """The providers of the models this process's runs name, each opened on first use and
    kept until `aclose` (one per name: a profile, ``provider:name``, or None for the default).

    Args:
        settings: the default model and the profiles.
        default: the default's provider when it is opened already (it is closed here too).
        transport: an httpx transport for the HTTP providers (tests).
        any_script: the runs are this process's user's own (``run`` sets it on its direct
            engine's providers): a ``scripted:PATH`` they name may be any file. False (a
            worker, the API, ``dev``): only a script inside ``MODEL__SCRIPTS_DIR`` (see
            :func:`resolve_model`).

    Attributes:
        any_script: as given; read at each name's first resolution.
    """

    def __init__(
        self,
        settings: ModelSettings,
        *,
        default: ModelProvider | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        any_script: bool = False,
    ) -> None:
        self.settings = settings
        self.any_script = any_script
        self._transport = transport
        self._opened: dict[str, ModelProvider] = {}
        self._profiles: dict[str, ModelProfile] = {}
        if default is not None:
            self._opened[""] = default

    @property
    def default(self) -> ModelProvider:
        """The default model's provider (opened now if it was not)."""
        return self.provider_for(None)

    def provider_for(self, named: str | None) -> ModelProvider:
        """The provider of the model `named` (None, or :func:`default_model_name` of this
        default: the default).

        Raises:
            ConfigError: `named` does not resolve (see `resolve_model` and `_key_of`); not
                retryable.
        """
        key = _key_of(self.settings, named)
        opened = self._opened.get(key)
        if opened is None:
            opened = open_provider(self.profile_for(key or None), transport=self._transport)
            self._opened[key] = opened
        return opened

    def profile_for(self, named: str | None) -> ModelProfile:
        """The profile of the model `named` (None, or :func:`default_model_name` of this
        default: the default), resolved once.

        Raises:
            ConfigError: `named` does not resolve (see `resolve_model` and `_key_of`).
        """
        key = _key_of(self.settings, named)
        profile = self._profiles.get(key)
        if profile is None:
            profile = resolve_model(self.settings, key or None, any_script=self.any_script)
            self._profiles[key] = profile
        return profile

    async def aclose(self) -> None:
        """Close every provider opened."""
        opened, self._opened = list(self._opened.values()), {}
        for provider in opened:
            await provider.aclose()


def _check_base_url(base_url: str, *, what: str, setting: str) -> None:
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise ConfigError(
            f"{what}: {setting}BASE_URL {base_url!r} is not an http(s) URL, e.g."
            " http://localhost:8000/v1"
        )
