"""A token credential for the emulator: the SDK's pipeline asks it for a bearer token and
gets a fixed one (the emulator checks only that one is sent)."""

from __future__ import annotations

import time
from typing import Any

from azure.core.credentials import AccessToken

FAKE_TOKEN = "joinery-emulator-token"


class FakeCredential:
    """Satisfies ``azure.core.credentials.TokenCredential``."""

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken(FAKE_TOKEN, int(time.time()) + 3600)
