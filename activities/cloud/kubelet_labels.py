"""Which labels a kubelet may put on its own Node, whatever the cloud.

The NodeRestriction admission plugin refuses a kubelet's labels in the ``kubernetes.io`` and
``k8s.io`` domains, but for a few sub-domains and well-known keys; a node told to register
with one would not register. Each provider's bootstrap (EC2 user data, Azure custom data)
leaves such labels out of what it tells the kubelet.
"""

from __future__ import annotations

_RESTRICTED_DOMAINS = ("kubernetes.io", "k8s.io")
_ALLOWED_SUBDOMAINS = ("kubelet.kubernetes.io", "node.kubernetes.io")
_ALLOWED_KEYS = frozenset(
    {
        "kubernetes.io/hostname",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "topology.kubernetes.io/region",
        "topology.kubernetes.io/zone",
        "beta.kubernetes.io/instance-type",
        "beta.kubernetes.io/arch",
        "beta.kubernetes.io/os",
        "failure-domain.beta.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
    }
)


def _within(domain: str, domains: tuple[str, ...]) -> bool:
    return any(domain == d or domain.endswith("." + d) for d in domains)


def kubelet_may_set(key: str) -> bool:
    """Whether the kubelet may register its node with this label (NodeRestriction)."""
    if key in _ALLOWED_KEYS or "/" not in key:
        return True
    domain = key.split("/", 1)[0]
    return _within(domain, _ALLOWED_SUBDOMAINS) or not _within(domain, _RESTRICTED_DOMAINS)
