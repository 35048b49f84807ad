"""The one place the oracle's tests run Joinery: in process, the functions ``joinery plan``
and ``joinery plan --disruption`` call, returning the JSON documents of DESIGN.md's
contracts. The oracle judges those documents and never sees Joinery's internals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from models.catalog import load_catalog
from scheduling.disruption.report import decision_to_dict
from scheduling.disruption.round import run_round
from scheduling.inputs import Document, build_problem
from scheduling.lowerbound import lower_bound
from scheduling.report import plan_to_dict
from scheduling.solver import Solver


def _documents(objects: Sequence[Mapping[str, Any]]) -> list[Document]:
    return [Document(dict(o), f"generated document {i}") for i, o in enumerate(objects)]


def plan(objects: Sequence[Mapping[str, Any]], catalog: Mapping[str, Any]) -> dict[str, Any]:
    """``joinery plan -o json`` of ``objects`` against ``catalog``."""
    parsed = build_problem(_documents(objects), load_catalog(catalog))
    solver = Solver(parsed.problem)
    result = solver.solve()
    return plan_to_dict(result, lower_bound(solver, result.scheduled))


def disruption(
    objects: Sequence[Mapping[str, Any]], catalog: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    """``joinery plan --disruption -o json`` at ``now``."""
    result = run_round(_documents(objects), load_catalog(catalog), now)
    doc = plan_to_dict(result.plan, lower_bound(result.solver, result.plan.scheduled))
    doc["disruption"] = decision_to_dict(result.decision)
    return doc
