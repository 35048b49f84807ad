"""The insufficient-capacity cache, shared by every cloud:
``activities.cloud.unavailable_offerings`` (kept importable here for the EC2 modules)."""

from activities.cloud.unavailable_offerings import ANY, SharedRecord, UnavailableOfferings

__all__ = ["ANY", "SharedRecord", "UnavailableOfferings"]
