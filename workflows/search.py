"""What makes a workflow findable in the Temporal UI: search attributes and summaries.

Custom search attributes must be registered on the namespace (``joinery dev`` and
``temporal operator search-attribute create`` do it); upserts are gated behind a setting
because the time-skipping test server wedges on them.
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate

with workflow.unsafe.imports_passed_through():
    from models import contract

NODEPOOL = SearchAttributeKey.for_keyword(contract.SA_NODEPOOL)
NODECLAIM = SearchAttributeKey.for_keyword(contract.SA_NODECLAIM)
INSTANCE_TYPE = SearchAttributeKey.for_keyword(contract.SA_INSTANCE_TYPE)
CAPACITY_TYPE = SearchAttributeKey.for_keyword(contract.SA_CAPACITY_TYPE)
ZONE = SearchAttributeKey.for_keyword(contract.SA_ZONE)
PHASE = SearchAttributeKey.for_keyword(contract.SA_PHASE)
DISRUPTION_REASON = SearchAttributeKey.for_keyword(contract.SA_DISRUPTION_REASON)

ALL: tuple[SearchAttributeKey[str], ...] = (
    NODEPOOL,
    NODECLAIM,
    INSTANCE_TYPE,
    CAPACITY_TYPE,
    ZONE,
    PHASE,
    DISRUPTION_REASON,
)


def upsert(enabled: bool, updates: Sequence[SearchAttributeUpdate[str]]) -> None:
    """Upsert inside a workflow when enabled; empty values are skipped."""
    if not enabled:
        return
    kept = [u for u in updates if u.value]
    if kept:
        workflow.upsert_search_attributes(kept)
