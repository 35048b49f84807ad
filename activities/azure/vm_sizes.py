"""What a VM size's name says (family, series, version, accelerator) and the provider's
lists of sizes (GPU sizes and their drivers, restricted sizes, sizes it has seen priced).

Azure encodes a size's shape in its name (``D16plds_v5``: family D, 16 vCPUs, features
``plds``, version 5); Karpenter Azure's well-known labels are read from that name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

# family, sub-family (up to two letters), vCPUs, constrained vCPUs, additive features,
# accelerator, confidential child, ..., version, promo.
_SIZE = re.compile(
    r"^([A-Z])([A-Z]?)([A-Z]?)([0-9]+)-?((?:[0-9]+)?)((?:[abcdeilmtspPr]+|C+|NP)?)_?"
    r"(?:([A-Z][0-9]+)_?)?(_cc_)?(_[0-9]+_)?(_MI300X_)?(_H100_)?((?:[vV][1-9])?)?(_Promo)?$"
)


@dataclass(frozen=True, slots=True)
class VMSize:
    family: str
    subfamily: str
    cpus: str
    cpus_constrained: str | None
    features: str
    accelerator: str | None
    version: str  # "v5", or "" when the name has none

    @property
    def series(self) -> str:
        """``Dplds_v5``: the family, sub-family, features and version, without the size."""
        version = f"_{self.version}" if self.version else ""
        return f"{self.family}{self.subfamily}{self.features}{version}"

    @property
    def version_label(self) -> str:
        """The number without its ``v``; ``1`` for a name without a version."""
        if not self.version:
            return "1"
        return self.version[1:] if self.version[0] in "vV" else ""


# Names the pattern cannot read, spelled out once.
_IRREGULAR = {"M416s_8_v2": VMSize("M", "", "416", None, "s", None, "v2")}


def parse_vm_size(size: str) -> VMSize | None:
    """The parts of a size name (the SKU's ``size``, without ``Standard_``), None if unreadable."""
    m = _SIZE.match(size)
    if m is None:
        return _IRREGULAR.get(size)
    return VMSize(
        family=m.group(1),
        subfamily=m.group(2) + m.group(3),
        cpus=m.group(4),
        cpus_constrained=m.group(5) or None,
        features=m.group(6),
        accelerator=m.group(7) or None,
        version=m.group(12) or "",
    )


@cache
def _table() -> dict[str, Any]:
    text = resources.files("activities.azure").joinpath("data/azure-vm-sizes.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def _normal(name: str) -> str:
    return name.lower().removesuffix("_promo")


def gpu_maker(name: str) -> str | None:
    """``nvidia`` or ``amd`` for a size AKS supports as a GPU node, else None."""
    info = _table()["gpuSizes"].get(_normal(name))
    return str(info["gpu"]) if info else None


def gpu_supported_on(name: str, os_name: str) -> bool:
    """Whether AKS ships this GPU's driver in the node image of ``os_name``."""
    info = _table()["gpuSizes"].get(_normal(name))
    return bool(info) and os_name in info["os"]


def is_restricted(name: str) -> bool:
    """Sizes AKS or Karpenter refuse to use as nodes."""
    table = _table()
    return name in table["aksRestrictedVMSizes"] or name in table["karpenterRestrictedVMSizes"]


def is_known(name: str) -> bool:
    """Sizes Karpenter Azure has seen; others get the missing price, so they are picked last."""
    return name in _known()


@cache
def _known() -> frozenset[str]:
    return frozenset(_table()["knownSizes"])
