"""Settings: the one place configuration is read.

Everything configurable comes from environment variables (or a `.env` file) through
:class:`Settings`, with one nested section per concern. Nested fields use `__` as the
delimiter, so `WORKFLOW__EXECUTION_ENGINE=direct` sets ``settings.workflow.execution_engine``
and `SKILLS__DIRS='["./skills"]'` sets ``settings.skills.dirs`` (a plain path, or paths joined by
``os.pathsep``, as a shell user types them, work as well). List and mapping settings otherwise
take JSON. Nothing else in the code base calls ``os.getenv``; callers take a ``Settings``
(tests build one directly) or use :func:`get_settings`, which turns invalid settings into one
:class:`~skillweave.errors.ConfigError` line naming each variable and what it accepts
(:func:`settings_problem`).

This front re-exports every public name; the pieces live in private modules, lowest first:
``_urls`` (the URL check validators share), one module per section (``_workflow``,
``_skills``, ``_models``, ``_storage``, ``_sandbox``, ``_api``, ``_observability``),
``_settings`` (:class:`Settings`), ``_problems`` (:func:`settings_problem`,
:func:`unknown_settings`) and ``_loaded`` (:func:`get_settings`).
"""

from skillweave.config._api import ApiSettings
from skillweave.config._loaded import get_settings
from skillweave.config._models import PROFILE_NAME_PATTERN, ModelProfile, ModelSettings
from skillweave.config._observability import ObservabilitySettings
from skillweave.config._problems import settings_problem, unknown_settings
from skillweave.config._sandbox import (
    CredentialBinding,
    EgressApproval,
    EgressLimits,
    EgressSettings,
    EnvironmentSettings,
    IsolationChoice,
    KubernetesSettings,
    SandboxSettings,
)
from skillweave.config._settings import Settings
from skillweave.config._skills import (
    BUNDLED,
    AuditSettings,
    CatalogMode,
    RegistryKind,
    RegistrySource,
    ScanAction,
    ScanSettings,
    SelectionMode,
    Severity,
    SkillsSettings,
    TrustSettings,
    bundled_skills_dir,
)
from skillweave.config._storage import StorageSettings
from skillweave.config._urls import http_url
from skillweave.config._workflow import (
    WORKER_LIMITS,
    ExecutionEngine,
    WorkflowSettings,
    worker_limits_set,
)

__all__ = [
    "BUNDLED",
    "PROFILE_NAME_PATTERN",
    "WORKER_LIMITS",
    "ApiSettings",
    "AuditSettings",
    "CatalogMode",
    "CredentialBinding",
    "EgressApproval",
    "EgressLimits",
    "EgressSettings",
    "EnvironmentSettings",
    "ExecutionEngine",
    "IsolationChoice",
    "KubernetesSettings",
    "ModelProfile",
    "ModelSettings",
    "ObservabilitySettings",
    "RegistryKind",
    "RegistrySource",
    "SandboxSettings",
    "ScanAction",
    "ScanSettings",
    "SelectionMode",
    "Settings",
    "Severity",
    "SkillsSettings",
    "StorageSettings",
    "TrustSettings",
    "WorkflowSettings",
    "bundled_skills_dir",
    "get_settings",
    "http_url",
    "settings_problem",
    "unknown_settings",
    "worker_limits_set",
]
