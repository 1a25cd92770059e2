"""The one definition of a runnable request: what the manager checks before it claims an
execution, and what the executor checks again before it touches a file.

Everything an executor would refuse, the manager refuses first, with a 4xx, so the execution
id stays free (a refusal after the claim would be stored as that id's permanent result). The
rules: the script path is a plain relative path inside the package; arguments and environment
values are text a program can receive (no NUL, no lone surrogate, bounded in count and size);
environment names are ``[A-Z_][A-Z0-9_]*`` and do not touch what the executor decides (the
interpreters' and the loader's variables, the fixed base of every script's environment);
input names are plain relative paths too. The executor adds only what needs its file system
(the script exists, no symlink on its way).

Callers get :class:`~skillweave.errors.ExecutionRejectedError` (400) naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from skillweave.errors import ExecutionRejectedError

__all__ = [
    "BASE_ENV_NAMES",
    "MAX_ARGS_BYTES",
    "MAX_ENV_BYTES",
    "MAX_ENV_VARS",
    "MAX_INPUT_BYTES",
    "MAX_PATH_CHARS",
    "MAX_PATH_PART_CHARS",
    "check_args",
    "check_env",
    "check_path",
    "check_run",
    "check_text",
    "clean_script",
]

MAX_ENV_VARS: Final = 256
MAX_ENV_BYTES: Final = 256 * 1024
MAX_ARGS_BYTES: Final = 512 * 1024
MAX_PATH_CHARS: Final = 1024
MAX_PATH_PART_CHARS: Final = 255
MAX_INPUT_BYTES: Final = 512 * 1024 * 1024
"""Most bytes of input files one run gets: with a package and a prepared environment (the
executor's own caps) it stays under the executor's request cap (``EXECUTOR__MAX_BODY_BYTES``,
2 GiB by default), so the executor never refuses what the manager sent."""
_ENV_NAME: Final = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")

BASE_ENV_NAMES: Final = frozenset(
    {
        "PATH",
        "HOME",
        "PWD",
        "LANG",
        "TMPDIR",
        "PYTHONPATH",
        "NODE_PATH",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
    }
)
"""What the executor sets in every script's environment (the request's ``env`` joins it)."""

_RESERVED_NAMES: Final = BASE_ENV_NAMES | {
    "ENV",
    "IFS",
    "LANGUAGE",
    "LOGNAME",
    "SHELL",
    "SHELLOPTS",
    "USER",
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "LOCPATH",
    # The egress proxy's: the executor sets them when a run may reach the network.
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "SKILLWEAVE_EGRESS_SOCKET",
}
_RESERVED_PREFIXES: Final = ("LD_", "PYTHON", "NODE_", "BASH_", "LC_", "MALLOC_", "EXECUTOR__")


def _refuse(reason: str) -> ExecutionRejectedError:
    return ExecutionRejectedError(400, reason)


def check_text(value: str, what: str) -> None:
    """`value` can be passed to a program: no NUL, and UTF-8 text (no lone surrogate)."""
    if "\x00" in value:
        raise _refuse(f"{what} holds a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(f"{what} is not valid text (a lone surrogate character)") from None


def check_path(path: str, what: str) -> tuple[str, ...]:
    """Split a relative path inside a folder into its parts, refusing any that could leave it.

    Raises:
        ExecutionRejectedError: empty, too long, absolute, a backslash or NUL, a ``.``, ``..``
            or empty part, a part over 255 characters, or not text.
    """
    if not path:
        raise _refuse(f"{what}: empty path")
    if len(path) > MAX_PATH_CHARS:
        raise _refuse(f"{what}: path longer than {MAX_PATH_CHARS} characters")
    check_text(path, what)
    if "\\" in path:
        raise _refuse(f"{what} {path!r}: a backslash in the path")
    if path.startswith("/"):
        raise _refuse(f"{what} {path!r}: absolute path; give it relative")
    parts = tuple(path.split("/"))
    if ".." in parts:
        raise _refuse(f"{what} {path!r}: '..' would escape its folder")
    if any(part in {"", "."} for part in parts):
        raise _refuse(f"{what} {path!r}: empty or '.' path component")
    if any(len(part) > MAX_PATH_PART_CHARS for part in parts):
        raise _refuse(f"{what} {path!r}: a component is over {MAX_PATH_PART_CHARS} characters")
    return parts


def clean_script(script: str) -> str:
    """The script's path as the package names it: ``./`` and doubled slashes dropped (as a
    shell would read them), then checked like any path. The manager sends this form on.

    Raises:
        ExecutionRejectedError: see `check_path`.
    """
    if script and "\\" not in script and not script.startswith("/") and "\x00" not in script:
        kept = [part for part in script.split("/") if part not in ("", ".")]
        script = "/".join(kept) or script
    check_path(script, "script")
    return script


def check_args(args: Sequence[str]) -> None:
    """Arguments a program can receive, at most 512 KiB together."""
    size = 0
    for index, arg in enumerate(args):
        check_text(arg, f"args[{index}]")
        size += len(arg.encode("utf-8")) + 1
    if size > MAX_ARGS_BYTES:
        raise _refuse(f"args: more than {MAX_ARGS_BYTES} bytes")


def check_env(env: Mapping[str, str]) -> None:
    """Names the request may set, values a program can receive, bounded in count and size."""
    if len(env) > MAX_ENV_VARS:
        raise _refuse(f"env: more than {MAX_ENV_VARS} variables")
    size = 0
    for name, value in env.items():
        if not _ENV_NAME.fullmatch(name):
            raise _refuse(f"env: {name!r} is not a valid name ([A-Z_][A-Z0-9_]*, 128 at most)")
        if name in _RESERVED_NAMES or name.startswith(_RESERVED_PREFIXES):
            raise _refuse(f"env: {name!r} is reserved; the executor sets the script's environment")
        check_text(value, f"env {name!r}")
        size += len(name) + len(value.encode("utf-8")) + 2
    if size > MAX_ENV_BYTES:
        raise _refuse(f"env: more than {MAX_ENV_BYTES} bytes")


def check_run(
    *,
    script: str,
    args: Sequence[str],
    env: Mapping[str, str],
    inputs: Iterable[str] = (),
    input_bytes: int = 0,
) -> tuple[str, ...]:
    """Everything of a request that no package can make runnable; returns the script's parts.

    Raises:
        ExecutionRejectedError: 400 naming the field; 413 for inputs over `MAX_INPUT_BYTES`.
    """
    if input_bytes > MAX_INPUT_BYTES:
        raise ExecutionRejectedError(
            413, f"inputs: {input_bytes:,} bytes together, over the {MAX_INPUT_BYTES:,}-byte limit"
        )
    parts = tuple(clean_script(script).split("/"))
    check_args(args)
    check_env(env)
    seen: set[str] = set()
    for name in inputs:
        check_path(name, "input")
        if name in seen:
            raise _refuse(f"two inputs would both be inputs/{name}")
        seen.add(name)
    return parts
