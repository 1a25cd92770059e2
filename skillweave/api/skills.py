"""``/v1/skills``: the skills the platform offers, directory ones and uploaded ones.

Directory skills (the configured libraries, bundled ones included) are read-only here: they are
listed and their files served, but switching them off is ``SKILLS__DISABLED``'s job. Names are
owned (DESIGN §8): an upload whose package brings a skill, at any depth, named like a directory
skill or another upload's skill (case and Unicode forms aside) is refused with a 409 whose
``errors`` entry says which name, where in the package, and who owns it; nothing is stored.
Uploaded skills (a SKILL.md posted as JSON, or a ZIP) live in the artifact store through
:class:`~skillweave.skills.stored.StoredSkills`, which validates them strictly. :func:`open_skills`
is the startup hook that sets up the whole library (``skills.library.SkillLibrary``: the
directories and the store's skills, whoever wrote them), reloaded every
``SKILLS__RELOAD_SECONDS`` and after every change made here.

Every change made here (an upload, an install, enabling, disabling, deleting) is in the audit
log, recorded before it is made (an upload's and an install's once their checks passed,
``skills.admission``): a record that cannot be written refuses the change, 503
``audit_unavailable`` with Retry-After, and nothing is changed.

Every skill answers its version as ``version`` (the latest one, for a stored skill); the
responses of the writes (``POST``, ``PATCH``) also carry it as ``latest``, the name they used
before, for older clients.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Literal, Self

from fastapi import APIRouter, Depends, File, Form, Query, Response, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, computed_field

from skillweave.api.app import ApiState, provided, state_of
from skillweave.api.problems import ApiProblem, problem, problem_response
from skillweave.engines.services import AgentServices
from skillweave.errors import (
    ResourceNotFoundError,
    SkillNameTakenError,
    SkillNotFoundError,
    SkillweaveError,
)
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import Skill, SkillLibrary, SkillRegistry, list_resources
from skillweave.skills.admission import Admissions
from skillweave.skills.frontmatter import with_frontmatter_fields
from skillweave.skills.install import install_skills, parse_source, source_allowed
from skillweave.skills.names import skill_id
from skillweave.skills.reload import reloading
from skillweave.skills.scan import ScanReport, scan_folder
from skillweave.skills.signing import (
    SkillSignature,
    parse_signature,
    read_signature,
    verify_signature,
)
from skillweave.skills.stored import (
    Check,
    SkillOrigin,
    StoredSkill,
    StoredSkills,
    StoredVersion,
    directory_owners,
)
from skillweave.storage import keys
from skillweave.storage.audit import AuditEntry

logger = logging.getLogger("skillweave.api")

__all__ = [
    "InstallRequest",
    "InstalledSkill",
    "NewSkill",
    "SkillDetail",
    "SkillItem",
    "SkillPage",
    "SkillPatch",
    "SkillRecord",
    "open_skills",
    "router",
]

router = APIRouter(prefix="/v1/skills", tags=["skills"])

Source = Literal["directory", "uploaded"]
_NOT_FOUND = {404: problem_response("No such skill, version or file")}
_CONFLICT = {409: problem_response("A directory skill has that name")}
_NAME_TAKEN = {
    409: problem_response(
        "A skill of the package (at any depth) has a name another source owns; `errors` holds"
        " one entry with `name`, `path` (where in the package) and `owner`"
    )
}


class NewSkill(BaseModel):
    """A skill given as the text of its SKILL.md."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=1024)
    content: str = Field(min_length=1, description="the whole SKILL.md, frontmatter included")


class SkillRecord(BaseModel):
    """A stored skill as a write answers it: its record, its latest version as ``version``."""

    name: str
    description: str
    source: Literal["uploaded"] = "uploaded"
    enabled: bool
    held: bool = Field(description="switched off until an operator approves its version")
    version: str = Field(description="the latest version (sha256 of the package's files)")
    latest: str = Field(
        description="the same as `version` (deprecated: the name older clients read)",
        json_schema_extra={"deprecated": True},
    )
    versions: list[StoredVersion]

    @computed_field(  # type: ignore[prop-decorator]
        description="stable across versions; an agent's skill_ids take it"
    )
    @property
    def id(self) -> str:
        return skill_id(self.name)

    @classmethod
    def of(cls, record: StoredSkill, **extra: object) -> Self:
        """The answer for `record` (and `extra` fields of a subclass)."""
        return cls(
            name=record.name,
            description=record.description,
            enabled=record.enabled,
            held=record.held,
            version=record.latest,
            latest=record.latest,
            versions=record.versions,
            **extra,
        )


