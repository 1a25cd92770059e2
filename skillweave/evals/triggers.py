"""Trigger evals: does the catalog pick a skill for the requests it is meant for, and not for
the others (:func:`trigger_summary`, :func:`suite_trigger_summary`).

A skill's eval prompts (``evals/evals.json``) are requests it is meant for; its
``evals/triggers.json`` adds requests marked ``should_trigger`` (skill-creator's trigger evals:
mostly near misses it must not be picked for, and a few more it must). Each request is ranked
against the library with the configured selection strategy (``skills.selection``), through the
very call the ``auto`` catalog makes for a task (``skills.catalog.build_catalog``) and
``search_skills`` makes for a query (``engines._skill_search``): ``SkillRegistry.search``. The
skill is *triggered* by a request when it ranks within the catalog's top-k
(``skills.catalog_top_k``). No model is asked: this measures the selection alone, so it takes a
moment, reads the same on every engine, and moves only with the skill's description (and, for
``bm25``, its body's headings) against the rest of the library.

What is decided here, and why:

- The library is the one an agent with no ``skills:`` list sees: every enabled skill of the
  registry the caller passes, at every level of a tree, as the ``auto`` catalog and
  ``search_skills`` rank them. A child skill counts by its own rank only: its parent picked for
  a request is not the child picked (the model would still have to choose it among the
  parent's sub-skills), and a parent is not triggered by its child's rank (a child is a
  package of its own).
- The skill is ranked as enabled even where the library has it switched off (the question is
  whether its description fits the request), and a version other than the library's (a draft,
  a stored version) ranks in its place when passed as `candidate`.
- A request that matches no skill at all triggers none: the ``auto`` catalog then lists the
  first enabled skills unranked, which is not a pick.
- No minimum score: neither the ``auto`` catalog nor ``search_skills`` has one (preload's
  ``min_score`` belongs to a separate pick, off unless an agent turns it on).
- ``rank`` is the skill's place among every skill that matches the request (1 is first), also
  below the top-k, so that a near miss shows how near it came; None when it does not match.
  The top-k is a prefix of that ranking (``relevance.top_hits`` orders ties by name wherever
  the cut falls), so a request triggers the skill exactly when its rank is at most k.
- A request listed twice with the same ``should_trigger`` counts once (an eval prompt copied
  into ``triggers.json``); listed both ways, both are kept and one of them is wrong.

Called by the eval report step (``EvalServices.write_eval_report``), ``skillweave skills eval
--triggers-only`` and the eval summary an approval shows (``evals.summary``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from pydantic import ValidationError

from skillweave.config import SelectionMode, SkillsSettings
from skillweave.errors import SkillNotFoundError
from skillweave.evals.results import TriggerCaseResult, TriggerSummary
from skillweave.evals.suite import MAX_EVALS, MAX_TRIGGERS, EvalSuite, EvalSuiteError, TriggerCase
from skillweave.skills import Skill, SkillRegistry

__all__ = ["MAX_TRIGGER_CASES", "suite_trigger_summary", "trigger_summary"]

MAX_TRIGGER_CASES: Final = MAX_EVALS + MAX_TRIGGERS
"""Requests one summary ranks: every eval prompt and every ``triggers.json`` case a suite may
hold."""


def trigger_summary(
    registry: SkillRegistry,
    skill: str,
    *,
    positives: Sequence[str],
    negatives: Sequence[TriggerCase],
    settings: SkillsSettings,
    candidate: Skill | None = None,
    top_k: int | None = None,
) -> TriggerSummary:
    """Whether `registry`'s selection picks `skill` for each request (see the module docstring).

    Args:
        registry: the library an agent with no ``skills:`` list sees.
        skill: the skill's name (or ``namespace.name``).
        positives: requests the skill is meant for (its eval prompts).
        negatives: ``triggers.json``'s cases, each with its own ``should_trigger`` (a case
            marked true counts as a positive).
        settings: the selection strategy (``selection``) and the top-k (``catalog_top_k``).
        candidate: the skill to rank in the place of the library's copy (a draft, another
            version); its name is `skill`'s.
        top_k: the k of an agent that sets its own; None: ``settings.catalog_top_k``.

    Raises:
        SkillNotFoundError: `skill` is not in `registry` and no `candidate` is given.
        EvalSuiteError: a positive that is not a request (empty, or longer than a message
            may be), or more than :data:`MAX_TRIGGER_CASES` requests.
        ConfigError: the selection strategy cannot run here (``skills.selection``).
        ValueError: `top_k` below 1, or a `candidate` named otherwise than `skill`.
    """
    cases = _cases(skill, positives, negatives)
    k = settings.catalog_top_k if top_k is None else top_k
    if k < 1:
        raise ValueError(f"top_k must be at least 1, got {k}")
    ranking, name = _ranking(registry, skill, settings.selection, candidate)
    results = tuple(_judge(ranking, name, case, k) for case in cases)
    meant = [result for result in results if result.should_trigger]
    not_meant = [result for result in results if not result.should_trigger]
    return TriggerSummary(
        strategy=ranking.selector.strategy,
        top_k=k,
        positives=len(meant),
        negatives=len(not_meant),
        recall=_share(meant),
        false_trigger_rate=_share(not_meant),
        first_recall=_first(meant),
        first_false_trigger_rate=_first(not_meant),
        cases=results,
    )


def suite_trigger_summary(
    registry: SkillRegistry,
    skill: str,
    suite: EvalSuite,
    triggers: Sequence[TriggerCase] = (),
    *,
    settings: SkillsSettings,
    candidate: Skill | None = None,
    top_k: int | None = None,
) -> TriggerSummary:
    """:func:`trigger_summary` of a skill's evals as its files hold them: every eval's prompt
    a positive, and `triggers` (``evals/triggers.json``) as marked. Its callers read the files
    (``evals.sources.read_suite``); the arguments and errors are :func:`trigger_summary`'s."""
    return trigger_summary(
        registry,
        skill,
        positives=[case.prompt for case in suite.evals],
        negatives=triggers,
        settings=settings,
        candidate=candidate,
        top_k=top_k,
    )


