"""Instance profiles for ``EC2NodeClass.spec.role``: created, tagged, kept right, collected.

As Karpenter does: a profile per NodeClass and role, named from the cluster and a hash of
region, NodeClass name and (for any role after the first) the role, so every worker and
every retry computes the same name, under the path ``/karpenter/<region>/<cluster>/<nodeclass>/``
so the cluster's profiles can be listed, with one role attached. A role change makes a new
profile rather than swapping the role inside the one running nodes use (they would lose
their credentials mid-swap); the old one is collected once no instance uses it. The role is
checked first: a role that does not exist makes ``InstanceProfileReady`` False with that
reason, and no profile is created for it. A NodeClass with ``spec.instanceProfile`` uses
that profile as given (it must exist). Profiles whose NodeClass is gone, or whose role the
NodeClass no longer names, are deleted by :meth:`InstanceProfiles.garbage_collect` when no
instance uses them.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from activities.ec2.errors import EC2Error, aws_errors, error_code
from activities.ec2.instances import TAG_NODECLASS, cluster_tag
from models.ec2nodeclass import EC2NodeClass

log = logging.getLogger(__name__)

TAG_MANAGED_BY = "karpenter.sh/managed-by"
TAG_REGION = "topology.kubernetes.io/region"
NOT_FOUND = "NoSuchEntity"
GC_GRACE = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class ProfileState:
    """What InstanceProfileReady reports: the profile's name, or why there is none."""

    name: str | None
    ready: bool
    reason: str = ""
    message: str = ""


def profile_name(cluster: str, region: str, nodeclass: str, role: str = "") -> str:
    """Stable and within IAM's 128 characters whatever the cluster name's length; a NodeClass's
    first profile has no role in its name (so existing profiles keep theirs), later ones do."""
    key = f"{region}/{nodeclass}" + (f"/{role}" if role else "")
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return f"{cluster[:100]}_{digest}"


def _roles(profile: dict[str, Any]) -> list[str]:
    return [str(r["RoleName"]) for r in profile.get("Roles", [])]


