"""``joinery catalog``: write a region's instance-type catalog in the DESIGN.md format.

The output is exactly what ``joinery plan --catalog`` reads, so a real region can be saved once
and planned against offline.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import yaml

from activities.ec2.catalog import fetch_raw_catalog
from activities.ec2.clients import AWSClients
from activities.ec2.errors import EC2Error
from activities.ec2.provider import EC2Provider
from activities.ec2.settings import ClusterInfo, ProviderSettings
from models.catalog import dump_catalog
from models.ec2nodeclass import EC2NodeClass
from models.instancetype import InstanceType
from models.resources import render
from worker.cli.azure_args import add_azure_args, add_provider_arg
from worker.running import karpenter_settings
from worker.usage import UsageError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("catalog", help="print a region's instance-type catalog")
    p.add_argument("--region", required=True, help="AWS region (us-east-1) or Azure (eastus)")
    p.add_argument(
        "--endpoint-url",
        "--endpoint",
        dest="endpoint_url",
        help="EC2-compatible endpoint, or ARM's with --provider azure (e.g. an emulator)",
    )
    p.add_argument(
        "--nodeclass",
        help="EC2NodeClass (or AKSNodeClass) YAML: kubelet, disks and subnet zones apply",
    )
    p.add_argument("--kubernetes-version", default="1.31", help="for AMI alias resolution")
    p.add_argument(
        "--cluster-name",
        default="joinery",
        help="cluster name the catalog's EC2NodeClass resolution uses (default joinery)",
    )
    p.add_argument(
        "--vm-memory-overhead-percent",
        default=karpenter_settings.lookup("VM_MEMORY_OVERHEAD_PERCENT", "0.075"),
        help="fraction of memory the hypervisor keeps, as the worker's setting (default 0.075;"
        " $JOINERY_VM_MEMORY_OVERHEAD_PERCENT, $VM_MEMORY_OVERHEAD_PERCENT)",
    )
    p.add_argument(
        "--reserved-enis",
        default=karpenter_settings.lookup("RESERVED_ENIS", "0"),
        help="ENIs kept out of max pods, as the worker's setting (default 0;"
        " $JOINERY_RESERVED_ENIS, $RESERVED_ENIS)",
    )
    p.add_argument(
        "-o",
        "--output",
        choices=("yaml", "json", "table"),
        default="yaml",
        help="output format (default yaml, the --catalog file format)",
    )
    add_provider_arg(p)
    add_azure_args(p, memory_overhead=False)
    p.set_defaults(func=run)


def _load_nodeclass(path: str) -> EC2NodeClass:
    try:
        with open(path, encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
    except (OSError, yaml.YAMLError) as exc:
        raise UsageError(f"{path}: {str(exc).splitlines()[0]}") from None
    found = [d for d in docs if isinstance(d, dict) and d.get("kind") == "EC2NodeClass"]
    if len(found) != 1:
        raise UsageError(f"{path}: expected exactly one EC2NodeClass document, found {len(found)}")
    try:
        return EC2NodeClass.model_validate(found[0])
    except ValueError as exc:
        errors: list[Any] = list(getattr(exc, "errors", lambda: [])())
        if errors:
            loc = ".".join(str(p) for p in errors[0]["loc"])
            raise UsageError(f"{path}: EC2NodeClass {loc}: {errors[0]['msg']}") from None
        raise UsageError(f"{path}: {exc}") from None


def _table(types: list[InstanceType]) -> str:
    header = ("NAME", "CPU", "MEMORY", "PODS", "ALLOC CPU", "ALLOC MEM", "OD $/h", "SPOT $/h")
    rows = [header]
    for it in types:
        cap, alloc = render(it.capacity), render(it.allocatable)
        od = [o.price for o in it.offerings if o.capacity_type == "on-demand" and o.available]
        spot = [o.price for o in it.offerings if o.capacity_type == "spot" and o.available]
        rows.append(
            (
                it.name,
                cap.get("cpu", ""),
                cap.get("memory", ""),
                cap.get("pods", ""),
                alloc.get("cpu", ""),
                alloc.get("memory", ""),
                f"{min(od):.4f}" if od else "-",
                f"{min(spot):.4f}" if spot else "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "".join(
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        + "\n"
        for r in rows
    )


def write(doc: dict[str, Any], types: list[InstanceType], output: str) -> None:
    """The catalog on stdout in the chosen format."""
    if output == "json":
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    elif output == "table":
        sys.stdout.write(_table(types))
    else:
        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False, width=120))


def run(args: argparse.Namespace) -> int:
    if args.provider == "azure":
        from worker.cli.azure_catalog import run_azure

        return run_azure(args)
    nodeclass = _load_nodeclass(args.nodeclass) if args.nodeclass else None
    vm_overhead, reserved_enis = karpenter_settings.catalog_values(args)
    settings = ProviderSettings(
        region=args.region,
        cluster=ClusterInfo(args.cluster_name, kubernetes_version=args.kubernetes_version),
        vm_memory_overhead_percent=vm_overhead,
        reserved_enis=reserved_enis,
    )
    clients = AWSClients.create(args.region, args.endpoint_url)
    provider = EC2Provider.create(settings, clients)
    try:
        if nodeclass is not None:
            resolved = provider.resolve_nodeclass(nodeclass)
            cond = resolved.not_ready_reason()
            if cond is not None:
                raise UsageError(
                    f"EC2NodeClass {nodeclass.name} not ready ({cond.reason}): {cond.message}"
                )
        # Prices first: a region without any is reported before the large type download.
        provider.pricing.refresh()
        on_demand, spot, _ = provider.pricing.snapshot()
        if not on_demand and not spot:
            raise UsageError(
                f"region {args.region}: no prices ({'; '.join(provider.pricing.problems)})"
            )
        for problem in provider.pricing.problems:
            print(f"joinery catalog: warning: {problem}", file=sys.stderr)
        provider.catalog.use_raw(fetch_raw_catalog(clients.ec2))
        types = provider.instance_types(nodeclass)
    except EC2Error as exc:
        raise UsageError(f"region {args.region}: {exc}") from None
    if not types:
        raise UsageError(
            f"region {args.region}: no instance type has a price "
            f"({'; '.join(provider.pricing.problems) or 'no offerings'})"
        )
    write(dump_catalog(types), types, args.output)
    return 0
