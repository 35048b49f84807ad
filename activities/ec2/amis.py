"""AMI resolution: aliases through the public SSM parameters, or ids / names / tags / SSM.

Each resolved AMI carries the requirements of the instance types it suits (architecture,
GPU or accelerator variant); a launch picks, per instance type, the first compatible AMI of
the list, which is ordered newest non-deprecated first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from activities.ec2.errors import NodeClassNotReady, aws_errors
from activities.ec2.families import FAMILIES
from activities.ec2.selectors import tag_filters
from activities.ec2.type_labels import ACCEL_COUNT, GPU_COUNT, KUBE_ARCH
from models import labels as L
from models.ec2nodeclass import AMISelectorTerm
from models.requirements import DOES_NOT_EXIST, EXISTS, IN, Requirement, Requirements

STANDARD, NVIDIA, NEURON = "standard", "nvidia", "neuron"
ARCHES = ("x86_64", "arm64")
SUPPORTED_ALIASES = ("al2023", "bottlerocket", "al2", "windows2019", "windows2022", "windows2025")


@dataclass(frozen=True, slots=True)
class ResolvedAMI:
    id: str
    name: str
    architecture: str
    creation_date: str
    deprecated: bool = False
    requirements: tuple[dict[str, object], ...] = field(default=())

    def requirement_set(self) -> Requirements:
        return Requirements.from_selector_terms(self.requirements)

    def to_status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name}
        out["requirements"] = list(self.requirements)
        if self.deprecated:
            out["deprecated"] = True
        return out


def variant_requirements(arch: str, variant: str) -> tuple[dict[str, object], ...]:
    """Standard images refuse GPU/accelerator types so the specialised image wins there."""
    reqs = [Requirement.create(L.ARCH, IN, [KUBE_ARCH.get(arch, arch)])]
    if variant.startswith("windows"):
        reqs.append(Requirement.create(L.OS, IN, ["windows"]))
        reqs.append(Requirement.create(L.WINDOWS_BUILD, IN, [WINDOWS_BUILDS[variant[7:]]]))
    elif variant == NVIDIA:
        reqs.append(Requirement.create(GPU_COUNT, EXISTS))
    elif variant == NEURON:
        reqs.append(Requirement.create(ACCEL_COUNT, EXISTS))
    else:
        reqs.append(Requirement.create(GPU_COUNT, DOES_NOT_EXIST))
        reqs.append(Requirement.create(ACCEL_COUNT, DOES_NOT_EXIST))
    return tuple(r.to_dict() for r in reqs)


# Windows Server release → the build label Karpenter puts on its nodes.
WINDOWS_BUILDS = {
    w.name.removeprefix("Windows"): w.windows_build for w in FAMILIES.values() if w.windows_build
}
# EKS publishes no AL2 AMIs from this Kubernetes version on.
AL2_LAST_MINOR = 32


def _minor(kubernetes_version: str) -> int:
    try:
        return int(kubernetes_version.split(".")[1])
    except (IndexError, ValueError):
        return 0


def alias_parameters(alias: str, kubernetes_version: str) -> dict[str, tuple[str, str]]:
    """SSM parameter name → (arch, variant) for an alias ``family@version``.

    The names are the public ones Karpenter reads for the cluster's Kubernetes version.
    Raises NodeClassNotReady for an alias no AMI can exist for (AL2 on 1.33+, a pinned
    Windows version).
    """
    family, _, version = alias.partition("@")
    k8s = kubernetes_version
    latest = version == "latest"
    out: dict[str, tuple[str, str]] = {}
    if family == "al2023":
        for arch in ARCHES:
            for variant in (STANDARD, NVIDIA, NEURON):
                leaf = (
                    "recommended"
                    if latest
                    else f"amazon-eks-node-al2023-{arch}-{variant}-{k8s}-{version}"
                )
                base = f"/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/{arch}/{variant}"
                out[f"{base}/{leaf}/image_id"] = (arch, variant)
    elif family == "bottlerocket":
        release = "latest" if latest else version.removeprefix("v")
        for arch in ARCHES:
            for flavor, variant in (
                (f"aws-k8s-{k8s}", STANDARD),
                (f"aws-k8s-{k8s}-nvidia", NVIDIA),
            ):
                out[f"/aws/service/bottlerocket/{flavor}/{arch}/{release}/image_id"] = (
                    arch,
                    variant,
                )
    elif family == "al2":
        if _minor(k8s) > AL2_LAST_MINOR:
            raise NodeClassNotReady(
                f"amiSelectorTerms alias {alias!r}: EKS publishes no AL2 AMIs for Kubernetes "
                f"{k8s}; use al2023@latest or bottlerocket@latest",
                "AMINotFound",
            )
        for path, name, arch, variant in (
            ("amazon-linux-2", "node", "x86_64", STANDARD),
            ("amazon-linux-2-arm64", "arm64-node", "arm64", STANDARD),
            ("amazon-linux-2-gpu", "gpu-node", "x86_64", NVIDIA),
        ):
            leaf = "recommended" if latest else f"amazon-eks-{name}-{k8s}-{version}"
            out[f"/aws/service/eks/optimized-ami/{k8s}/{path}/{leaf}/image_id"] = (arch, variant)
    elif family.startswith("windows") and family[7:] in WINDOWS_BUILDS:
        if not latest:
            raise NodeClassNotReady(
                f"amiSelectorTerms alias {alias!r}: Windows aliases take only @latest",
                "AMINotFound",
            )
        release = family[7:]
        name = f"Windows_Server-{release}-English-Core-EKS_Optimized-{k8s}"
        out[f"/aws/service/ami-windows-latest/{name}/image_id"] = ("x86_64", f"windows{release}")
    else:
        raise NodeClassNotReady(
            f"amiSelectorTerms alias {alias!r}: family {family!r} is not supported "
            f"(supported: {', '.join(SUPPORTED_ALIASES)})",
            "AMINotFound",
        )
    return out


def _is_deprecated(image: dict[str, Any], now: datetime) -> bool:
    raw = image.get("DeprecationTime")
    if not raw:
        return False
    when = (
        raw
        if isinstance(raw, datetime)
        else datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    )
    return when <= now


def _date(image: dict[str, Any]) -> str:
    raw = image.get("CreationDate", "")
    return raw.isoformat() if isinstance(raw, datetime) else str(raw)


def newest_per_requirements(amis: Iterable[ResolvedAMI]) -> list[ResolvedAMI]:
    """Non-deprecated before deprecated, newest first; one image per requirement set."""
    ordered = sorted(amis, key=lambda a: (a.deprecated, _neg(a.creation_date), a.id))
    seen: set[tuple[dict[str, object], ...] | str] = set()
    out = []
    for ami in ordered:
        key = repr(ami.requirements)
        if key in seen:
            continue
        seen.add(key)
        out.append(ami)
    return out


def _neg(date: str) -> tuple[int, ...]:
    """Sort key for descending ISO dates without parsing them."""
    return tuple(-ord(c) for c in date)


class AMIResolver:
    def __init__(self, ec2: Any, ssm: Any, kubernetes_version: Callable[[], str]) -> None:
        """``kubernetes_version`` is asked at every resolution: it follows cluster upgrades."""
        self._ec2 = ec2
        self._ssm = ssm
        self._k8s = kubernetes_version

    def resolve(self, terms: list[AMISelectorTerm]) -> list[ResolvedAMI]:
        """Raises NodeClassNotReady when the terms are unusable; may return an empty list."""
        now = datetime.now(UTC)
        found: list[ResolvedAMI] = []
        for term in terms:
            if term.alias:
                found.extend(self._from_alias(term.alias, now))
                continue
            if term.ssm_parameter:
                image_id = self._parameters([term.ssm_parameter]).get(term.ssm_parameter)
                images = self._describe(image_ids=[image_id]) if image_id else []
            elif term.id:
                images = self._describe(image_ids=[term.id])
            else:
                filters = tag_filters(term.tags)
                if term.name:
                    filters.append({"Name": "name", "Values": [term.name]})
                owners = [term.owner] if term.owner else (["self", "amazon"] if term.name else [])
                images = self._describe(filters=filters, owners=owners)
            for img in images:
                arch = str(img.get("Architecture", "x86_64"))
                found.append(
                    ResolvedAMI(
                        img["ImageId"],
                        str(img.get("Name", "")),
                        arch,
                        _date(img),
                        _is_deprecated(img, now),
                        tuple(
                            r.to_dict()
                            for r in [Requirement.create(L.ARCH, IN, [KUBE_ARCH.get(arch, arch)])]
                        ),
                    )
                )
        return newest_per_requirements(found)

    def _from_alias(self, alias: str, now: datetime) -> list[ResolvedAMI]:
        params = alias_parameters(alias, self._k8s())
        values = self._parameters(list(params))
        by_id = {
            img["ImageId"]: img for img in self._describe(image_ids=sorted(set(values.values())))
        }
        out = []
        for name, image_id in values.items():
            img = by_id.get(image_id)
            if img is None:
                continue
            arch, variant = params[name]
            out.append(
                ResolvedAMI(
                    image_id,
                    str(img.get("Name", "")),
                    arch,
                    _date(img),
                    _is_deprecated(img, now),
                    variant_requirements(arch, variant),
                )
            )
        return out

    def _parameters(self, names: list[str]) -> dict[str, str]:
        """Values of the parameters that exist (GetParameters takes ten names per call)."""
        out: dict[str, str] = {}
        for i in range(0, len(names), 10):
            with aws_errors("GetParameters"):
                resp = self._ssm.get_parameters(Names=names[i : i + 10])
            for p in resp.get("Parameters", []):
                out[p["Name"]] = p["Value"]
        return out

    def _describe(
        self,
        image_ids: list[str] | None = None,
        filters: list[dict[str, Any]] | None = None,
        owners: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {}
        if image_ids is not None:
            if not image_ids:
                return []
            kwargs["ImageIds"] = image_ids
        if filters:
            kwargs["Filters"] = filters
        if owners:
            kwargs["Owners"] = owners
        try:
            with aws_errors("DescribeImages"):
                images = list(self._ec2.describe_images(**kwargs).get("Images", []))
        except Exception as exc:
            # An unknown or malformed id is a selector that matches nothing, not a crash.
            if getattr(exc, "code", "").startswith("InvalidAMIID"):
                return []
            raise
        return [i for i in images if i.get("State", "available") == "available"]
