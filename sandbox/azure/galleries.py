"""AKS's public Community Image Galleries, emulated: the image versions a node class resolves.

Seeded with one version per definition Karpenter Azure boots from a community gallery (the
``sampleVersion`` of ``activities/azure/data/aks-node-images.json``, published on the date
its ``yyyymm.dd.build`` name gives); a test or scenario publishes a newer one with
:meth:`Galleries.publish` to roll nodes onto it (image drift). Versions are the same in every
location. Bodies have the REST field names and deserialize in the SDK's
``CommunityGalleryImageVersion``.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from sandbox.azure.arm_reads import NotFound

_BASE = (
    r"^/subscriptions/[^/]+/providers/Microsoft\.Compute/locations/(?P<loc>[^/]+)"
    r"/communityGalleries/(?P<gallery>[^/]+)/images/(?P<definition>[^/]+)/versions"
)
VERSIONS = re.compile(_BASE + r"$", re.I)
VERSION = re.compile(_BASE + r"/(?P<version>[^/]+)$", re.I)
_CIG_ID = re.compile(
    r"^/CommunityGalleries/(?P<gallery>[^/]+)/images/(?P<definition>[^/]+)"
    r"/versions/(?P<version>[^/]+)$",
    re.I,
)
_NEW_SCHEME = re.compile(r"^(?P<y>\d{4})(?P<m>\d{2})\.(?P<d>\d{2})\.\d+$")


def published_on(version: str) -> datetime:
    """The publish date a ``yyyymm.dd.build`` version name implies (2020-01-01 otherwise)."""
    m = _NEW_SCHEME.match(version)
    if m is None:
        return datetime(2020, 1, 1, tzinfo=UTC)
    return datetime(int(m["y"]), int(m["m"]), int(m["d"]), tzinfo=UTC)


def seed_versions() -> dict[tuple[str, str], dict[str, datetime]]:
    """(community gallery, definition) → {version: published} for every CIG definition."""
    text = resources.files("activities.azure").joinpath("data/aks-node-images.json").read_text()
    out: dict[tuple[str, str], dict[str, datetime]] = {}
    for image in json.loads(text)["images"]:
        version = image.get("sampleVersion")
        if "CIG" not in image["availableVia"] or not version:
            continue
        key = (image["communityGallery"].lower(), image["definition"].lower())
        out.setdefault(key, {})[version] = published_on(version)
    return out


@dataclass
class Galleries:
    """Published versions per (gallery, definition), keyed case-insensitively."""

    _versions: dict[tuple[str, str], dict[str, datetime]] = field(default_factory=seed_versions)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def publish(
        self, gallery: str, definition: str, version: str, published: datetime | None = None
    ) -> None:
        """Publish ``version`` (dated by its name unless ``published`` is given)."""
        with self._lock:
            key = (gallery.lower(), definition.lower())
            self._versions.setdefault(key, {})[version] = published or published_on(version)

    def withdraw(self, gallery: str, definition: str, version: str | None = None) -> None:
        """Remove one version, or (``version`` None) every version of the definition."""
        with self._lock:
            key = (gallery.lower(), definition.lower())
            if version is None:
                self._versions.pop(key, None)
            else:
                self._versions.get(key, {}).pop(version, None)

    def exists(self, image_id: str) -> bool:
        """Whether a VM's ``communityGalleryImageId`` names a published version (the VM
        emulator refuses others, as Azure answers ``GalleryImageNotFound``)."""
        m = _CIG_ID.match(image_id)
        if m is None:
            return False
        with self._lock:
            versions = self._versions.get((m["gallery"].lower(), m["definition"].lower()), {})
            return m["version"] in versions

    def reset(self) -> None:
        with self._lock:
            self._versions = seed_versions()

    def answer(self, path: str) -> dict[str, Any] | None:
        """The body for a community-gallery versions read, None when ``path`` is not one."""
        if m := VERSIONS.match(path):
            return {"value": self._list(m["loc"], m["gallery"], m["definition"])}
        if m := VERSION.match(path):
            for body in self._list(m["loc"], m["gallery"], m["definition"]):
                if body["name"] == m["version"]:
                    return body
            raise NotFound(
                "ResourceNotFound", f"Image version {m['version']} of {m['definition']} not found."
            )
        return None

    def _list(self, location: str, gallery: str, definition: str) -> list[dict[str, Any]]:
        with self._lock:
            versions = self._versions.get((gallery.lower(), definition.lower()))
            if versions is None:
                raise NotFound(
                    "GalleryImageNotFound",
                    f"The gallery image {definition} is not found in gallery {gallery}.",
                )
            items = sorted(versions.items(), key=lambda kv: kv[1])
        return [_body(location, gallery, definition, name, when) for name, when in items]


def _body(
    location: str, gallery: str, definition: str, version: str, published: datetime
) -> dict[str, Any]:
    return {
        "name": version,
        "location": location,
        "type": "Microsoft.Compute/Locations/CommunityGalleryImageVersion",
        "identifier": {
            "uniqueId": (f"/CommunityGalleries/{gallery}/Images/{definition}/Versions/{version}")
        },
        "properties": {
            "publishedDate": published.strftime("%Y-%m-%dT%H:%M:%S.0000000+00:00"),
            "excludeFromLatest": False,
            "storageProfile": {"osDiskImage": {"diskSizeGB": 30, "hostCaching": "ReadOnly"}},
        },
    }
