"""An instance as callers see it, whatever the cloud: a read-only shape, so each provider
keeps its own record (EC2's ``activities.ec2.instances.Instance``) and callers read only this."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol


class Instance(Protocol):
    """One machine a provider launched for this cluster."""

    @property
    def id(self) -> str: ...

    @property
    def provider_id(self) -> str:
        """The Node's ``spec.providerID`` for it (the provider's format)."""
        ...

    @property
    def instance_type(self) -> str: ...

    @property
    def zone(self) -> str: ...

    @property
    def capacity_type(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def image_id(self) -> str: ...

    @property
    def launch_time(self) -> datetime | None: ...

    @property
    def tags(self) -> Mapping[str, str]: ...

    @property
    def nodeclaim(self) -> str | None:
        """The NodeClaim it was launched for, as its tags say (None when untagged)."""
        ...

    @property
    def subnet_id(self) -> str:
        """Where it was placed, for drift ("" when unknown)."""
        ...

    @property
    def security_group_ids(self) -> Sequence[str]: ...
