"""``karpenter.sh/v1`` NodePool: the template new nodes are made from, and its limits."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from models import labels as L
from models.cron import schedule_error
from models.duration import NEVER, parse_duration, parse_optional_duration
from models.kube import KubeModel, NodeSelectorRequirementWithMinValues, ObjectMeta, Taint
from models.quantity import parse_limit
from models.requirements import Requirements

_BUDGET_NODES = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")


class NodeClassReference(KubeModel):
    group: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    name: str = Field(min_length=1)


class Budget(KubeModel):
    nodes: str = "10%"
    schedule: str | None = None
    duration: str | None = None
    reasons: list[Literal["Underutilized", "Empty", "Drifted"]] | None = None

    @field_validator("nodes")
    @classmethod
    def _nodes_pattern(cls, v: str) -> str:
        if not _BUDGET_NODES.match(v):
            raise ValueError('must be a count like "5" or a percentage like "10%"')
        return v

    @field_validator("duration")
    @classmethod
    def _duration(cls, v: str | None) -> str | None:
        if v is not None:
            parse_duration(v)
        return v

    @model_validator(mode="after")
    def _schedule_with_duration(self) -> Budget:
        if (self.schedule is None) != (self.duration is None):
            raise ValueError("schedule and duration must be set together")
        if self.schedule is not None and (err := schedule_error(self.schedule)):
            raise ValueError(f"schedule: {err}")
        return self


class Disruption(KubeModel):
    consolidate_after: str = "0s"
    # Balanced: Karpenter v1.14's scored consolidation (scheduling/disruption/consolidation.py).
    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"] = (
        "WhenEmptyOrUnderutilized"
    )
    budgets: list[Budget] = Field(default_factory=lambda: [Budget(nodes="10%")], max_length=50)

    @field_validator("consolidate_after")
    @classmethod
    def _duration(cls, v: str) -> str:
        parse_optional_duration(v)
        return v


class NodeClaimTemplateMeta(KubeModel):
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    @field_validator("labels")
    @classmethod
    def _labels_not_restricted(cls, v: dict[str, str]) -> dict[str, str]:
        for key in v:
            if L.is_restricted_node_label(L.normalize(key)) and key != L.NODEPOOL:
                raise ValueError(f"label {key!r} is restricted")
            if key == L.NODEPOOL:
                raise ValueError(f"label {key!r} is restricted")
        return v


class NodeClaimTemplateSpec(KubeModel):
    node_class_ref: NodeClassReference
    taints: list[Taint] = Field(default_factory=list)
    startup_taints: list[Taint] = Field(default_factory=list)
    requirements: list[NodeSelectorRequirementWithMinValues] = Field(
        default_factory=list, max_length=100
    )
    expire_after: str = "720h"
    termination_grace_period: str | None = None

    @field_validator("expire_after")
    @classmethod
    def _expire(cls, v: str) -> str:
        if v != NEVER:
            parse_duration(v)
        return v

    @field_validator("termination_grace_period")
    @classmethod
    def _tgp(cls, v: str | None) -> str | None:
        if v is not None:
            parse_duration(v)
        return v

    @field_validator("requirements")
    @classmethod
    def _requirement_keys(
        cls, v: list[NodeSelectorRequirementWithMinValues]
    ) -> list[NodeSelectorRequirementWithMinValues]:
        for i, r in enumerate(v):
            key = L.normalize(r.key)
            if key == L.NODEPOOL or (
                L.is_restricted_node_label(key) and key not in L.WELL_KNOWN_LABELS
            ):
                raise ValueError(f"[{i}].key: label {r.key!r} is restricted")
        return v


class NodeClaimTemplate(KubeModel):
    metadata: NodeClaimTemplateMeta = Field(default_factory=NodeClaimTemplateMeta)
    spec: NodeClaimTemplateSpec


class NodePoolSpec(KubeModel):
    template: NodeClaimTemplate
    disruption: Disruption = Field(default_factory=Disruption)
    limits: dict[str, str | int] = Field(default_factory=dict)
    weight: int | None = Field(default=None, ge=1, le=100)

    @field_validator("limits")
    @classmethod
    def _limits(cls, v: dict[str, str | int]) -> dict[str, str | int]:
        for name, q in v.items():
            try:
                parse_limit(q)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        return v


class NodePool(KubeModel):
    api_version: Literal["karpenter.sh/v1"] = "karpenter.sh/v1"
    kind: Literal["NodePool"] = "NodePool"
    metadata: ObjectMeta
    spec: NodePoolSpec

    @property
    def name(self) -> str:
        return self.metadata.name

    def requirements(self) -> Requirements:
        """Template requirements plus the template's labels and the nodepool label."""
        tmpl = self.spec.template
        reqs = Requirements.from_selector_terms(r.to_wire() for r in tmpl.spec.requirements)
        return reqs.with_requirements(
            Requirements.from_labels({**tmpl.metadata.labels, L.NODEPOOL: self.name}).values()
        )

    def limits_milli(self) -> dict[str, int]:
        return {k: parse_limit(v) for k, v in self.spec.limits.items()}
