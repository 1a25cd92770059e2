"""The builder's own check of a dependency spec, before anything is built.

Discovery checks a spec too, but the builder must not trust it: the spec becomes a
requirements file and a package.json, where an option, a comment or a path would be obeyed.
:func:`check_spec` refuses anything but plain requirements and registry ranges (and more than
``max_dependencies`` of them); :func:`check_python` a ``requires_python`` the executor's
interpreter does not meet. The builder (``_builder``) calls both first, in ``ensure``.
"""

from __future__ import annotations

import re
from typing import Final

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from mcp_manager.environments._toolchain import Interpreter
from skillweave.errors import DependencyError
from skillweave.skills.dependencies import DependencySpec

__all__ = ["check_python", "check_spec"]

_MAX_REQUIREMENT_CHARS: Final = 1000
_MAX_NPM_NAME_CHARS: Final = 214  # npm's own limit
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
# What a requirements file reads as other than a requirement: an option on the line (-r,
# --index-url, -e…), a comment, a line continuation, an environment variable.
_REQUIREMENTS_SYNTAX: Final = re.compile(r"(?:^|\s)[-#]|\\|\$\{")
# validate-npm-package-name (as discovery reads it) and a plain range: no protocol (file:,
# link:, git+…), path or URL can be written with these characters.
_NPM_NAME: Final = re.compile(r"(?:@[a-z0-9~-][a-z0-9._~-]*/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*")
_NPM_RANGE: Final = re.compile(r"[0-9A-Za-z.^~<>=|*+\- ]{1,256}")


def check_spec(skill: str, spec: DependencySpec, limit: int) -> None:
    """The builder's own check of the spec. Discovery checks it too, but the builder must
    not trust it: the spec becomes a requirements file and a package.json, where an option, a
    comment or a path would be obeyed."""
    count = len(spec.python) + len(spec.node)
    if count > limit:
        raise DependencyError(
            f"skill {skill!r} declares {count} dependencies, more than the {limit} allowed "
            "(sandbox.environments.max_dependencies)"
        )
    for text in spec.python:
        problem = _python_problem(text)
        if problem is not None:
            raise DependencyError(f"skill {skill!r}: Python dependency {text!r} {problem}")
    for name, version_range in spec.node:
        if (
            not isinstance(name, str)
            or len(name) > _MAX_NPM_NAME_CHARS
            or not _NPM_NAME.fullmatch(name)
        ):
            raise DependencyError(f"skill {skill!r}: {name!r} is not an npm package name")
        if not isinstance(version_range, str) or not _NPM_RANGE.fullmatch(version_range):
            raise DependencyError(
                f"skill {skill!r}: Node dependency {name!r}: {version_range!r} is not a "
                "registry version range (no protocols, paths or URLs)"
            )


def _python_problem(text: object) -> str | None:
    if (
        not isinstance(text, str)
        or len(text) > _MAX_REQUIREMENT_CHARS
        or _CONTROL.search(text)
        or _REQUIREMENTS_SYNTAX.search(text)
    ):
        return "is not a plain requirement (options, comments and escapes are refused)"
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return "is not a PEP 508 requirement"
    if requirement.url:
        return "is a direct reference (a URL); dependencies come from the index"
    return None


def check_python(skill: str, requires_python: str, interpreter: Interpreter) -> None:
    try:
        fits = SpecifierSet(requires_python).contains(interpreter.version, prereleases=True)
    except InvalidSpecifier:
        raise DependencyError(
            f"skill {skill!r}: requires-python {requires_python!r} is not a version specifier"
        ) from None
    if not fits:
        raise DependencyError(
            f"skill {skill!r} requires Python {requires_python}; the executor's is "
            f"{interpreter.version}"
        )
