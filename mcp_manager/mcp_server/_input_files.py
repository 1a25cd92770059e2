"""A client's own files for a script at the MCP front door (``input_files``): :class:`InputFiles`.

Each file is a name (where it lands under ``inputs/``, a plain relative path) and exactly one
source: ``content`` (text), ``content_base64``, or ``path``, a file of the client's machine,
which only a stdio server started with folders to read from accepts, and only inside them.
Each is at most ``SANDBOX__MCP_INPUT_MAX_BYTES`` and is stored as an input of the session's
run. The tool handler calls it for ``run_skill_script`` and skill tools, and asks it whether a
session's tool schemas offer ``path``.
"""

from __future__ import annotations

import asyncio
import base64
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from mcp_manager.mcp_server._results import ToolError
from mcp_manager.mcp_server._sessions import Session
from skillweave.agent import disclosure
from skillweave.config import Settings
from skillweave.errors import ExecutionRejectedError
from skillweave.sandbox import check_path
from skillweave.storage import ArtifactRef, ArtifactStore, keys

__all__ = ["InputFiles"]

_FILES_SHAPE: Final = (
    f"{disclosure.INPUT_FILES} is a list of {{name, content | content_base64 | path}}: name is "
    "where the file lands under inputs/ (a plain relative path)"
)


class InputFiles:
    """Files a client gives a script, stored in `store`.

    Args:
        settings: the sandbox section's ``mcp_input_max_bytes`` is read at each call.
        store: where the files are stored, as inputs of the session's run.
        file_roots: folders (resolved) a client over stdio may give files from by path.
    """

    def __init__(
        self, settings: Settings, store: ArtifactStore, *, file_roots: Sequence[Path]
    ) -> None:
        self._settings = settings
        self._store = store
        self._file_roots = tuple(file_roots)

    def local_paths(self, session: Session | None) -> bool:
        """Whether `session` may give files by local path: over stdio, with folders allowed."""
        return session is not None and session.local and bool(self._file_roots)

    async def stored(self, session: Session, given: object) -> list[ArtifactRef]:
        """The client's own files (``input_files``), stored as inputs of the session's run.

        Raises:
            ToolError: a file that is not one: no name or a bad one, not exactly one source,
                invalid base64, a path over HTTP or outside the allowed folders, too large.
        """
        if given is None:
            return []
        if not isinstance(given, list) or not all(isinstance(item, dict) for item in given):
            raise ToolError(_FILES_SHAPE)
        refs = []
        for index, item in enumerate(given):
            where = f"{disclosure.INPUT_FILES}[{index}]"
            name = item.get("name")
            if not isinstance(name, str):
                raise ToolError(f"{where}: no name; {_FILES_SHAPE}")
            try:
                check_path(name, f"{where}.name")
            except ExecutionRejectedError as exc:
                raise ToolError(f"{exc.reason}; {_FILES_SHAPE}") from None
            data = await self._content(session, item, where)
            refs.append(await self._store.put_bytes(keys.run_input_key(session.run_id, name), data))
        return refs

    async def _content(self, session: Session, item: Mapping[str, Any], where: str) -> bytes:
        limit = self._settings.sandbox.mcp_input_max_bytes
        sources = [key for key in ("content", "content_base64", "path") if key in item]
        if len(sources) != 1:
            raise ToolError(f"{where}: give exactly one of content, content_base64 or path.")
        match sources[0]:
            case "content":
                data = str(item["content"]).encode("utf-8", "surrogatepass")
            case "content_base64":
                try:
                    data = base64.b64decode(str(item["content_base64"]), validate=True)
                except ValueError:
                    raise ToolError(f"{where}.content_base64 is not valid base64.") from None
            case _:
                data = await self._local_file(session, str(item["path"]), where, limit)
        if len(data) > limit:
            raise ToolError(
                f"{where} has {len(data):,} bytes; a file may have at most {limit:,} "
                "(SANDBOX__MCP_INPUT_MAX_BYTES)."
            )
        return data

    async def _local_file(self, session: Session, path: str, where: str, limit: int) -> bytes:
        """A file of the client's machine (stdio only), inside an allowed folder."""
        if not session.local:
            raise ToolError(
                f"{where}.path: a local path works only over stdio (skillweave mcp); over "
                "HTTP the server cannot read your files: send content or content_base64."
            )
        if not self._file_roots:
            raise ToolError(
                f"{where}.path: this server reads no local files; start it with "
                "skillweave mcp --files-root DIR, or send the content inline."
            )
        resolved = Path(path).expanduser().resolve()
        if not any(resolved.is_relative_to(root) for root in self._file_roots):
            allowed = ", ".join(str(root) for root in self._file_roots)
            raise ToolError(f"{where}.path {path!r} is outside the allowed folders ({allowed}).")
        try:
            info = await asyncio.to_thread(resolved.stat)
        except OSError as exc:
            raise ToolError(f"{where}.path {path!r} cannot be read: {exc.strerror}.") from None
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{where}.path {path!r} is not a regular file.")
        if info.st_size > limit:
            raise ToolError(
                f"{where}.path {path!r} has {info.st_size:,} bytes; a file may have at most "
                f"{limit:,} (SANDBOX__MCP_INPUT_MAX_BYTES)."
            )
        return await asyncio.to_thread(resolved.read_bytes)
