"""An EC2-shaped catalog built offline from the public on-demand price table.

vCPUs come from the size name (medium 1, large 2, xlarge 4, Nxlarge 4N), memory per vCPU
from the family's category (c 2 GiB, m 4 GiB, r 8 GiB, x 16 GiB, others 4 GiB), arm64 for
Graviton families, 3 zones, on-demand at the table's price and spot at a seeded 30-70%.
It has the shape of a real region (hundreds of types, uneven prices) without an AWS call.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from models.instancetype import InstanceType, Offering
from models.quantity import parse_quantity
from models.requirements import Requirement

PRICES = (
    Path(__file__).resolve().parent.parent
    / "activities"
    / "ec2"
    / "data"
    / "ec2-on-demand-prices.json"
)
SHARED_PRICES = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "ec2-on-demand-prices.json"
)
_SIZE = re.compile(r"^(\d*)xlarge$")
_MEM_PER_CPU = {"c": 2, "m": 4, "r": 8, "x": 16, "z": 8}


def _vcpus(size: str) -> int | None:
    if size == "medium":
        return 1
    if size == "large":
        return 2
    m = _SIZE.match(size)
    if m:
        return 4 * int(m.group(1) or 1)
    return None


def ec2_like_catalog(region: str = "us-east-1", seed: int = 7) -> list[InstanceType]:
    path = PRICES if PRICES.exists() else SHARED_PRICES
    table = json.loads(path.read_text())["regions"][region]["on_demand_usd_per_hour"]
    rng = random.Random(seed)
    zones = [f"{region}{z}" for z in "abc"]
    out = []
    for name in sorted(table):
        family, _, size = name.partition(".")
        cpus = _vcpus(size)
        if cpus is None or family[0] not in "cmrxz" or family.startswith("mac"):
            continue
        arm = (len(family) > 2 and family[2] == "g") or family.endswith("g")
        mem_gib = cpus * _MEM_PER_CPU.get(family[0], 4)
        pods = 110 if cpus >= 16 else min(110, cpus * 15)
        overhead_cpu = 60 + 10 * min(cpus, 4) + cpus
        overhead_mem = 255 + 11 * pods + 100
        od = float(table[name])
        offerings = [Offering(z, "on-demand", od) for z in zones]
        offerings += [Offering(z, "spot", round(od * rng.uniform(0.3, 0.7), 5)) for z in zones]
        out.append(
            InstanceType.build(
                name,
                {
                    "cpu": parse_quantity(cpus),
                    "memory": parse_quantity(f"{mem_gib}Gi"),
                    "pods": parse_quantity(pods),
                },
                offerings,
                {
                    "cpu": parse_quantity(f"{overhead_cpu}m"),
                    "memory": parse_quantity(f"{overhead_mem}Mi"),
                },
                [
                    Requirement.create("kubernetes.io/arch", "In", ["arm64" if arm else "amd64"]),
                    Requirement.create("karpenter.k8s.aws/instance-family", "In", [family]),
                    Requirement.create("karpenter.k8s.aws/instance-category", "In", [family[0]]),
                    Requirement.create("karpenter.k8s.aws/instance-cpu", "In", [str(cpus)]),
                ],
            )
        )
    return out
