"""AWS provider ids (``aws:///<zone>/<instance id>``): built and parsed here only."""

from __future__ import annotations

PREFIX = "aws:///"


def provider_id(zone: str, instance_id: str) -> str:
    return f"{PREFIX}{zone}/{instance_id}"


def parse_provider_id(value: str) -> tuple[str, str]:
    """``aws:///us-east-1a/i-0123`` → (zone, instance id); raises ValueError otherwise."""
    if not value.startswith(PREFIX) or value.count("/") != 4:
        raise ValueError(f"not an AWS provider id: {value!r}")
    zone, instance = value[len(PREFIX) :].split("/")
    if not zone or not instance.startswith("i-"):
        raise ValueError(f"not an AWS provider id: {value!r}")
    return zone, instance


def instance_id(value: str) -> str:
    """The instance id of a provider id, or "" when it is not an AWS provider id."""
    try:
        return parse_provider_id(value)[1]
    except ValueError:
        return ""