def _cases(
    skill: str, positives: Sequence[str], negatives: Sequence[TriggerCase]
) -> list[TriggerCase]:
    source = f"{skill} trigger evals"
    if len(positives) + len(negatives) > MAX_TRIGGER_CASES:
        raise EvalSuiteError(source, f"more than {MAX_TRIGGER_CASES} requests to rank")
    cases: list[TriggerCase] = []
    for index, query in enumerate(positives):
        try:
            cases.append(TriggerCase(query=query, should_trigger=True))
        except ValidationError as error:
            problem = error.errors()[0]["msg"]
            raise EvalSuiteError(
                f"{skill} trigger evals", f"prompt {index + 1}: {problem}"
            ) from None
    cases.extend(negatives)
    seen: set[tuple[str, bool]] = set()
    unique = []
    for case in cases:
        key = (case.query, case.should_trigger)
        if key not in seen:
            seen.add(key)
            unique.append(case)
    return unique


def _ranking(
    registry: SkillRegistry, skill: str, selection: SelectionMode, candidate: Skill | None
) -> tuple[SkillRegistry, str]:
    """The registry to rank with (the configured strategy, the skill enabled, `candidate` in
    its place) and the skill's name in it. The caller's own registry when it already is that
    (a candidate whose text is the library copy's changes no ranking), so that its selector,
    built once, is reused: building one embeds or indexes the whole library."""
    name = registry.canonical(skill)
    if candidate is not None:
        if candidate.name not in (skill, name):
            raise ValueError(f"the candidate is {candidate.name!r}, not {skill!r}")
        name = candidate.name
    elif name is None:
        raise SkillNotFoundError(
            skill, available=registry.attachable(), namesakes=registry.namesakes(skill)
        )
    if (
        (candidate is None or _same_text(candidate, registry, name))
        and registry.is_enabled(name)
        and registry.selection == selection
    ):
        return registry, name
    skills = {other.name: other for other in registry}
    skills[name] = dataclasses.replace(candidate or registry.get(name), enabled=True)
    disabled = [other for other in skills if other != name and not registry.is_enabled(other)]
    return SkillRegistry(skills, disabled=disabled, selection=selection), name


def _same_text(candidate: Skill, registry: SkillRegistry, name: str) -> bool:
    """Whether `candidate` reads as the library's `name` to a selector (its name, description
    and body: ``SkillRegistry.selector``)."""
    own = registry.get(name) if name in registry else None
    return own is not None and (own.description, own.body) == (
        candidate.description,
        candidate.body,
    )


def _judge(ranking: SkillRegistry, name: str, case: TriggerCase, k: int) -> TriggerCaseResult:
    hits = ranking.search(case.query, top_k=len(ranking))
    rank = next((place for place, hit in enumerate(hits, 1) if hit.name == name), None)
    return TriggerCaseResult(
        query=case.query,
        should_trigger=case.should_trigger,
        triggered=rank is not None and rank <= k,
        rank=rank,
    )


def _first(results: Sequence[TriggerCaseResult]) -> float | None:
    if not results:
        return None
    return sum(result.rank == 1 for result in results) / len(results)


def _share(results: Sequence[TriggerCaseResult]) -> float | None:
    if not results:
        return None
    return sum(result.triggered for result in results) / len(results)
