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
before, for older clients. One skill, an upload, an install and an enabling answer that
version's ``scan`` (the report as kept: every finding with its evidence ``excerpt`` and
``origin``, the model review's cost) and ``scan_decision`` (what ``skills.scan.policy`` decides,
and why in one line), so that an operator approving a held version reads why it was held.

The routes and the start-up hooks are here; the models are in
:mod:`skillweave.api.skill_schemas`, the reads in :mod:`skillweave.api.skill_reads`, the writes
in :mod:`skillweave.api.skill_writes` and the served library in
:mod:`skillweave.api.served_skills`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, File, Form, Query, Response, UploadFile
from fastapi.responses import JSONResponse

from skillweave.api.deps import SkillChanges, SkillReads
from skillweave.api.problems import problem, problem_response
from skillweave.api.served_skills import ServedSkills
from skillweave.api.skill_schemas import (
    CreatedSkill,
    InstalledSkill,
    InstallRequest,
    NewSkill,
    SkillDetail,
    SkillPage,
    SkillPatch,
    SkillRecord,
    Source,
    SourcePreview,
)
from skillweave.api.state import ApiComposition
from skillweave.engines import AgentServices
from skillweave.errors import SkillNameTakenError
from skillweave.skills import with_frontmatter_fields

__all__ = ["open_skills", "router", "serve_uploaded_skills"]

router = APIRouter(prefix="/v1/skills", tags=["skills"])

_NOT_FOUND = {404: problem_response("No such skill, version or file")}
_CONFLICT = {409: problem_response("A directory skill has that name")}
_NAME_TAKEN = {
    409: problem_response(
        "A skill of the package (at any depth) has a name another source owns; `errors` holds"
        " one entry with `name`, `path` (where in the package) and `owner`"
    )
}


async def open_skills(parts: ApiComposition) -> None:
    """Startup hook: the whole library (:class:`~skillweave.api.served_skills.ServedSkills`:
    the directory skills and the store's enabled ones, unpacked into ``SKILLS__UPLOADED_DIR``)
    that runs are pinned against, its directory part (which the listing shows) and the store's
    skills; reloaded every ``SKILLS__RELOAD_SECONDS`` (the changes of other processes too) and
    after every upload, switch or deletion here."""
    parts.skills = await ServedSkills.open(
        parts.settings.skills, parts.store, resources=parts.resources
    )


def serve_uploaded_skills(services: AgentServices) -> Callable[[ApiComposition], Awaitable[None]]:
    """A startup hook (after :func:`open_skills`) for an API that executes runs in-process: give
    `services` the whole library, again whenever it changes."""

    async def hook(parts: ApiComposition) -> None:
        skills = parts.served_skills("serve_uploaded_skills")
        skills.listeners.append(services.use_registry)
        services.use_registry(skills.registry)
        # A skill a run here publishes or installs is served at once, to the API's listing too.
        services.authoring.published = skills.changed
        services.installer.installed = skills.changed

    return hook


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


@router.post(
    "/",
    status_code=201,
    response_model=CreatedSkill,
    responses=_NAME_TAKEN,
    summary="Upload a skill given as SKILL.md text",
)
async def create_skill(
    body: NewSkill, writes: SkillChanges, reads: SkillReads
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
    try:
        record = await writes.add_content(body.name, body.description, content)
    except SkillNameTakenError as exc:
        return _name_taken(exc)
    scanned = await reads.scanned(record.name, record.latest)
    return CreatedSkill.of(record, overridden=overridden, **scanned)


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
    writes: SkillChanges,
    reads: SkillReads,
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
    try:
        record = await writes.add_package(
            data, name=name, description=description, signature=signature
        )
    except SkillNameTakenError as exc:
        return _name_taken(exc)
    return SkillRecord.of(record, **await reads.scanned(record.name, record.latest))


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
    body: InstallRequest, writes: SkillChanges
) -> list[InstalledSkill] | JSONResponse:
    """Install the source's skills (all or none), each stored with its origin: the source,
    the ref, its folder and the commit read. Only sources ``SKILLS__INSTALL_SOURCES`` allows
    are read: the server reaches what a client names."""
    try:
        return await writes.install(body)
    except SkillNameTakenError as exc:
        return _name_taken(exc)


@router.post(
    "/install/preview",
    response_model=SourcePreview,
    responses={403: problem_response("SKILLS__INSTALL_SOURCES does not allow the source")},
    summary="What a source holds, each skill scanned; nothing installed",
)
async def preview_install(body: InstallRequest, writes: SkillChanges) -> SourcePreview:
    """The skills an install of the same body would store (version, folder, marketplace
    plugins, description) with each scan and what the policy would decide; nothing is
    stored, audited or locked. Judged by ``SKILLS__INSTALL_SOURCES`` as an install is."""
    return await writes.preview(body)


@router.get("/", response_model=SkillPage, summary="List skills")
async def list_skills(
    *,
    reads: SkillReads,
    q: Annotated[
        str | None, Query(max_length=200, description="substring of name or description")
    ] = None,
    source: Source | None = None,
    enabled: bool | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> SkillPage:
    """Directory and uploaded skills, sorted by name, filtered and paged."""
    return await reads.page(q=q, source=source, enabled=enabled, limit=limit, offset=offset)


@router.get("/{name}", response_model=SkillDetail, responses=_NOT_FOUND, summary="One skill")
async def get_skill(name: str, reads: SkillReads) -> SkillDetail:
    """The skill, its versions, the files of its latest version, and that version's scan and
    signature (``skills.scan``, ``skills.trust``)."""
    return await reads.detail(name)


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
async def get_skill_file(name: str, version: str, path: str, reads: SkillReads) -> Response:
    """The bytes of one file: ``text/plain`` when it is UTF-8 text, else octet-stream."""
    data = await reads.file(name, version, path)
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
    name: str, body: SkillPatch, writes: SkillChanges, reads: SkillReads
) -> SkillRecord:
    """Switch an uploaded skill on or off (directory skills: ``SKILLS__DISABLED``); enabling
    a held version approves it, and the answer carries the scan (and the evals) approved."""
    record = await writes.set_enabled(name, body.enabled)
    evals = await reads.evals(record.name, record.latest) if body.enabled else None
    return SkillRecord.of(record, **await reads.scanned(record.name, record.latest), evals=evals)


@router.delete(
    "/{name}",
    status_code=204,
    response_class=Response,
    responses={**_NOT_FOUND, **_CONFLICT},
    summary="Delete an uploaded skill and all its versions",
)
async def delete_skill(name: str, writes: SkillChanges) -> Response:
    """Remove the skill's record and every stored version."""
    await writes.delete(name)
    return Response(status_code=204)
