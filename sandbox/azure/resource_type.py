"""An ARM resource type: the paths ARM serves its resources at, and the fields every ARM
resource carries, whatever its type (id, name, type, location, tags)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sandbox.azure.resource_table import ArmFailure


@dataclass(frozen=True)
class ResourceType:
    """One ARM resource type (``Microsoft.Network/networkInterfaces``): the ``type`` its bodies
    carry and the paths of one resource and of a resource group's list, matched as ARM matches
    them (case-insensitively), with ``sub``, ``rg`` and, for one resource, ``name``."""

    namespace: str
    kind: str

    @property
    def type(self) -> str:
        return f"{self.namespace}/{self.kind}"

    def resource_id(self, sub: str, rg: str, name: str) -> str:
        return f"/subscriptions/{sub}/resourceGroups/{rg}/providers/{self.type}/{name}"

    @cached_property
    def item_path(self) -> re.Pattern[str]:
        return self._pattern(r"/(?P<name>[^/]+)")

    @cached_property
    def list_path(self) -> re.Pattern[str]:
        return self._pattern("")

    def _pattern(self, tail: str) -> re.Pattern[str]:
        return re.compile(
            r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)/providers/"
            + re.escape(self.type)
            + tail
            + "$",
            re.I,
        )


def put_fields(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """What every PUT of a resource carries: its location (ARM requires one) and its
    ``properties`` (a copy, for the resource's code to complete)."""
    location = str(body.get("location") or "")
    if not location:
        raise ArmFailure(400, "LocationRequired", "The location property is required.")
    return location, dict(body.get("properties") or {})


def stored(
    rtype: ResourceType, rid: str, name: str, location: str, body: dict[str, Any], **fields: Any
) -> dict[str, Any]:
    """A resource as ARM stores and returns it: what every type has (id, name, type,
    location, the PUT's tags), then what this one adds (``properties``, ``zones``, ...)."""
    return {
        "id": rid,
        "name": name,
        "type": rtype.type,
        "location": location,
        "tags": dict(body.get("tags") or {}),
        **fields,
    }
