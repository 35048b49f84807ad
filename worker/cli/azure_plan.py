"""``joinery plan`` on Azure: its options, its AKSNodeClasses, and the region's catalog.

With ``--catalog FILE`` an AKSNodeClass pool plans on that file exactly as an EC2NodeClass
pool does; with ``--provider azure --region R`` (and no ``--catalog``) the region's SKUs and
prices are read through the SDK (``--endpoint`` for an emulator) and each AKSNodeClass gets
its own view. Everything Azure is imported only when the inputs or options ask for it, so a
plan on EC2 inputs costs what it did.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from models.instancetype import InstanceType
from models.nodepool import NodePool
from scheduling.inputs import Document
from worker.plan_inputs import aks_nodeclasses, plan_catalogs
from worker.usage import UsageError


def register_args(p: argparse.ArgumentParser) -> None:
    from worker.cli.azure_args import add_azure_args, add_provider_arg

    add_provider_arg(p, default=None)
    p.add_argument("--region", default="", help="with --provider azure: the region to read")
    p.add_argument("--endpoint", default="", help="with --provider azure: ARM (an emulator)")
    add_azure_args(p)


def catalog_files(
    args: argparse.Namespace, exists: Callable[[str], bool]
) -> plan_catalogs.CatalogFiles | None:
    """``--catalog`` as given; None when the catalog is to be read from Azure instead."""
    if args.catalog:
        if args.region or args.endpoint:
            raise UsageError("--catalog: give a catalog file or --region/--endpoint, not both")
        return plan_catalogs.catalog_files(args.catalog, exists)
    if args.provider != aks_nodeclasses.AZURE:
        raise UsageError(
            "--catalog: required (`joinery catalog` writes one), or --provider azure "
            "--region REGION to read Azure's"
        )
    return None


def check_classes(args: argparse.Namespace, split: plan_catalogs.SplitInputs) -> None:
    """The inputs belong to one provider (``--provider``'s, when given), and every
    AKSNodeClass among them is valid and would be Ready."""
    aks_nodeclasses.cluster_provider(split.pools, split.ec2, split.aks, args.provider)
    for d in split.aks.values():
        aks_nodeclasses.parse(d)


def region_catalogs(
    args: argparse.Namespace, documents: list[Document], aks: Mapping[str, Document]
) -> tuple[list[InstanceType], dict[str, list[InstanceType]]]:
    """The region's catalog for pools without a class among the inputs, and each AKSNodeClass
    pool's own."""
    from azure.core.exceptions import AzureError

    from worker.cli.azure_args import azure_failure, azure_target, catalog_params
    from worker.plan_inputs.azure_catalogs import pool_catalogs

    target = azure_target(args, args.endpoint)
    classes = {name: aks_nodeclasses.parse(d) for name, d in aks.items()}
    region = target.catalogs()

    def params_of(nodeclass: Any) -> Any:
        return catalog_params(args, nodeclass)

    try:
        default, own = pool_catalogs(documents, classes, region, params_of)
    except AzureError as exc:
        raise azure_failure(f"region {target.region}", exc) from None
    if not default:
        raise UsageError(f"region {target.region}: no usable VM size (Resource SKUs)")
    for problem in region.pricing.problems:
        print(f"joinery plan: warning: {problem}", file=sys.stderr)
    return default, own


def refuse_without_catalog(nodepools: Sequence[NodePool]) -> None:
    """``joinery explain`` reads EC2's catalog when no ``--catalog`` is given; a cluster of
    AKSNodeClass pools needs the catalog file instead (one line, exit 2)."""
    for pool in nodepools:
        ref = pool.spec.template.spec.node_class_ref
        if (ref.group, ref.kind) == (aks_nodeclasses.GROUP, aks_nodeclasses.KIND):
            raise UsageError(
                f"NodePool {pool.name}: its nodeClassRef is AKSNodeClass {ref.name}; give "
                "--catalog FILE (`joinery catalog --provider azure --region R` writes one)"
            )
