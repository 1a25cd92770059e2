"""The CLI's remote mirrors: `skills upload`, `agents create/list/show`, `run --agent ag-…` and
every `runs` command against a running control-plane API (``SKILLWEAVE_API_URL``,
``SKILLWEAVE_API_TOKEN``).

:class:`RemoteApi` is a small synchronous httpx client of the API: a CLI command does one thing
at a time, so it needs no event loop. Problem+json answers become :class:`RemoteApiError`
(the server's detail is the message). The Server-Sent Events of a run are parsed here by hand:
the format is a few lines of text, and httpx-sse is not a dependency; a dropped stream is
resumed with ``Last-Event-ID``; the stream's notes (waiting for a worker…) come out as the
Temporal follower's :class:`~skillweave.engines.temporal.FollowNote`, and its giving up as its
``NoWorkerError``, so a remote follower ends as a local one does. A run id goes into a URL only
once :func:`~skillweave.engines.run_id.is_run_id` accepts it. Called by the `skills upload`,
`agents`, `run` and `runs` commands.
"""

from __future__ import annotations

import json
import mimetypes
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, get_args
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from skillweave.agent.events import AgentEvent
from skillweave.agent.spec import AgentSpec
from skillweave.cli.job import JobRun, read_agent_spec
from skillweave.config import Settings
from skillweave.engines.base import JobResult
from skillweave.engines.notes import FollowKind
from skillweave.engines.run_id import is_run_id
from skillweave.errors import AgentSpecError, ConfigError, SkillweaveError

if TYPE_CHECKING:
    from skillweave.engines.temporal import FollowNote

__all__ = [
    "RemoteApi",
    "RemoteApiError",
    "agent_body",
    "is_agent_id",
    "open_remote",
    "run_remote",
    "wait_for_result",
]

_TIMEOUT: Final = httpx.Timeout(60.0, connect=10.0)
_EVENTS_READ_SECONDS: Final = 60.0
"""The server sends a keep-alive comment every 15 s: a stream silent this long is dead."""
_EVENT_RECONNECTS: Final = 5
_RESULT_WAIT_SECONDS: Final = 30.0
"""After ``job_finished`` the server records the result; wait this long for it."""
_NOTES: Final = get_args(FollowKind)
"""Notes of a run's event stream (not steps of the run): a follower's kinds."""
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

    def events(
        self, run_id: str, *, after: int = 0, follow: bool = True
    ) -> Iterator[AgentEvent | FollowNote]:
        """The run's events after the `after`-th until ``job_finished`` (without `follow`:
        those there are now), the stream's notes between them, reconnecting with
        ``Last-Event-ID`` when the stream drops.

        Raises:
            NoWorkerError: the API's stream gave up waiting for a worker (temporal).
            RemoteApiError: the API refused, failed, or could not be reached again.
        """
        seen, failures = after, 0
        timeout = httpx.Timeout(_EVENTS_READ_SECONDS, connect=10.0)
        params = {} if follow else {"follow": "false"}
        while True:
            headers = {"Last-Event-ID": str(seen)} if seen else {}
            try:
                with self._client.stream(
                    "GET",
                    _run_path(run_id, "events"),
                    headers=headers,
                    params=params,
                    timeout=timeout,
                ) as response:
                    if response.is_error:
                        response.read()
                        _raise_for_problem(response)
                    for kind, data, event_id in _sse(response.iter_lines()):
                        if kind == "error":
                            raise RemoteApiError(f"the run's event stream failed: {data}")
                        if kind == "worker_wait_expired":
                            raise _no_worker(run_id, data)
                        failures = 0
                        if not event_id:  # a note of the stream, not a step of the run
                            if kind in _NOTES:  # else one of a newer server's: skipped
                                yield _note(data)
                            continue
                        seen = int(event_id) if event_id.isdigit() else seen + 1
                        event = AgentEvent.model_validate_json(data)
                        yield event
                        if event.kind == "job_finished":
                            return
                return  # the server ended the stream: the run has finished, or caught up
            except (httpx.TransportError, httpx.DecodingError) as exc:
                failures += 1
                if failures > _EVENT_RECONNECTS:
                    raise RemoteApiError(f"lost the run's events from {self.url}: {exc}") from None
                time.sleep(min(0.5 * 2**failures, 8.0))

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


def _note(data: str) -> FollowNote:
    from skillweave.engines.notes import FollowNote

    return FollowNote.model_validate_json(data)


