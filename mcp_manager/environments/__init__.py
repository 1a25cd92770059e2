"""Skills' declared dependencies, installed once: :class:`EnvironmentBuilder`, for the manager.

A skill version that declares Python or Node dependencies (a ``DependencySpec``; what its
scripts import and the operator's base environment join it) gets an *environment*: the
packages installed by pip (``--target``) and npm (``node_modules``), packed into one tar.gz and
stored under ``keys.environment_key(skill, version, runtime, platform)``, where the manager
passes the spec's digest as `version` (so versions of a skill with the same dependencies
share one), `runtime` names the executor image's interpreters (``cp311-node20``) and `platform` its
platform (``linux-x86_64``). The archive holds ``python/``, ``node/node_modules/`` (with
npm's ``package.json`` and lock) and ``skillweave-environment.json`` (spec digest, runtime,
platform, time of the build): regular files and folders only (what the executor unpacks),
at most ``max_bytes`` of them. The key holds the digest of what is installed, so a stored
environment never goes stale: it is built once and read ever after. Packages that were inferred
(``DependencySpec.inferred``) are installed after the declared ones, on a best-effort basis:
all at once, else one by one, each that fails skipped and said so in the log and the
manifest's ``skipped``; a declared package that fails fails the build.

The package's modules, top down (``executions`` and ``app`` import this front only):

- ``_builder``: :class:`EnvironmentBuilder`, finds or builds an environment once (in this
  process and across managers sharing a store, by a claim).
- ``_workshop``: one build in a fresh folder, and what it leaves in the store (the archive,
  its log, a failure record).
- ``_installers``: pip and npm installing a spec, declared packages then inferred ones.
- ``_sandbox``: the build sandbox (bubblewrap), where pip and npm run.
- ``_requirements``: the builder's own check of a spec, before anything is built.
- ``_toolchain``: the executor's Python and node, probed once (they name the key).
- ``_packing``: checking what a build left and writing the tar.gz.
- ``_build_log``: the culprit package in pip's or npm's output, and the part of a log kept.
- ``_failure``: the failure the collaborators raise and the builder records.

pip and npm do the resolving and installing; this package writes by hand only what neither does:
the sandbox, the once-only claim, reading their logs for the culprit package, and the archive.
"""

from __future__ import annotations

from mcp_manager.environments._builder import Environment, EnvironmentBuilder
from mcp_manager.environments._packing import ENVIRONMENT_MANIFEST

__all__ = ["ENVIRONMENT_MANIFEST", "Environment", "EnvironmentBuilder"]
