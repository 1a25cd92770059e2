"""The process-wide settings, read once (:func:`get_settings`, cached), invalid ones turned
into one :class:`~skillweave.errors.ConfigError` line. Every process entry point calls it."""

from __future__ import annotations

from functools import lru_cache

from pydantic import ValidationError
from pydantic_settings import SettingsError

from skillweave.config._problems import settings_problem
from skillweave.config._settings import Settings
from skillweave.errors import ConfigError

__all__ = ["get_settings"]


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment.

    Raises:
        ConfigError: a setting is invalid; the message is one line naming each such variable
            and the form it accepts (:func:`settings_problem`).
    """
    try:
        return Settings()
    except (ValidationError, SettingsError) as exc:
        raise ConfigError(settings_problem(exc)) from None