def _no_worker(run_id: str, data: str) -> SkillweaveError:
    """The stream's last event when it gave up waiting for a worker, as the local follower's
    error (so the CLI ends with the same exit code and hint)."""
    from skillweave.engines.temporal import NoWorkerError

    try:
        note = json.loads(data)
        return NoWorkerError(
            str(note.get("job_id") or run_id),
            task_queue=str(note["task_queue"]),
            waited_seconds=float(note["waited_seconds"]),
        )
    except (ValueError, KeyError, TypeError):
        return RemoteApiError(f"the run's event stream gave up waiting for a worker: {data}")


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


def _sse(lines: Iterator[str]) -> Iterator[tuple[str, str, str]]:
    """(event, data, id) of each Server-Sent Event; comments skipped."""
    kind, data, event_id = "message", [], ""
    for line in lines:
        if not line:
            if data:
                yield kind, "\n".join(data), event_id
            kind, data, event_id = "message", [], ""
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            kind = value
        elif field == "data":
            data.append(value)
        elif field == "id":
            event_id = value


# --- agents create ----------------------------------------------------------------------------


def agent_body(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The API's AgentCreate body for the agent spec (YAML) in `path`, and notes on the spec's
    fields the API does not take.

    Raises:
        AgentSpecError: the file cannot be read, is not a valid spec, or does not fit the API.
    """
    from skillweave.api.agents import AgentCreate

    source = str(path)
    spec = read_agent_spec(path)
    try:
        body = AgentCreate(
            name=spec.name,
            description=spec.description,
            instruction=spec.instruction,
            model_id=spec.model,
            skill_ids=list(spec.skills or ()),
            catalog_mode=spec.catalog.mode,
            limits=spec.limits,
            follow_up_seconds=spec.follow_up_seconds,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "spec"
        raise AgentSpecError(source, f"{field}: {first['msg']}") from None
    return body.model_dump(mode="json"), _not_taken(spec)


def _not_taken(spec: AgentSpec) -> list[str]:
    notes = []
    if spec.skills is None:
        notes.append("skills: not set, so the API's agent gets no skills (list them)")
    if spec.catalog.top_k is not None:
        notes.append("catalog.top_k is not taken by the API (the server's setting applies)")
    if "preload" in spec.model_fields_set:
        notes.append("preload is not taken by the API")
    if "approvals" in spec.model_fields_set:
        notes.append("approvals are not taken by the API")
    return notes


# --- run --agent ag-… ---------------------------------------------------------------------------


def run_remote(
    api: RemoteApi,
    *,
    agent_id: str,
    task: str,
    files: Sequence[Path],
    out_dir: Path | None,
    on_start: Callable[[dict[str, Any]], None],
    on_event: Callable[[AgentEvent], None],
    on_note: Callable[[FollowNote], None] | None = None,
) -> JobRun:
    """Start a run of `agent_id`, follow its events to the end, fetch how it ended and
    download its output files into `out_dir`.

    Args:
        on_start: given the run's record once it is started (its ``id``, ``agent``…).
        on_event: given each event as it arrives.
        on_note: given each note of the stream (waiting for a worker…); None: dropped.
    """
    run = api.start_run(agent_id, task, files)
    on_start(run)
    for item in api.events(run["id"]):
        if isinstance(item, AgentEvent):
            on_event(item)
        elif on_note is not None:
            on_note(item)
    result = wait_for_result(api, run["id"])
    copied = download_outputs(api, run["id"], out_dir) if out_dir is not None else []
    model = run["agent"].get("model_id") or "the API's model"
    return JobRun(result=result, model=model, copied=tuple(copied))


def wait_for_result(api: RemoteApi, run_id: str) -> JobResult:
    """How the run ended, once the API has recorded it (it may lag its last event)."""
    deadline = time.monotonic() + _RESULT_WAIT_SECONDS
    pause = 0.05
    while True:
        record = api.get_run(run_id)
        if record.get("result") is not None:
            return JobResult.model_validate(record["result"])
        if time.monotonic() > deadline:
            raise RemoteApiError(f"run {run_id} finished but the API has not recorded its result")
        time.sleep(pause)
        pause = min(pause * 2, 1.0)


def download_outputs(api: RemoteApi, run_id: str, dest: Path) -> list[Path]:
    """The run's output files into `dest`, under the names ``artifacts.output_names`` gives
    them, as the local ``--out`` copies them."""
    from skillweave.cli.artifacts import output_names

    dest.mkdir(parents=True, exist_ok=True)
    paths = [a["path"] for a in api.artifacts(run_id) if "/outputs/" in f"/{a['path']}"]
    written: list[Path] = []
    for path, name in output_names(paths):
        api.download(run_id, path, dest / name)
        written.append(dest / name)
    return written
