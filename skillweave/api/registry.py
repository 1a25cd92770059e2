"""``GET /v1/registry/search``: the skill registries of ``SKILLS__REGISTRIES`` searched, as
``skillweave skills find`` searches them (:class:`~skillweave.skills.registries.Registries`).

The answer is :class:`~skillweave.skills.registries.RegistryResults`: the hits, best first
(each with its index entry: what to install, version, signature, scan), and one line per
registry that could not be read. It is also what another skillweave's ``api`` registry reads;
such a relay (``Skillweave-Registry-Relay``) is answered from this API's index and marketplace
registries only, so that two APIs listing each other never loop. Bearer auth and problem+json
like every route (``skillweave.api.app``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query

from skillweave.api.deps import State
from skillweave.api.problems import ApiProblem
from skillweave.errors import ConfigError
from skillweave.skills.registries import MAX_HITS, Registries, RegistryResults

__all__ = ["router"]

router = APIRouter(prefix="/v1/registry", tags=["registry"])


@router.get("/search", response_model_exclude_none=True)
async def search_registries(
    state: State,
    q: Annotated[str, Query(min_length=1, max_length=1000, description="What to look for.")],
    k: Annotated[int, Query(ge=1, le=MAX_HITS, description="How many hits at most.")] = 10,
    registry: Annotated[
        str | None, Query(max_length=2048, description="Only the registry with this label.")
    ] = None,
    relayed: Annotated[
        str | None,
        Header(alias="Skillweave-Registry-Relay", include_in_schema=False),
    ] = None,
) -> RegistryResults:
    """Search the skill registries for skills that are not installed; 404 when `registry`
    names none configured. Registries that cannot be read are named in ``problems``."""
    registries = Registries(state.settings.skills, store=state.store)
    if registry is not None and registry not in {s.label for s in registries.sources}:
        raise ApiProblem(404, f"no registry labelled {registry!r} in SKILLS__REGISTRIES")
    try:
        return await registries.results(q, top_k=k, registry=registry, relay=relayed is None)
    except ConfigError as exc:  # the server's settings (a malformed trusted key)
        raise ApiProblem(500, f"the API's registry settings cannot be used: {exc}") from None
