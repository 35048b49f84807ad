"""Launch input and output: the neutral types (``activities.cloud.launch``), and the AWS
provider-id helpers the launcher builds results with."""

from __future__ import annotations

from activities.cloud.launch import LaunchRequest, LaunchResult
from models.provider_id import parse_provider_id, provider_id

__all__ = ["LaunchRequest", "LaunchResult", "parse_provider_id", "provider_id"]
