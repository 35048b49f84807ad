"""``joinery catalog --provider azure``: a region's Azure catalog in the DESIGN.md format.

The Resource SKUs and Retail Prices are read through the SDK (``--endpoint`` for an
emulator, ``--ca-file`` to trust its CA) and built as the worker builds them, for an
``--nodeclass`` AKSNodeClass (image family, OS disk, max pods, filters) or the defaults.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from models.catalog import dump_catalog
from scheduling.inputs import Document
from worker.cli.azure_args import azure_failure, azure_target, catalog_params
from worker.plan_inputs import aks_nodeclasses
from worker.usage import UsageError


def load_nodeclass(path: str) -> Document:
    """The one AKSNodeClass document of ``path``."""
    try:
        docs = [d for d in yaml.safe_load_all(Path(path).read_text(encoding="utf-8")) if d]
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UsageError(f"{path}: {str(exc).splitlines()[0]}") from None
    found = [
        Document(d, f"{path} document {i}")
        for i, d in enumerate(docs, 1)
        if isinstance(d, dict) and aks_nodeclasses.is_aks(d)
    ]
    if len(found) != 1:
        raise UsageError(f"{path}: expected exactly one AKSNodeClass document, found {len(found)}")
    return found[0]


def run_azure(args: argparse.Namespace) -> int:
    from azure.core.exceptions import AzureError

    from worker.cli.catalog_command import write

    nodeclass = aks_nodeclasses.parse(load_nodeclass(args.nodeclass)) if args.nodeclass else None
    target = azure_target(args, args.endpoint_url)
    region = target.catalogs()
    try:
        types = region.types(catalog_params(args, nodeclass))
    except AzureError as exc:
        raise azure_failure(f"region {target.region}", exc) from None
    for problem in region.pricing.problems:
        print(f"joinery catalog: warning: {problem}", file=sys.stderr)
    if not types:
        raise UsageError(f"region {target.region}: no usable VM size (Resource SKUs)")
    write(dump_catalog(types), types, args.output)
    return 0
