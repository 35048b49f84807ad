"""Property test: every pod ``joinery plan`` places is admitted by the oracle where it lands,
on its claim's cheapest instance type or on an existing node, all placements judged together.

``ORACLE_EXAMPLES`` (an integer) runs that many generated plans instead of the CI default."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from tests.oracle import joinery_bridge
from tests.oracle.generate import Size, build, seeds, sizes
from tests.oracle.judge import judge_plan

EXAMPLES = int(os.environ.get("ORACLE_EXAMPLES") or 0) or 2500
judged: list[tuple[int, Size]] = []


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(seed=seeds, size=sizes)
def every_planned_pod_is_admitted(seed: int, size: Size) -> None:
    sc = build(
        seed,
        max_managed=size.max_managed,
        max_unmanaged=size.max_unmanaged,
        max_apps=size.max_apps,
        replicas=size.replicas,
        pending_share=0.4,
    )
    out = joinery_bridge.plan(sc.objects, sc.catalog)
    why = judge_plan(sc.objects, sc.catalog, out)
    assert why is None, f"seed {seed} ({size}): {why}"
    judged.append((seed, size))


def test_every_planned_pod_is_admitted() -> None:
    """The property over its examples, then a count of the plans it judged (a guard against
    a test that judges nothing)."""
    judged.clear()
    every_planned_pod_is_admitted()
    print(f"plans judged: {len(judged)} ({len(set(judged))} distinct)")
    assert len(set(judged)) >= EXAMPLES * 0.9
