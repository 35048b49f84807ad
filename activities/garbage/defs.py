"""The garbage-collection activities as Temporal sees them: thin shells over the modules that
own each kind of leftover. Each is idempotent (what another worker removed first counts as
removed), so two workers' rounds need no coordination."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from activities.deps import Deps
from activities.failures import typed_failures
from activities.garbage import (
    claims_without_instance,
    claims_without_nodepool,
    launch_templates,
    orphan_instances,
)
from activities.garbage.types import Collected, CollectInput
from activities.timestamps import utc_now
from models.contract import GarbageCollectionActivity as names


class GarbageCollectionActivities:
    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    @activity.defn(name=names.ORPHAN_INSTANCES)
    def orphan_instances(self, inp: CollectInput) -> Collected:
        with typed_failures():
            return orphan_instances.collect(self.deps, inp, utc_now())

    @activity.defn(name=names.CLAIMS_WITHOUT_INSTANCE)
    def claims_without_instance(self, inp: CollectInput) -> Collected:
        with typed_failures():
            return claims_without_instance.collect(self.deps, inp, utc_now())

    @activity.defn(name=names.CLAIMS_WITHOUT_NODEPOOL)
    def claims_without_nodepool(self, inp: CollectInput) -> Collected:
        with typed_failures():
            return claims_without_nodepool.collect(self.deps, inp, utc_now())

    @activity.defn(name=names.LAUNCH_TEMPLATES)
    def launch_templates(self, inp: CollectInput) -> Collected:
        with typed_failures():
            return launch_templates.collect(self.deps, inp, utc_now())

    def all(self) -> list[Callable[..., Any]]:
        return [
            self.orphan_instances,
            self.claims_without_instance,
            self.claims_without_nodepool,
            self.launch_templates,
        ]