class CreatedSkill(SkillRecord):
    """A skill stored from SKILL.md text, and what of its frontmatter the request replaced."""

    overridden: list[str] = Field(
        default_factory=list,
        description=(
            "frontmatter fields (name, description) the request's differed from: the stored"
            " SKILL.md has the request's"
        ),
    )


class InstallRequest(BaseModel):
    """Skills to install from a git repository, a ZIP or a folder the server can read."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=2048, description="a git URL or local path")
    ref: str | None = Field(default=None, max_length=200, description="branch, tag or commit")
    path: str | None = Field(default=None, max_length=1024, description="a sub-folder")
    skills: list[str] = Field(
        default_factory=list, max_length=500, description="only these (default: all)"
    )


class InstalledSkill(BaseModel):
    """One installed skill: its version and where it came from."""

    name: str
    version: str
    origin: SkillOrigin


class SkillPatch(BaseModel):
    """What can change on an uploaded skill."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool


class SkillItem(BaseModel):
    """One skill in a listing."""

    name: str
    description: str
    source: Source
    enabled: bool
    version: str = Field(description="the latest version (sha256 of the package's files)")

    @computed_field(  # type: ignore[prop-decorator]
        description="stable across versions; an agent's skill_ids take it"
    )
    @property
    def id(self) -> str:
        return skill_id(self.name)


class SignatureStatus(BaseModel):
    """A version's signature against ``skills.trust.keys``."""

    status: Literal["valid", "unsigned", "untrusted", "mismatch", "invalid"]
    key_id: str | None = None
    message: str


class SkillDetail(SkillItem):
    """One skill: its versions (uploaded skills), the files of its latest version, and that
    version's scan and signature."""

    versions: list[StoredVersion] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    scan: ScanReport | None = Field(
        default=None, description="its scan (none: stored before scans were kept)"
    )
    signature: SignatureStatus | None = None


class SkillPage(BaseModel):
    """A page of skills."""

    items: list[SkillItem]
    total: int
    limit: int
    offset: int


async def open_skills(state: ApiState) -> None:
    """Startup hook: the whole library (``state.registry``: the directory skills and the
    store's enabled ones, unpacked into ``SKILLS__UPLOADED_DIR``) that runs are pinned
    against, its directory part (``state.directory_skills``, which the listing shows) and the
    store's skills (``state.stored_skills``); reloaded every ``SKILLS__RELOAD_SECONDS`` (the
    changes of other processes too) and after every upload, switch or deletion here."""
    settings = state.settings.skills
    library = SkillLibrary(settings, store=state.store, folder=settings.uploaded_dir)
    assert library.stored is not None  # a library given the store has its skills
    state.stored_skills = library.stored

    def serve(registry: SkillRegistry) -> None:
        state.directory_skills = registry.owned_by("directory")
        state.registry = registry
        for listener in state.registry_listeners:
            listener(registry)

    async def refresh() -> None:
        serve(await library.reload())

    state.skills_changed = refresh
    await refresh()
    await state.resources.enter_async_context(
        reloading(library, serve, every=settings.reload_seconds)
    )


def serve_uploaded_skills(services: AgentServices) -> Callable[[ApiState], Awaitable[None]]:
    """A startup hook (after :func:`open_skills`) for an API that runs jobs in-process: give
    `services` the whole library, again whenever it changes."""

    async def hook(state: ApiState) -> None:
        state.registry_listeners.append(services.use_registry)
        services.use_registry(provided(state.registry, "open_skills"))
        # A skill a job here publishes is served at once, to the API's listing too.
        services.authoring.published = state.skills_changed

    return hook


def _prepare_environment(state: ApiState, record: StoredSkill) -> None:
    """Registration builds: ask the manager (``SANDBOX__MANAGER_URL``) to prepare the new
    version's environment of dependencies now, in the background, so its first run does not
    wait for a build. Without a manager configured, the first run builds it. A failure is
    logged; the run that needs the environment reports it again, clearly."""
    sandbox = state.settings.sandbox
    if not sandbox.manager_url or sandbox.manager_token is None:
        return
    url, token = sandbox.manager_url, sandbox.manager_token.get_secret_value()

    async def prepare() -> None:
        try:
            async with SandboxClient(url, token=token) as client:
                prepared = await client.prepare_environment(record.name, record.latest)
        except SkillweaveError as exc:
            logger.warning("environment of %s %s: %s", record.name, record.latest[:12], exc)
            return
        if prepared.get("needed"):
            logger.info("environment of %s %s ready", record.name, record.latest[:12])

    tasks = state.environment_builds
    task = asyncio.create_task(prepare(), name=f"prepare-{record.name}")
    tasks.add(task)
    task.add_done_callback(tasks.discard)


