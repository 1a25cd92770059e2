"""What a Temporal namespace needs before skillweave's runs can run in it: to exist, and the
search attributes the workflow keeps up to date (``contract.SEARCH_ATTRIBUTES``), each of its type.

Every client is checked for the first when it connects (:func:`require_namespace`, called by
``skillweave.engines.temporal.connect``): a namespace that does not exist is one line saying how
to create it, on every door (``run``, ``api``, ``worker``, ``runs``, ``temporal setup``), instead
of an ``RPCError`` deep in the first call that needs it.

A run started in a namespace that lacks one fails every workflow task (``BadSearchAttributes``)
and stays "Running" for ever, so :class:`~skillweave.engines.temporal.TemporalEngine` refuses
to start one there (:func:`search_attribute_problems`), ``skillweave doctor`` says which are
missing, and ``skillweave temporal setup`` registers them (:func:`register_search_attributes`),
one call per attribute so that none is silently dropped, idempotently.
"""

from __future__ import annotations

from typing import Final

from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client
from temporalio.common import SearchAttributeIndexedValueType
from temporalio.service import RPCError, RPCStatusCode

from skillweave.engines.contract import SEARCH_ATTRIBUTES
from skillweave.errors import ConfigError

__all__ = [
    "TYPE_NAMES",
    "missing_namespace",
    "register_search_attributes",
    "require_namespace",
    "search_attribute_problems",
]

TYPE_NAMES: Final = {
    SearchAttributeIndexedValueType.TEXT: "Text",
    SearchAttributeIndexedValueType.KEYWORD: "Keyword",
    SearchAttributeIndexedValueType.INT: "Int",
    SearchAttributeIndexedValueType.DOUBLE: "Double",
    SearchAttributeIndexedValueType.BOOL: "Bool",
    SearchAttributeIndexedValueType.DATETIME: "Datetime",
    SearchAttributeIndexedValueType.KEYWORD_LIST: "KeywordList",
}
"""The names the Temporal CLI gives the types (``--type``)."""


def missing_namespace(namespace: str, address: str) -> str:
    """The one line that says `namespace` does not exist at `address`, and how to create it."""
    return (
        f"namespace {namespace!r} does not exist on Temporal at {address}: create it with "
        f"`temporal operator namespace create --namespace {namespace} --address {address}` "
        "(then `skillweave temporal setup`), or set WORKFLOW__NAMESPACE to one that exists"
    )


async def require_namespace(client: Client, namespace: str, *, address: str) -> None:
    """Refuse a namespace the server does not have. Any other answer (a key not allowed to
    describe it, say) lets the client through: the calls it makes will say what is wrong.

    Raises:
        ConfigError: the namespace does not exist (:func:`missing_namespace`).
    """
    try:
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=namespace)
        )
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise ConfigError(missing_namespace(namespace, address)) from None


def _name(value: int) -> str:
    try:
        return TYPE_NAMES[SearchAttributeIndexedValueType(value)]
    except ValueError:
        return f"type {value}"


async def search_attribute_problems(client: Client, namespace: str) -> list[str]:
    """One line per search attribute of skillweave's the namespace lacks or holds with
    another type; empty when all are there."""
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=namespace)
    )
    problems = []
    for key in SEARCH_ATTRIBUTES:
        wanted = TYPE_NAMES[key.indexed_value_type]
        found = listed.custom_attributes.get(key.name)
        if found is None:
            problems.append(f"{key.name} ({wanted}) is not registered")
        elif found != int(key.indexed_value_type):
            problems.append(f"{key.name} is registered as {_name(found)}, not {wanted}")
    return problems


async def register_search_attributes(client: Client, namespace: str) -> list[str]:
    """Register the attributes the namespace lacks, one call each; returns their names.

    Raises:
        ConfigError: an attribute exists with another type (Temporal cannot change a type:
            an operator must remove it first, or use another namespace).
    """
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=namespace)
    )
    added = []
    for key in SEARCH_ATTRIBUTES:
        found = listed.custom_attributes.get(key.name)
        wanted = int(key.indexed_value_type)
        if found is not None and found != wanted:
            raise ConfigError(
                f"search attribute {key.name} exists in namespace {namespace!r} as "
                f"{_name(found)}, not {TYPE_NAMES[key.indexed_value_type]}: remove it "
                "(temporal operator search-attribute remove) or use another namespace"
            )
        if found is None:
            await client.operator_service.add_search_attributes(
                AddSearchAttributesRequest(
                    namespace=namespace, search_attributes={key.name: wanted}
                )
            )
            added.append(key.name)
    return added
