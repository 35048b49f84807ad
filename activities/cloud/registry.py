"""One provider per cluster, chosen by ``--provider`` (``JOINERY_PROVIDER``): built here.

Each cloud's package is imported only when chosen, so a worker on one cloud never loads the
other's SDK. This module's EC2 branch is one of the few places outside ``activities/ec2/``
allowed to name the EC2 provider (``scripts/layers.py`` checks it).
"""

from __future__ import annotations

from activities.cloud.options import AWS, AZURE, PROVIDERS, ProviderOptions
from activities.cloud.provider import CloudProvider


class UnknownProvider(ValueError):
    """``--provider`` names no cloud Joinery has."""


def build(opts: ProviderOptions) -> CloudProvider:
    """The provider ``opts.provider`` names, configured from ``opts``."""
    if opts.provider == AWS:
        from activities.ec2.provider import EC2Provider

        return EC2Provider.from_options(opts)
    if opts.provider == AZURE:
        from activities.azure.provider import AzureProvider

        return AzureProvider.from_options(opts)
    raise UnknownProvider(f"--provider {opts.provider!r}: one of {', '.join(PROVIDERS)}")
