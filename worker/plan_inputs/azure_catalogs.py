"""Each NodePool's catalog on Azure, read from the region (``joinery plan --provider azure``).

The worker plans a pool on the catalog its own AKSNodeClass sees (image family, OS disk, max
pods, security and GPU filters); the command reads the region's SKUs and prices once and
builds that view per class (``activities.azure.catalog_source``). A pool whose class is not
in the inputs sees the cluster's defaults, as with ``--catalog``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from activities.azure.catalog_source import RegionCatalogs
from activities.azure.params import CatalogParams
from models.aksnodeclass import AKSNodeClass
from models.instancetype import InstanceType
from scheduling.inputs import Document
from worker.plan_inputs.plan_catalogs import class_ref, pool_name


def pool_catalogs(
    documents: Sequence[Document],
    classes: Mapping[str, AKSNodeClass],
    region: RegionCatalogs,
    params_of: Callable[[AKSNodeClass | None], CatalogParams],
) -> tuple[list[InstanceType], dict[str, list[InstanceType]]]:
    """The default catalog, and pool name → its own where its class makes it differ."""
    default = region.types(params_of(None))
    own: dict[str, list[InstanceType]] = {}
    for d in documents:
        if d.body.get("kind") != "NodePool":
            continue
        pool, ref = pool_name(d.body), class_ref(d.body)
        if pool is None or ref is None or ref not in classes:
            continue
        view = region.types(params_of(classes[ref]))
        if view is not default:
            own[pool] = view
    return default, own
