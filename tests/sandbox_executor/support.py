"""Helpers shared by the executor's unit and integration tests: packages, forms, processes."""

from __future__ import annotations

import io
import json
import os
import stat
import tarfile
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from typing import Any

TOKEN = "test-executor-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SKILL_MD = "---\nname: demo\ndescription: A skill for executor tests.\n---\n\nRun things.\n"


def make_package(
    files: Mapping[str, str | bytes],
    *,
    top: str | None = "demo",
    executable: tuple[str, ...] = (),
    extra: list[zipfile.ZipInfo | tuple[zipfile.ZipInfo, bytes]] | None = None,
) -> bytes:
    """A skill package ZIP: SKILL.md plus `files`, under `top` (or at the root when None)."""
    prefix = f"{top}/" if top else ""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{prefix}SKILL.md", SKILL_MD)
        for name, data in files.items():
            info = zipfile.ZipInfo(f"{prefix}{name}")
            info.create_system = 3
            mode = 0o755 if name in executable else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
        for item in extra or []:
            if isinstance(item, tuple):
                archive.writestr(*item)
            else:
                archive.writestr(item, b"")
    return buffer.getvalue()


def make_environment(files: Mapping[str, str | bytes], *, extra: Any = None) -> bytes:
    """A prepared environment as the manager sends it: a gzipped tar of `files` (paths like
    ``python/pkg/__init__.py`` or ``node/node_modules/pkg/index.js``); `extra(archive)` may
    add hostile members."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            raw = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(raw))
        if extra is not None:
            extra(archive)
    return buffer.getvalue()


def execute_form(
    request: Mapping[str, Any],
    package: bytes,
    inputs: Mapping[str, bytes] | None = None,
    environment: bytes | None = None,
) -> dict[str, Any]:
    """Keyword arguments of an httpx POST /execute."""
    files: list[tuple[str, tuple[str, bytes]]] = [("package", ("package.zip", package))]
    if environment is not None:
        files.append(("environment", ("environment.tar.gz", environment)))
    files += [("inputs", (name, data)) for name, data in (inputs or {}).items()]
    return {"data": {"request": json.dumps(dict(request))}, "files": files}


def _statuses() -> Iterator[tuple[int, dict[str, str]]]:
    """(pid, fields of /proc/PID/status) of every process still alive (zombies left out)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        if fields.get("State", "").split()[:1] != ["Z"]:
            yield int(name), fields


def living_processes(uid: int) -> list[int]:
    """Pids of processes whose real uid is `uid`, zombies (already dead) left out."""
    return [pid for pid, fields in _statuses() if int(fields["Uid"].split()[0]) == uid]


def processes_with(marker: str) -> list[int]:
    """Pids of living processes whose command line holds `marker`."""
    pids: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as file:
                cmdline = file.read()
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as file:
                state = file.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            pids.append(int(name))
    return pids


def descendant_uids(pid: int) -> set[int]:
    """The uids of the living descendants of `pid` (a warm sandbox's stage is one)."""
    children: dict[int, list[int]] = {}
    uids: dict[int, int] = {}
    for child, fields in _statuses():
        children.setdefault(int(fields["PPid"]), []).append(child)
        uids[child] = int(fields["Uid"].split()[0])
    found: set[int] = set()
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.add(uids[child])
        todo += children.get(child, [])
    return found


def assert_eventually(check: Callable[[], bool], *, timeout: float = 5.0, what: str) -> None:
    """Poll `check` until it holds, failing with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        time.sleep(0.05)