class InstanceProfiles:
    def __init__(
        self,
        iam: Any,
        cluster: str,
        region: str,
        ttl_seconds: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._iam = iam
        self._cluster = cluster
        self._region = region
        self._ttl = ttl_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._ready: dict[str, tuple[float, ProfileState]] = {}

    @property
    def path_prefix(self) -> str:
        return f"/karpenter/{self._region}/{self._cluster}/"

    def ensure(self, nodeclass: EC2NodeClass) -> ProfileState:
        """The profile to launch with, made to exist and hold the role (cached for a while).

        AWS throttling and outages raise (retryable); a missing role or profile is a state.
        """
        spec = nodeclass.spec
        key = f"{nodeclass.name}/{spec.role or ''}/{spec.instance_profile or ''}"
        with self._lock:
            hit = self._ready.get(key)
            if hit is not None and self._clock() - hit[0] < self._ttl:
                return hit[1]
        if spec.instance_profile:
            state = self._existing(spec.instance_profile)
        elif spec.role:
            state = self._for_role(nodeclass, spec.role)
        else:
            state = ProfileState(None, False, "NoRole", "neither role nor instanceProfile is set")
        if state.ready:
            with self._lock:
                self._ready[key] = (self._clock(), state)
        return state

    def check(self, nodeclass: EC2NodeClass) -> ProfileState:
        """Read-only: would :meth:`ensure` succeed? (``joinery doctor``; creates nothing.)"""
        spec = nodeclass.spec
        if spec.instance_profile:
            state = self._existing(spec.instance_profile)
            return replace(state, message=state.message or f"instance profile {state.name}")
        if not spec.role:
            return ProfileState(None, False, "NoRole", "neither role nor instanceProfile is set")
        role_name = spec.role.rsplit("/", 1)[-1]
        if not self._role_exists(role_name):
            return ProfileState(
                None, False, "RoleNotFound", f"role {role_name!r} does not exist in IAM"
            )
        name = self._name_for(nodeclass.name, role_name)
        return ProfileState(name, True, message=f"role {role_name} (instance profile {name})")

    def forget(self, nodeclass_name: str) -> None:
        with self._lock:
            for key in [k for k in self._ready if k.startswith(nodeclass_name + "/")]:
                del self._ready[key]

    # -- pre-made profile ----------------------------------------------------------------------
    def _existing(self, name: str) -> ProfileState:
        if self._get(name) is None:
            return ProfileState(
                None,
                False,
                "InstanceProfileNotFound",
                f"instanceProfile {name!r} does not exist in IAM",
            )
        return ProfileState(name, True)

    # -- managed profile -----------------------------------------------------------------------
    def _for_role(self, nodeclass: EC2NodeClass, role: str) -> ProfileState:
        role_name = role.rsplit("/", 1)[-1]  # a role given with its path: IAM wants the name
        if not self._role_exists(role_name):
            return ProfileState(
                None, False, "RoleNotFound", f"role {role_name!r} does not exist in IAM"
            )
        name = self._name_for(nodeclass.name, role_name)
        profile = self._get(name) or self._create(name, nodeclass)
        if role_name not in _roles(profile):
            self._call(
                "AddRoleToInstanceProfile",
                lambda: self._iam.add_role_to_instance_profile(
                    InstanceProfileName=name, RoleName=role_name
                ),
                # A retried call whose first attempt landed: the role is already there.
                ignore=("LimitExceeded",),
            )
        return ProfileState(name, True)

    def _name_for(self, nodeclass: str, role: str) -> str:
        """The NodeClass's profile that holds ``role``; else its first profile's name while that
        one holds no role; else a new name for this role (never a swap in a profile in use)."""
        first = profile_name(self._cluster, self._region, nodeclass)
        mine = self.list_managed(f"{self.path_prefix}{nodeclass}/")
        holding = sorted(p["InstanceProfileName"] for p in mine if role in _roles(p))
        if holding:
            return first if first in holding else holding[0]
        first_profile = next((p for p in mine if p["InstanceProfileName"] == first), None)
        if first_profile is None or not _roles(first_profile):
            return first
        return profile_name(self._cluster, self._region, nodeclass, role)

    def _create(self, name: str, nodeclass: EC2NodeClass) -> dict[str, Any]:
        tags = {
            **nodeclass.spec.tags,
            TAG_MANAGED_BY: self._cluster,
            cluster_tag(self._cluster): "owned",
            TAG_NODECLASS: nodeclass.name,
            TAG_REGION: self._region,
        }
        path = f"{self.path_prefix}{nodeclass.name}/"
        try:
            with aws_errors("CreateInstanceProfile"):
                resp = self._iam.create_instance_profile(
                    InstanceProfileName=name,
                    Path=path,
                    Tags=[{"Key": k, "Value": v} for k, v in sorted(tags.items())],
                )
        except EC2Error as exc:
            if exc.code != "EntityAlreadyExists":
                raise
            found = self._get(name)  # another worker, or our own retried call, made it
            if found is None:
                raise
            return found
        profile: dict[str, Any] = resp["InstanceProfile"]
        return profile

    def _get(self, name: str) -> dict[str, Any] | None:
        try:
            with aws_errors("GetInstanceProfile"):
                profile: dict[str, Any] = self._iam.get_instance_profile(InstanceProfileName=name)[
                    "InstanceProfile"
                ]
        except EC2Error as exc:
            if exc.code == NOT_FOUND:
                return None
            raise
        return profile

    def _role_exists(self, role: str) -> bool:
        try:
            with aws_errors("GetRole"):
                self._iam.get_role(RoleName=role)
        except EC2Error as exc:
            if exc.code == NOT_FOUND:
                return False
            raise
        return True

    def _remove_role(self, profile: str, role: str) -> None:
        self._call(
            "RemoveRoleFromInstanceProfile",
            lambda: self._iam.remove_role_from_instance_profile(
                InstanceProfileName=profile, RoleName=role
            ),
            ignore=(NOT_FOUND,),
        )

    def _call(self, operation: str, fn: Callable[[], Any], ignore: tuple[str, ...] = ()) -> None:
        try:
            fn()
        except Exception as exc:
            if error_code(exc) in ignore:
                return
            with aws_errors(operation):
                raise

    # -- garbage collection --------------------------------------------------------------------
    def list_managed(self, prefix: str = "") -> list[dict[str, Any]]:
        """The cluster's profiles (or those under ``prefix``, a path inside the cluster's)."""
        prefix = prefix or self.path_prefix
        out: list[dict[str, Any]] = []
        with aws_errors("ListInstanceProfiles"):
            pages = self._iam.get_paginator("list_instance_profiles").paginate(PathPrefix=prefix)
            for page in pages:
                out.extend(page.get("InstanceProfiles", []))
        # Filtered again here: deleting is irreversible, and an endpoint that ignored the
        # prefix (moto does) must never make us touch a profile outside our path.
        return [p for p in out if str(p.get("Path", "")).startswith(prefix)]

    def delete(self, name: str) -> None:
        """Detach the role and delete the profile; a profile already gone is done."""
        profile = self._get(name)
        if profile is None:
            return
        for role in profile.get("Roles", []):
            self._remove_role(name, role["RoleName"])
        self._call(
            "DeleteInstanceProfile",
            lambda: self._iam.delete_instance_profile(InstanceProfileName=name),
            ignore=(NOT_FOUND,),
        )

    def garbage_collect(
        self,
        live_nodeclasses: Iterable[str],
        now: datetime | None = None,
        roles: Mapping[str, str] | None = None,
        in_use: Iterable[str] = (),
    ) -> list[str]:
        """Delete this cluster's managed profiles whose NodeClass no longer exists, and, given
        ``roles`` (each live NodeClass's role), those holding a role their NodeClass no longer
        names, unless an instance uses them (``in_use``: profile names).

        A profile younger than ``GC_GRACE`` is kept: its NodeClass may have been created after
        the caller listed them.
        """
        live = set(live_nodeclasses)
        used = set(in_use)
        cutoff = (now or datetime.now(UTC)) - GC_GRACE
        deleted = []
        for profile in self.list_managed():
            name = profile["InstanceProfileName"]
            owner = profile["Path"].removeprefix(self.path_prefix).strip("/")
            created = profile.get("CreateDate")
            if isinstance(created, datetime) and created > cutoff:
                continue
            if owner in live:
                wanted = (roles or {}).get(owner, "").rsplit("/", 1)[-1]
                if not wanted or wanted in _roles(profile) or name in used:
                    continue
                why = f"its EC2NodeClass {owner} now names role {wanted}"
            else:
                why = f"EC2NodeClass {owner} is gone"
            self.delete(name)
            self.forget(owner)
            deleted.append(name)
            log.info("deleted instance profile %s (%s)", name, why)
        return deleted
