"""Small Kubernetes API types shared by the Karpenter kinds (ObjectMeta, Taint, selectors)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from models.requirements import GT, GTE, IN, LT, LTE, OPERATORS


class KubeModel(BaseModel):
    """camelCase on the wire, snake_case in Python; unknown fields kept (forward compatible)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class ObjectMeta(KubeModel):
    name: str = ""
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    finalizers: list[str] = Field(default_factory=list)
    deletion_timestamp: str | None = None
    creation_timestamp: str | None = None
    owner_references: list[dict[str, Any]] = Field(default_factory=list)


class Taint(KubeModel):
    key: str
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class NodeSelectorRequirementWithMinValues(KubeModel):
    key: str = Field(min_length=1, max_length=316)
    operator: str
    values: list[str] = Field(default_factory=list)
    min_values: int | None = Field(default=None, ge=1, le=50)

    @field_validator("operator")
    @classmethod
    def _known_operator(cls, v: str) -> str:
        if v not in OPERATORS:
            raise ValueError(f"operator must be one of {', '.join(OPERATORS)}")
        return v

    @model_validator(mode="after")
    def _values_match_operator(self) -> NodeSelectorRequirementWithMinValues:
        if self.operator == IN and not self.values:
            raise ValueError("operator In requires at least one value")
        if self.operator in (GT, LT, GTE, LTE):
            if len(self.values) != 1:
                raise ValueError(f"operator {self.operator} takes exactly one value")
            try:
                n = int(self.values[0])
            except ValueError:
                raise ValueError(f"operator {self.operator} takes an integer value") from None
            if n < 0:
                raise ValueError(f"operator {self.operator} takes a non-negative integer")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values")
        if (
            self.min_values is not None
            and self.operator == IN
            and self.min_values > len(self.values)
        ):
            raise ValueError("minValues must not exceed the number of values for operator In")
        return self