async def _changed(state: ApiState) -> None:
    """Tell whoever serves skills to engines (``state.skills_changed``) that the uploaded
    skills changed."""
    if state.skills_changed is not None:
        await state.skills_changed()


State = Annotated[ApiState, Depends(state_of)]


async def _stored(state: Annotated[ApiState, Depends(state_of)]) -> StoredSkills:
    return provided(state.stored_skills, "open_skills")


async def _library(state: Annotated[ApiState, Depends(state_of)]) -> SkillRegistry:
    return provided(state.directory_skills, "open_skills")


Stored = Annotated[StoredSkills, Depends(_stored)]
Library = Annotated[SkillRegistry, Depends(_library)]


def _directory_item(library: SkillRegistry, skill: Skill) -> SkillItem:
    return SkillItem(
        name=skill.name,
        description=skill.description,
        source="directory",
        enabled=library.is_enabled(skill.name),
        version=skill.version,
    )


def _uploaded_item(skill: StoredSkill) -> SkillItem:
    return SkillItem(
        name=skill.name,
        description=skill.description,
        source="uploaded",
        enabled=skill.enabled,
        version=skill.latest,
    )


def _directory_files(skill: Skill) -> list[str]:
    """The skill's own files (child skills excluded), sorted."""
    return sorted(["SKILL.md", *list_resources(skill)])


def _reserved(state: ApiState, library: SkillRegistry) -> dict[str, str]:
    """Every directory skill's name (children included; a namespaced skill known by its
    qualified name holds its own name too), mapped to its owner in words: those of the
    startup snapshot the listing shows, and any the current registry found since."""
    registry = state.registry
    found = [
        skill
        for skill in (registry if registry is not None else ())
        if registry is not None and registry.owner_of(skill.name).kind == "directory"
    ]
    return directory_owners([*library, *found])


def _name_taken(exc: SkillNameTakenError) -> JSONResponse:
    """The 409 of a refused upload: the detail in words, and the same as data in `errors`."""
    entry = {
        "loc": ["package", exc.path],
        "msg": str(exc),
        "name": exc.name,
        "path": exc.path,
        "owner": exc.owner,
        "owned_as": exc.owned_as,
    }
    return problem(409, str(exc), title="Skill name taken", errors=[entry])


def _admissions(state: ApiState) -> Admissions:
    """The signature and scan checks of what a request stores (``skills.admission``)."""
    return Admissions(state.settings.skills, state.store, audit=state.audit)


def _uploading(admissions: Admissions, stored: StoredSkills) -> Check:
    """The ``check`` of one upload: admitted (its scan and signature recorded), then its
    ``upload`` record written, all before it is stored; a record that cannot be written
    raises ``AuditLogError`` (503 ``audit_unavailable``) and nothing is stored."""

    async def check(name: str, version: str, package: bytes) -> bool:
        held = await admissions.check(name, version, package)
        earlier = await stored.get(name)
        enabled = (earlier.enabled if earlier is not None else True) and not held
        entry = AuditEntry("upload", skill=name, version=version, details={"enabled": enabled})
        await admissions.announce([entry])
        return held

    return check


async def _uploaded(state: ApiState, admissions: Admissions, record: StoredSkill) -> None:
    """After an upload (recorded before it was stored): its report and signature kept, the
    library told."""
    await admissions.keep(record.name)
    await _changed(state)
    _prepare_environment(state, record)


def _refuse_directory(library: SkillRegistry, name: str, action: str) -> None:
    if name in library:
        raise ApiProblem(
            409,
            f"{name!r} is a directory skill and cannot be {action} here; switch it off with"
            " SKILLS__DISABLED in the configuration instead",
        )


