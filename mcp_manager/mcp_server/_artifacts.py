"""A session's artifacts at the MCP front door: :class:`SessionArtifacts`.

A script may take as input only an artifact of its own session's run (keys from the
session's script results, ``artifact://KEY`` or bare); a script's output files come back as
embedded resources, or as links to ``artifact://`` resources when large; an artifact read as a
resource has its stdout/stderr logs masked (output files go as the script wrote them), and a
script's result is masked before it is rendered: configured skill secrets
(``skillweave.sandbox.masking``), on top of the manager's masking at the source. The tool
handler (inputs), the run handler (results and outputs) and the resource handler
(``artifact://`` reads) use it.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any, Final

import mcp_types as types

from mcp_manager.mcp_server._results import ToolError
from mcp_manager.mcp_server._sessions import Session
from skillweave.config import Settings
from skillweave.errors import InvalidKeyError
from skillweave.sandbox import ExecutionResult, is_run_log, mask_result, output_masker
from skillweave.storage import ArtifactRef, ArtifactStore, keys

__all__ = ["SessionArtifacts"]

_EMBED_MAX_BYTES: Final = 256 * 1024  # larger outputs come back as resource links


class SessionArtifacts:
    """The artifacts of each session's run, in `store`; the secrets of `settings`' skills
    masked in what is handed out."""

    def __init__(self, settings: Settings, store: ArtifactStore) -> None:
        self._store = store
        self._masker = output_masker(
            {
                skill: {name: value.get_secret_value() for name, value in values.items()}
                for skill, values in settings.sandbox.skill_secrets.items()
            }
        )  # the manager warns about values too short to mask

    def masked(self, result: ExecutionResult) -> ExecutionResult:
        """`result` with the configured skill secrets masked in its output."""
        return mask_result(result, self._masker)

    async def find(self, session: Session, key: str) -> ArtifactRef:
        """The artifact `key` (``artifact://`` optional) of `session`'s run.

        Raises:
            ToolError: not an artifact of this session, not a valid key, or none there.
        """
        key = key.removeprefix("artifact://")
        if not key.startswith(keys.run_prefix(session.run_id)):
            raise ToolError(
                f"{key!r} is not an artifact of this session: pass keys from this session's "
                "script results."
            )
        try:
            ref = await self._store.stat(key)
        except InvalidKeyError as exc:
            raise ToolError(f"{key!r} is not a valid artifact key: {exc.reason}") from None
        if ref is None:
            raise ToolError(f"No artifact {key!r}.")
        return ref

    async def output(self, ref: ArtifactRef) -> Any:
        """A script's output file: embedded, or a link when large."""
        uri = f"artifact://{ref.key}"
        name = ref.key.rpartition("/")[2]
        if ref.size > _EMBED_MAX_BYTES:
            return types.ResourceLink(
                type="resource_link", uri=uri, name=name, size=ref.size, mime_type=ref.content_type
            )
        return types.EmbeddedResource(type="resource", resource=await self.contents(ref, uri))

    async def contents(self, ref: ArtifactRef, uri: str) -> Any:
        """The artifact `ref` as resource contents at `uri`: text when it decodes, else a
        blob; a run's log masked."""
        data = await self._store.get_bytes(ref)
        if is_run_log(ref.key):  # stdout/stderr: masked (output files go as written)
            data = await asyncio.to_thread(self._masker.mask_bytes, data, cut=True)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            blob = base64.b64encode(data).decode("ascii")
            return types.BlobResourceContents(uri=uri, mime_type=ref.content_type, blob=blob)
        mime = ref.content_type if ref.content_type != "application/octet-stream" else None
        return types.TextResourceContents(uri=uri, mime_type=mime or "text/plain", text=text)
