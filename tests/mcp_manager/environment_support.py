"""Hermetic package indexes for environment-builder tests: no test needs the internet.

* Python: wheels written by hand (a wheel is a zip of the package, ``METADATA``, ``WHEEL`` and
  ``RECORD``) and sdists with a ``setup.py`` of our choosing, in one folder that pip reads as
  ``--find-links`` with ``--no-index``.
* Node: ``.tgz`` packages written by hand (``package/package.json`` + ``package/index.js``)
  served by :class:`NpmRegistry`, a minimal npm registry (the packument at ``GET /{name}``, the
  tarballs under ``/-/``) on loopback through ``LoopbackServer``.

Other tests (the manager's, the executor's) import these to get a real environment.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import io
import json
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcp_manager.environments._sandbox import sandbox_args
from mcp_manager.server import LoopbackServer

SWDEMO_VALUE = 42


def bwrap_works() -> bool:
    """Whether bubblewrap can run a sandbox here with the environment builder's options."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    argv = [*sandbox_args(bwrap, binds=()), "--remount-ro", "/", "--", "true"]
    done = subprocess.run(argv, capture_output=True, check=False, timeout=30)
    return done.returncode == 0


def setuptools_importable(python: str = sys.executable) -> bool:
    """Whether `python` can build an sdist without fetching setuptools (no build isolation)."""
    done = subprocess.run(
        [python, "-c", "import setuptools"], capture_output=True, check=False, timeout=60
    )
    return done.returncode == 0


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def write_wheel(
    folder: Path,
    name: str,
    version: str,
    files: Mapping[str, str | bytes],
    *,
    requires: Sequence[str] = (),
) -> Path:
    """A pure-Python wheel ``{name}-{version}-py3-none-any.whl`` in `folder`."""
    dist_info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {requirement}\n" for requirement in requires)
    entries: dict[str, bytes] = {
        path: data.encode() if isinstance(data, str) else data for path, data in files.items()
    }
    entries[f"{dist_info}/METADATA"] = metadata.encode()
    entries[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: skillweave-tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    record = [f"{path},{_record_hash(data)},{len(data)}" for path, data in entries.items()]
    record.append(f"{dist_info}/RECORD,,")
    entries[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in entries.items():
            archive.writestr(member, data)
    return path


def repack_installed(folder: Path, distribution: str) -> Path:
    """A wheel of `distribution` as this interpreter has it installed (its files, its
    ``METADATA`` and ``WHEEL``, a fresh ``RECORD``): real packages such as requests in a local
    index, with no download. Compiled files keep the installed wheel's tag."""
    found = importlib.metadata.distribution(distribution)
    dist_info = f"{found.metadata['Name'].replace('-', '_')}-{found.version}.dist-info"
    skipped = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
    entries: dict[str, bytes] = {}
    for file in found.files or ():
        name = file.as_posix()
        if name.startswith("../") or "__pycache__" in file.parts or name.endswith(".pyc"):
            continue  # console scripts live outside site-packages; bytecode is made on install
        if file.parts[0].endswith(".dist-info"):
            if file.name in skipped:
                continue
            name = "/".join((dist_info, *file.parts[1:]))
        entries[name] = Path(str(found.locate_file(file))).read_bytes()
    wheel = entries[f"{dist_info}/WHEEL"].decode()
    tag = next(
        line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")
    )
    record = [f"{path},{_record_hash(data)},{len(data)}" for path, data in entries.items()]
    record.append(f"{dist_info}/RECORD,,")
    entries[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = folder / f"{dist_info.removesuffix('.dist-info')}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in entries.items():
            archive.writestr(member, data)
    return path


def write_sdist(folder: Path, name: str, version: str, setup_py: str) -> Path:
    """A source distribution ``{name}-{version}.tar.gz`` whose setup.py is `setup_py`."""
    top = f"{name}-{version}"
    members = {
        f"{top}/setup.py": setup_py,
        f"{top}/PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    }
    path = folder / f"{top}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for member, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
    return path


def hostile_setup_py(name: str, targets: Sequence[Path], *, reads: Sequence[Path] = ()) -> str:
    """A setup.py that prints its environment's names, tries to read each of `reads` and to
    write to each of `targets` (paths outside its build), reports each attempt, and re-raises
    the first write error, so that the build fails *because* a write was refused (and installs
    normally if every write got through)."""
    return textwrap.dedent(
        f"""\
        import os
        from setuptools import setup

        print("HOSTILE ENV", " ".join(sorted(os.environ)))
        for source in {[str(source) for source in reads]!r}:
            try:
                with open(source) as handle:
                    print("HOSTILE READ", source, handle.read())
            except OSError as exc:
                print("HOSTILE UNREADABLE", source, exc)
        errors = []
        for target in {[str(target) for target in targets]!r}:
            try:
                with open(target, "w") as handle:
                    handle.write("written from inside the build sandbox")
                print("HOSTILE WROTE", target)
            except OSError as exc:
                print("HOSTILE BLOCKED", target, exc)
                errors.append(exc)
        if errors:
            raise errors[0]
        setup(name={name!r}, version="1.0", py_modules=[])
        """
    )


def python_index(folder: Path) -> Path:
    """A find-links folder: ``swdemo`` 1.0 (``VALUE = 42``), ``swdemo-plus`` 1.0 (needs
    swdemo, ``DOUBLE = VALUE * 2``) and ``swbig`` 1.0 (a 256 KiB incompressible file)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_wheel(folder, "swdemo", "1.0", {"swdemo/__init__.py": f"VALUE = {SWDEMO_VALUE}\n"})
    write_wheel(
        folder,
        "swdemo_plus",
        "1.0",
        {"swdemo_plus/__init__.py": "from swdemo import VALUE\n\nDOUBLE = VALUE * 2\n"},
        requires=["swdemo>=1.0"],
    )
    big = hashlib.shake_256(b"swbig").digest(256 * 1024)  # random-looking: gzip cannot shrink it
    write_wheel(folder, "swbig", "1.0", {"swbig/__init__.py": "", "swbig/blob.bin": big})
    return folder


# --- npm ------------------------------------------------------------------------------------


def npm_tarball(
    name: str,
    version: str,
    index_js: str,
    *,
    dependencies: Mapping[str, str] | None = None,
) -> bytes:
    """An npm package tarball: ``package/package.json`` and ``package/index.js``."""
    manifest = {
        "name": name,
        "version": version,
        "main": "index.js",
        "dependencies": dict(dependencies or {}),
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member, text in {
            "package/package.json": json.dumps(manifest, indent=2),
            "package/index.js": index_js,
        }.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@dataclass
class _NpmVersion:
    tarball: bytes
    dependencies: dict[str, str]


@dataclass
class NpmRegistry:
    """A minimal npm registry served on loopback (``async with NpmRegistry() as registry``).

    ``add`` publishes a version; ``requests`` lists the paths asked for (to show that npm went
    nowhere else). Unknown packages are a 404 as on registry.npmjs.org.
    """

    packages: dict[str, dict[str, _NpmVersion]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    url: str = ""
    _server: LoopbackServer | None = None

    def add(
        self,
        name: str,
        version: str,
        index_js: str,
        *,
        dependencies: Mapping[str, str] | None = None,
    ) -> None:
        tarball = npm_tarball(name, version, index_js, dependencies=dependencies)
        self.packages.setdefault(name, {})[version] = _NpmVersion(tarball, dict(dependencies or {}))

    def _packument(self, request: Request) -> Response:
        name = unquote(request.path_params["name"])
        self.requests.append(request.url.path)
        versions = self.packages.get(name)
        if versions is None:
            return JSONResponse({"error": "Not found"}, status_code=404)
        base = str(request.base_url).rstrip("/")
        body = {
            "name": name,
            "dist-tags": {"latest": max(versions, key=_version_key)},
            "versions": {
                version: {
                    "name": name,
                    "version": version,
                    "dependencies": entry.dependencies,
                    "dist": {
                        "tarball": f"{base}/-/{name}-{version}.tgz",
                        "shasum": hashlib.sha1(entry.tarball, usedforsecurity=False).hexdigest(),
                        "integrity": "sha512-"
                        + base64.b64encode(hashlib.sha512(entry.tarball).digest()).decode(),
                    },
                }
                for version, entry in versions.items()
            },
        }
        return JSONResponse(body)

    def _tarball(self, request: Request) -> Response:
        self.requests.append(request.url.path)
        file = request.path_params["file"]
        for name, versions in self.packages.items():
            for version, entry in versions.items():
                if file == f"{name}-{version}.tgz":
                    return Response(entry.tarball, media_type="application/octet-stream")
        return JSONResponse({"error": "Not found"}, status_code=404)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/-/{file}", self._tarball),
                Route("/{name:path}", self._packument),
            ]
        )

    async def __aenter__(self) -> Self:
        self._server = LoopbackServer(self.app())
        self.url = await self._server.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            await self._server.stop()


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def unpack(archive: bytes, folder: Path) -> Path:
    """Extract an environment archive into `folder` (as the executor would: data filter)."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")
    return folder