@router.post(
    "/",
    status_code=201,
    response_model=CreatedSkill,
    responses=_NAME_TAKEN,
    summary="Upload a skill given as SKILL.md text",
)
async def create_skill(
    body: NewSkill, stored: Stored, library: Library, state: State
) -> CreatedSkill | JSONResponse:
    """Validate the SKILL.md strictly and store it as a new version (or the same one).

    The request's name and description win over the frontmatter's: a SKILL.md whose differ is
    stored with the request's, and ``overridden`` says which.
    """
    content, overridden = with_frontmatter_fields(
        body.content,
        {"name": body.name, "description": body.description},
        path=f"{body.name}/SKILL.md",
    )
    admissions = _admissions(state)
    try:
        record = await stored.add_content(
            body.name,
            body.description,
            content,
            reserved=_reserved(state, library),
            check=_uploading(admissions, stored),
        )
    except SkillNameTakenError as exc:
        return _name_taken(exc)
    await _uploaded(state, admissions, record)
    return CreatedSkill.of(record, overridden=overridden)


@router.post(
    "/upload",
    status_code=201,
    response_model=SkillRecord,
    responses=_NAME_TAKEN,
    summary="Upload a skill as a ZIP package",
)
async def upload_skill(
    *,
    file: Annotated[UploadFile, File(description="the skill's ZIP package")],
    stored: Stored,
    library: Library,
    state: State,
    name: Annotated[str | None, Form(max_length=64)] = None,
    description: Annotated[str | None, Form(max_length=1024)] = None,
    signature: Annotated[
        str | None,
        Form(max_length=4096, description="its signature document (`skills sign` of the ZIP)"),
    ] = None,
) -> SkillRecord | JSONResponse:
    """Extract the package safely, validate it strictly, check its signature and scan it
    (``skills.trust``, ``skills.scan``), and store it rebuilt canonically."""
    data = await file.read()
    admissions = _admissions(state)
    if signature is not None:
        document = parse_signature(signature, source="signature")
        admissions.signatures[document.name] = document
    try:
        record = await stored.add_package(
            data,
            name=name,
            description=description,
            reserved=_reserved(state, library),
            check=_uploading(admissions, stored),
        )
    except SkillNameTakenError as exc:
        return _name_taken(exc)
    await _uploaded(state, admissions, record)
    return SkillRecord.of(record)


@router.post(
    "/install",
    status_code=201,
    response_model=list[InstalledSkill],
    responses={
        **_NAME_TAKEN,
        403: problem_response("SKILLS__INSTALL_SOURCES does not allow the source"),
    },
    summary="Install skills from a git repository, a ZIP or a folder",
)
async def install_skill(
    body: InstallRequest, stored: Stored, library: Library, state: State
) -> list[InstalledSkill] | JSONResponse:
    """Install the source's skills (all or none), each stored with its origin: the source,
    the ref, its folder and the commit read. Only sources ``SKILLS__INSTALL_SOURCES`` allows
    are read: the server reaches what a client names."""
    if not source_allowed(body.source, state.settings.skills.install_sources):
        raise ApiProblem(
            403,
            "SKILLS__INSTALL_SOURCES does not allow this source: an operator adds a pattern"
            " for it (e.g. 'https://github.com/acme/*') to let the API install from it",
        )
    source = parse_source(body.source, ref=body.ref, path=body.path)
    try:
        installed = await install_skills(
            stored,
            source,
            only=body.skills,
            reserved=_reserved(state, library),
            admissions=_admissions(state),
            allowed=state.settings.skills.install_sources,
        )
    except SkillNameTakenError as exc:
        return _name_taken(exc)
    await _changed(state)
    for item in installed:
        _prepare_environment(state, item.record)
    return [
        InstalledSkill(name=item.record.name, version=item.version, origin=item.origin)
        for item in installed
    ]


