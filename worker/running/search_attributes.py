"""At start: the Temporal namespace has every search attribute Joinery's workflows upsert.

An upsert of an attribute the namespace does not have fails the workflow task
(BadSearchAttributes) and wedges the workflow at its first acting round, long after the
deploy looked healthy. So a worker with search attributes on lists the namespace's first
and either registers what is missing (when allowed) or stops with one line naming it.
The names come from ``models.contract.SEARCH_ATTRIBUTES``, the one list every registration
place (docs, chart, docker-compose, sandbox) is checked against.
"""

from __future__ import annotations

import logging

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from models import contract
from worker.usage import UsageError

log = logging.getLogger(__name__)

KEYWORD = IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
# Answers that mean "this caller may not ask" (Temporal Cloud keeps the operator API to its
# own control plane), not "the namespace lacks them": the check is skipped with a warning.
NOT_ANSWERED = (
    RPCStatusCode.PERMISSION_DENIED,
    RPCStatusCode.UNIMPLEMENTED,
    RPCStatusCode.UNAUTHENTICATED,
)


class SearchAttributesMissing(UsageError):
    """The namespace lacks some of Joinery's search attributes (one line, exit 2)."""


async def _registered(client: Client, namespace: str) -> dict[str, int]:
    answer = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=namespace)
    )
    return dict(answer.custom_attributes)


def _problems(registered: dict[str, int]) -> tuple[list[str], list[str]]:
    missing = [n for n in contract.SEARCH_ATTRIBUTES if n not in registered]
    wrong = [n for n in contract.SEARCH_ATTRIBUTES if n in registered and registered[n] != KEYWORD]
    return missing, wrong


async def problems(client: Client, namespace: str) -> tuple[list[str], list[str]]:
    """The search attributes ``namespace`` lacks, and those of a type other than Keyword
    (``joinery doctor``'s check; raises the RPCError of a server that will not list them)."""
    return _problems(await _registered(client, namespace))


async def ensure(client: Client, namespace: str, *, register: bool = False) -> list[str]:
    """Check (and with ``register``, add) the namespace's search attributes; returns the
    names registered. Raises ``SearchAttributesMissing`` naming what is missing or of the
    wrong type."""
    try:
        missing, wrong = _problems(await _registered(client, namespace))
    except RPCError as exc:
        if exc.status in NOT_ANSWERED:
            log.warning(
                "cannot list the search attributes of namespace %s (%s): not checked; "
                "register %s as Keyword",
                namespace,
                exc.message,
                ", ".join(contract.SEARCH_ATTRIBUTES),
            )
            return []
        raise
    if wrong:
        raise SearchAttributesMissing(
            f"Temporal namespace {namespace}: search attributes {', '.join(wrong)} are not of "
            "type Keyword; Joinery upserts them as Keyword"
        )
    if not missing:
        return []
    if not register:
        raise SearchAttributesMissing(
            f"Temporal namespace {namespace} lacks the search attributes {', '.join(missing)}"
            " (Keyword): register them (docs/deploy.md, step 1), start the worker with"
            " --register-search-attributes, or without --search-attributes"
        )
    await client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace=namespace, search_attributes=dict.fromkeys(missing, KEYWORD)
        )
    )
    log.info("registered search attributes %s on namespace %s", ", ".join(missing), namespace)
    return missing
