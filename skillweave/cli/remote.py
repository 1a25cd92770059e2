"""The CLI's client of a running control-plane API (``SKILLWEAVE_API_URL``,
``SKILLWEAVE_API_TOKEN``): what `skills upload`, `agents create/list/show`, `run --agent ag-…`,
every `runs` command and `runs artifacts` send to it.

:class:`RemoteApi` is a small synchronous httpx client of the API: a CLI command does one thing
at a time, so it needs no event loop. Problem+json answers become :class:`RemoteApiError`
(the server's detail is the message). A run id goes into a URL only once
:func:`~skillweave.engines.run_id.is_run_id` accepts it. What a run's event stream means (its
Server-Sent Events parsed, a dropped stream resumed, a run followed to its result) is
:mod:`skillweave.cli.remote_runs`; this module gives it the stream's lines.
"""

from __future__ import annotations

import contextlib
import mimetypes
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import httpx

from skillweave.config import Settings
from skillweave.engines import is_run_id
from skillweave.errors import ConfigError, SkillweaveError

__all__ = [
    "RemoteApi",
    "RemoteApiError",
    "is_agent_id",
    "open_remote",
]

_TIMEOUT: Final = httpx.Timeout(60.0, connect=10.0)
_EVENTS_TIMEOUT: Final = httpx.Timeout(60.0, connect=10.0)
"""The server sends a keep-alive comment every 15 s: an event stream silent 60 s is dead."""
_NO_URL: Final = (
    "this command talks to a skillweave API: set SKILLWEAVE_API_URL (and SKILLWEAVE_API_TOKEN)"
)


class RemoteApiError(SkillweaveError):
    """The API answered with an error (problem+json), or could not be reached (status 0)."""

    def __init__(self, detail: str, *, status: int = 0, title: str = "") -> None:
        super().__init__(detail)
        self.status = status
        self.title = title
        self.detail = detail


def is_agent_id(value: str) -> bool:
    """An API agent id (``ag-`` and 16 hex digits), as opposed to a spec file's path."""
    rest = value.removeprefix("ag-")
    return rest != value and len(rest) == 16 and all(c in "0123456789abcdef" for c in rest)