@router.get("/", response_model=SkillPage, summary="List skills")
async def list_skills(
    *,
    stored: Stored,
    library: Library,
    q: Annotated[
        str | None, Query(max_length=200, description="substring of name or description")
    ] = None,
    source: Source | None = None,
    enabled: bool | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> SkillPage:
    """Directory and uploaded skills, sorted by name, filtered and paged."""
    items: list[SkillItem] = []
    if source in (None, "directory"):
        items += (_directory_item(library, skill) for skill in library)
    if source in (None, "uploaded"):
        items += (_uploaded_item(skill) for skill in await stored.list())
    if q:
        needle = q.casefold()
        items = [
            i for i in items if needle in i.name.casefold() or needle in i.description.casefold()
        ]
    if enabled is not None:
        items = [i for i in items if i.enabled == enabled]
    items.sort(key=lambda i: (i.name, i.source))
    return SkillPage(
        items=items[offset : offset + limit], total=len(items), limit=limit, offset=offset
    )


@router.get("/{name}", response_model=SkillDetail, responses=_NOT_FOUND, summary="One skill")
async def get_skill(name: str, stored: Stored, library: Library, state: State) -> SkillDetail:
    """The skill, its versions, the files of its latest version, and that version's scan and
    signature (``skills.scan``, ``skills.trust``)."""
    if name in library:
        skill = library.get(name)
        item = _directory_item(library, skill)
        files = await asyncio.to_thread(_directory_files, skill)
        report = await asyncio.to_thread(scan_folder, skill.path)
        signature = await asyncio.to_thread(read_signature, skill.path)
        return SkillDetail(
            **item.model_dump(),
            files=files,
            scan=report,
            signature=_signature_status(state, skill.short_name or name, item.version, signature),
        )
    record = await stored.get(name)
    if record is None:
        raise ApiProblem(404, f"no skill named {name!r}")
    report, signature = None, None
    ref = await state.store.stat(keys.skill_scan_key(name, record.latest))
    if ref is not None:
        report = ScanReport.model_validate_json(await state.store.get_bytes(ref))
    ref = await state.store.stat(keys.skill_signature_key(name, record.latest))
    if ref is not None:
        signature = parse_signature(await state.store.get_bytes(ref), source=ref.key)
    return SkillDetail(
        **_uploaded_item(record).model_dump(),
        versions=record.versions,
        files=record.latest_version.files,
        scan=report,
        signature=_signature_status(state, name, record.latest, signature),
    )


def _signature_status(
    state: ApiState, name: str, version: str, signature: SkillSignature | None
) -> SignatureStatus:
    check = verify_signature(
        signature, name=name, version=version, trusted=state.settings.skills.trust.keys
    )
    return SignatureStatus(status=check.status, key_id=check.key_id, message=check.message)


@router.get(
    "/{name}/versions/{version}/files/{path:path}",
    response_class=Response,
    responses={
        **_NOT_FOUND,
        200: {
            "content": {"text/plain": {}, "application/octet-stream": {}},
            "description": "The file's bytes",
        },
    },
    summary="One file of a skill version",
)
async def get_skill_file(
    name: str, version: str, path: str, stored: Stored, library: Library
) -> Response:
    """The bytes of one file: ``text/plain`` when it is UTF-8 text, else octet-stream."""
    if name in library:
        skill = library.get(name)
        if version != skill.version:
            raise ApiProblem(404, f"directory skill {name!r} has no version {version!r}")
        files = await asyncio.to_thread(_directory_files, skill)
        if path not in files:
            raise ResourceNotFoundError(name, path, "no such file in the skill")
        # Only a listed file can be named: no '..', no symlink, no hidden file gets through.
        data = await asyncio.to_thread((skill.path / path).read_bytes)
    else:
        data = await stored.read_file(name, version, path)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return Response(data, media_type="application/octet-stream")
    return Response(data, media_type="text/plain; charset=utf-8")


@router.patch(
    "/{name}",
    response_model=SkillRecord,
    responses={**_NOT_FOUND, **_CONFLICT},
    summary="Enable or disable an uploaded skill",
)
async def patch_skill(
    name: str, body: SkillPatch, stored: Stored, library: Library, state: State
) -> SkillRecord:
    """Switch an uploaded skill on or off (directory skills: ``SKILLS__DISABLED``)."""
    _refuse_directory(library, name, "changed")
    current = await _uploaded_skill(stored, name)
    # Recorded before it is made: a record that cannot be written refuses it (503).
    await state.audit.record(
        "enable" if body.enabled else "disable", skill=name, version=current.latest
    )
    record = await stored.set_enabled(name, body.enabled)
    await _changed(state)
    return SkillRecord.of(record)


@router.delete(
    "/{name}",
    status_code=204,
    response_class=Response,
    responses={**_NOT_FOUND, **_CONFLICT},
    summary="Delete an uploaded skill and all its versions",
)
async def delete_skill(name: str, stored: Stored, library: Library, state: State) -> Response:
    """Remove the skill's record and every stored version."""
    _refuse_directory(library, name, "deleted")
    current = await _uploaded_skill(stored, name)
    # Recorded before it is made: a record that cannot be written refuses it (503).
    await state.audit.record("remove", skill=name, version=current.latest)
    await stored.delete(name)
    await _changed(state)
    return Response(status_code=204)


async def _uploaded_skill(stored: StoredSkills, name: str) -> StoredSkill:
    """The uploaded skill a change is about to be recorded for.

    Raises:
        SkillNotFoundError: there is none of that name (404; nothing recorded).
    """
    record = await stored.get(name)
    if record is None:
        raise SkillNotFoundError(name)
    return record