class RemoteApi:
    """The control-plane API at `url`, with its bearer token. Use as a context manager."""

    def __init__(self, url: str, *, token: str | None) -> None:
        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._client = httpx.Client(base_url=self.url, headers=headers, timeout=_TIMEOUT)

    def __enter__(self) -> RemoteApi:
        return self

    def __exit__(self, *exc: object) -> None:
        self._client.close()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One call; a 4xx/5xx answer or a connection failure raises RemoteApiError."""
        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise RemoteApiError(f"cannot reach the API at {self.url}: {exc}") from None
        _raise_for_problem(response)
        return response

    def upload_skill(
        self, archive: Path, *, name: str | None = None, description: str | None = None
    ) -> dict[str, Any]:
        """``POST /v1/skills/upload``: the stored skill (name, latest version, versions)."""
        form = {k: v for k, v in {"name": name, "description": description}.items() if v}
        with archive.open("rb") as handle:
            files = {"file": (archive.name, handle, "application/zip")}
            return self.request("POST", "/v1/skills/upload", data=form, files=files).json()

    def create_agent(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/agents/``: the new agent, its id included."""
        return self.request("POST", "/v1/agents/", json=body).json()

    def list_agents(self) -> list[dict[str, Any]]:
        """Every agent, oldest first (all pages)."""
        items: list[dict[str, Any]] = []
        while True:
            page = self.request("GET", "/v1/agents/", params={"limit": 200, "offset": len(items)})
            data = page.json()
            items += data["items"]
            if not data["items"] or len(items) >= data["total"]:
                return items

    def get_agent(self, agent_id: str) -> dict[str, Any]:
        """``GET /v1/agents/{id}``."""
        return self.request("GET", f"/v1/agents/{agent_id}").json()

    def start_run(self, agent_id: str, text: str, files: Sequence[Path]) -> dict[str, Any]:
        """``POST /v1/runs/`` with the files attached; the run's record."""
        handles = [path.open("rb") for path in files]
        try:
            parts = [
                ("files", (path.name, handle, _media_type(path)))
                for path, handle in zip(files, handles, strict=True)
            ]
            form = {"agent_id": agent_id, "input": text}
            return self.request("POST", "/v1/runs/", data=form, files=parts or None).json()
        finally:
            for handle in handles:
                handle.close()

    def list_runs(
        self,
        *,
        limit: int,
        agent: str | None = None,
        phase: str | None = None,
        skill: str | None = None,
    ) -> list[dict[str, Any]]:
        """``GET /v1/runs/``: at most `limit` runs, newest first, of every door."""
        filters = {"agent": agent, "phase": phase, "skill": skill}
        params: dict[str, Any] = {k: v for k, v in filters.items() if v is not None}
        items: list[dict[str, Any]] = []
        while len(items) < limit:
            page_size = min(200, limit - len(items))
            params.update(limit=page_size, offset=len(items))
            page = self.request("GET", "/v1/runs/", params=params).json()
            items += page["items"]
            if len(page["items"]) < page_size:
                break
        return items[:limit]

    def get_run(self, run_id: str) -> dict[str, Any]:
        """``GET /v1/runs/{id}``."""
        return self.request("GET", _run_path(run_id)).json()

    def run_status(self, run_id: str) -> dict[str, Any]:
        """``GET /v1/runs/{id}/status``: what the run does now (the engine's status view)."""
        return self.request("GET", _run_path(run_id, "status")).json()

    def send_message(self, run_id: str, text: str) -> None:
        """``POST /v1/runs/{id}/messages``: taken before the run's next model call."""
        self.request("POST", _run_path(run_id, "messages"), json={"text": text})

    def approve(self, run_id: str, *, approved: bool, note: str) -> None:
        """``POST /v1/runs/{id}/approvals``: decide the script run the run waits on."""
        body = {"approved": approved, "note": note}
        self.request("POST", _run_path(run_id, "approvals"), json=body)

    def cancel(self, run_id: str, *, reason: str) -> None:
        """``POST /v1/runs/{id}/cancel``: returns once the run has stopped."""
        self.request("POST", _run_path(run_id, "cancel"), json={"reason": reason})

    @contextlib.contextmanager
    def event_lines(self, run_id: str, *, after: int, follow: bool) -> Iterator[Iterator[str]]:
        """``GET /v1/runs/{id}/events`` after the `after`-th event (``Last-Event-ID``), its
        lines as they come; without `follow`, only the events there are now.

        Raises:
            RemoteApiError: the API refused or failed. A transport error (the stream dropped,
                or was silent past the read timeout) is raised as httpx raises it, for the
                caller to reconnect.
        """
        headers = {"Last-Event-ID": str(after)} if after else {}
        params = {} if follow else {"follow": "false"}
        with self._client.stream(
            "GET",
            _run_path(run_id, "events"),
            headers=headers,
            params=params,
            timeout=_EVENTS_TIMEOUT,
        ) as response:
            if response.is_error:
                response.read()
                _raise_for_problem(response)
            yield response.iter_lines()

    def artifacts(self, run_id: str) -> list[dict[str, Any]]:
        """``GET /v1/runs/{id}/artifacts``: path, size, sha256 of each file of the run."""
        return self.request("GET", _run_path(run_id, "artifacts")).json()

    def fetch(self, run_id: str, path: str) -> Iterator[bytes]:
        """One of the run's files, streamed in chunks (`path` as the listing gives it).

        Raises:
            RemoteApiError: no such file (404), or the API failed or could not be reached.
        """
        if any(part in ("", ".", "..") for part in path.split("/")):
            raise ConfigError(f"{path!r} is not a file of a run: see `skillweave runs artifacts`")
        url = f"{_run_path(run_id, 'artifacts')}/{quote(path, safe='/')}"
        try:
            with self._client.stream("GET", url) as response:
                if response.is_error:
                    response.read()
                    _raise_for_problem(response)
                yield from response.iter_bytes()
        except httpx.TransportError as exc:
            raise RemoteApiError(f"cannot download {path} from {self.url}: {exc}") from None

    def download(self, run_id: str, path: str, target: Path) -> None:
        """One of the run's files into `target`, streamed."""
        with target.open("wb") as handle:
            for chunk in self.fetch(run_id, path):
                handle.write(chunk)


def open_remote(settings: Settings) -> RemoteApi:
    """The API of ``SKILLWEAVE_API_URL``.

    Raises:
        ConfigError: SKILLWEAVE_API_URL is not set.
    """
    if not settings.remote_api_url:
        raise ConfigError(_NO_URL)
    token = settings.remote_api_token
    return RemoteApi(
        settings.remote_api_url, token=token.get_secret_value() if token is not None else None
    )


def _run_path(run_id: str, *rest: str) -> str:
    """The API path of the run `run_id` (and of `rest` under it).

    Raises:
        ConfigError: `run_id` cannot be a run's id (it never reaches the URL).
    """
    if not is_run_id(run_id):
        raise ConfigError(
            f"{run_id!r} is not a run id (letters, digits, '.', '_' and '-'): see "
            "`skillweave runs list`"
        )
    return "/".join(("/v1/runs", run_id, *rest))


def _raise_for_problem(response: httpx.Response) -> None:
    if response.is_success:
        return
    status, title, detail = response.status_code, response.reason_phrase, ""
    try:
        problem = response.json()
    except ValueError:
        problem = None
    if isinstance(problem, dict):
        title = str(problem.get("title") or title)
        detail = str(problem.get("detail") or "")
    if not detail:
        detail = f"{title} ({status})"
    if status == 401:
        detail += " (set SKILLWEAVE_API_TOKEN to the API's token)"
    raise RemoteApiError(detail, status=status, title=title)


def _media_type(path: Path) -> str:
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"
