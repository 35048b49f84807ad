"""IAM authorization as AWS evaluates it, for the calls Joinery makes: what moto leaves out.

moto can authorize requests against a user's attached policies (``INITIAL_NO_AUTH_ACTION_COUNT``
/ :func:`moto.core.enable_iam_authentication`), but for EC2, SSM and EKS it authorizes every
call against the resource ``*`` and it never evaluates an identity policy's ``Condition``
(it passes no request context, so every condition holds). Under moto a tag-conditioned,
ARN-scoped policy such as Joinery's (activities/ec2/permissions.py) is therefore both too
strict (an ``instance/*`` statement never matches ``*``) and too lenient (a condition on the
cluster tag never fails). Emulated here, explicitly:

* each request is turned into the authorizations AWS checks for it: CreateFleet checks
  ``ec2:CreateFleet`` and ``ec2:RunInstances`` on the fleet, instances, volumes, network
  interfaces, spot requests, launch template, subnets, security groups and image, plus
  ``ec2:CreateTags`` with ``ec2:CreateAction`` for every resource it tags, and
  ``iam:PassRole`` (``iam:PassedToService``) for the template's instance profile's role;
  RunInstances (with a launch template: not modelled, Joinery never calls it),
  CreateLaunchTemplate, CreateTags, TerminateInstances, DeleteLaunchTemplate, the instance
  profile calls (CreateInstanceProfile also needs ``iam:TagInstanceProfile``,
  AddRoleToInstanceProfile ``iam:PassRole``), GetRole, SSM GetParameters, EKS
  DescribeCluster and the SQS calls each on its resource ARN; other calls on ``*``;
* each authorization carries the context keys AWS gives it: ``aws:RequestedRegion``,
  ``aws:RequestTag/<key>`` and ``aws:TagKeys`` from the request's tags,
  ``aws:ResourceTag/<key>`` from the resource's tags as moto holds them, ``ec2:CreateAction``
  and ``iam:PassedToService``;
* each is evaluated against the caller's policies as IAM does (an explicit Deny wins, else
  some Allow must match action, resource and every condition) with the operators
  ``String(Not)Equals``, ``String(Not)Like``, ``StringEqualsIgnoreCase``, ``Arn(Not)Like``,
  ``Arn(Not)Equals``, ``Bool`` and ``Null``, their ``IfExists`` forms and the
  ``ForAllValues:`` / ``ForAnyValue:`` qualifiers; a policy using any other operator is
  refused loudly, never silently allowed;
* moto's signature check is kept, except for EKS, whose REST-JSON signatures moto
  recomputes wrongly (the access key is still checked);
* a denied EC2 call answers ``UnauthorizedOperation`` (HTTP 403, EC2's error shape), a denied
  call of another service ``AccessDenied``, as AWS does.

SQS calls are authorized against the queue's ARN (moto does so only when the request names
a QueueUrl). Not emulated: permission boundaries, SCPs, session policies and resource-based
policies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from moto.core.exceptions import AccessDeniedError
from moto.ec2.models import ec2_backends
from moto.iam.access_control import IAMPolicy, IAMRequestBase
from moto.iam.models import iam_backends
from moto.utilities.utils import get_partition

_PASS_ROLE_SERVICE = "ec2.amazonaws.com"


@dataclass(frozen=True)
class Authorization:
    """One (action, resource) pair AWS checks for a request, with its context keys
    (lower-cased, each a list of values)."""

    action: str
    resource: str
    context: Mapping[str, list[str]] = field(default_factory=dict)


class UnauthorizedOperation(AccessDeniedError):
    """EC2's denial: code ``UnauthorizedOperation`` in EC2's own error document."""

    def __init__(self, user: str, action: str, resource: str) -> None:
        super().__init__(user, action)
        self.error_type = "UnauthorizedOperation"
        self.message = f"{user} is not authorized to perform: {action} on resource: {resource}"
        body = (
            '<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error>'
            f"<Code>UnauthorizedOperation</Code><Message>{self.message}</Message>"
            "</Error></Errors><RequestID>emulated</RequestID></Response>"
        )
        self.description = body


# -- policy evaluation -------------------------------------------------------------------------


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _glob(pattern: str, value: str, case: bool = True) -> bool:
    """IAM's wildcards: ``*`` any run, ``?`` one character; nothing else is special."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in str(pattern))
    return re.fullmatch(regex, value, 0 if case else re.IGNORECASE) is not None


_POSITIVE = {
    "StringEquals": lambda p, v: p == v,
    "StringEqualsIgnoreCase": lambda p, v: p.lower() == v.lower(),
    "StringLike": _glob,
    "ArnEquals": lambda p, v: p == v,
    "ArnLike": _glob,
    "Bool": lambda p, v: str(p).lower() == v.lower(),
}
_NEGATED = {
    "StringNotEquals": "StringEquals",
    "StringNotLike": "StringLike",
    "ArnNotEquals": "ArnEquals",
    "ArnNotLike": "ArnLike",
}


def _condition_holds(
    operator: str, key: str, expected: Any, context: Mapping[str, list[str]]
) -> bool:
    qualifier, _, name = operator.rpartition(":")
    if_exists = name.endswith("IfExists")
    name = name.removesuffix("IfExists")
    present = context.get(key.lower())
    wanted = [str(v) for v in _as_list(expected)]
    if name == "Null":  # "true": the key is absent; "false": it is present
        return (present is None) == (wanted[0].lower() == "true")
    negated = name in _NEGATED
    base = _NEGATED.get(name, name)
    if base not in _POSITIVE or qualifier not in ("", "ForAllValues", "ForAnyValue"):
        raise ValueError(f"condition operator {operator!r} is not emulated")
    match = _POSITIVE[base]

    def hits(value: str) -> bool:
        found = any(match(p, value) for p in wanted)
        return not found if negated else found

    if qualifier == "ForAllValues":
        return all(hits(v) for v in present or [])
    if qualifier == "ForAnyValue":
        return any(hits(v) for v in present or [])
    if present is None:
        return if_exists or negated
    return any(hits(v) for v in present) if not negated else all(hits(v) for v in present)


def _statement_applies(statement: Mapping[str, Any], auth: Authorization) -> bool:
    if "Action" in statement:
        if not any(_glob(a, auth.action, case=False) for a in _as_list(statement["Action"])):
            return False
    elif any(_glob(a, auth.action, case=False) for a in _as_list(statement["NotAction"])):
        return False
    if "Resource" in statement:
        if not any(_glob(r, auth.resource) for r in _as_list(statement["Resource"])):
            return False
    elif any(_glob(r, auth.resource) for r in _as_list(statement.get("NotResource", []))):
        return False
    for operator, keys in statement.get("Condition", {}).items():
        for key, expected in keys.items():
            if not _condition_holds(operator, key, expected, auth.context):
                return False
    return True


def allowed(documents: list[Mapping[str, Any]], auth: Authorization) -> bool:
    """IAM's decision for one authorization: an explicit Deny wins, else an Allow must match."""
    allow = False
    for document in documents:
        for statement in _as_list(document["Statement"]):
            if not _statement_applies(statement, auth):
                continue
            if statement["Effect"] == "Deny":
                return False
            allow = True
    return allow


# -- requests to authorizations ----------------------------------------------------------------


def _indexed(params: Mapping[str, Any], prefix: str) -> list[dict[str, str]]:
    """``Prefix.N.Field…`` query parameters as a list of {Field…: value} by N."""
    out: dict[int, dict[str, str]] = {}
    pattern = re.compile(re.escape(prefix) + r"\.(\d+)(?:\.(.+))?$")
    for key, value in params.items():
        m = pattern.match(key)
        if m:
            out.setdefault(int(m.group(1)), {})[m.group(2) or ""] = _as_list(value)[0]
    return [out[i] for i in sorted(out)]


def _tags_of(entry: Mapping[str, str], prefix: str) -> dict[str, str]:
    """``{prefix}N.Key`` / ``{prefix}N.Value`` pairs as a dict."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)\.Key$")
    return {
        v: entry.get(f"{prefix}{m.group(1)}.Value", "")
        for k, v in entry.items()
        if (m := pattern.match(k))
    }


def _request_context(tags: Mapping[str, str]) -> dict[str, list[str]]:
    ctx = {f"aws:requesttag/{k}".lower(): [v] for k, v in tags.items()}
    if tags:
        ctx["aws:tagkeys"] = list(tags)
    return ctx


def _resource_context(tags: Mapping[str, str]) -> dict[str, list[str]]:
    return {f"aws:resourcetag/{k}".lower(): [v] for k, v in tags.items()}


@dataclass
class _Request:
    """What one moto request is, read from its parameters and moto's state."""

    service: str
    action: str
    region: str
    account: str
    params: Mapping[str, Any]
    body: bytes
    path: str
    moto_resource: str

    @property
    def partition(self) -> str:
        return get_partition(self.region)

    def ec2_arn(self, kind: str, rid: str) -> str:
        return f"arn:{self.partition}:ec2:{self.region}:{self.account}:{kind}/{rid}"

    def param(self, name: str) -> str | None:
        value = self.params.get(name)
        return None if value is None else str(_as_list(value)[0])

    def _ec2(self) -> Any:
        return ec2_backends[self.account][self.region]

    def _iam(self) -> Any:
        return iam_backends[self.account][self.partition]

    def ec2_tags(self, rid: str) -> dict[str, str]:
        return dict(self._ec2().tags.get(rid, {}))

    def authorizations(self) -> list[Authorization]:
        handler = getattr(self, f"_{self.service}_{self.action}", None)
        auths = (
            handler()
            if handler
            else [Authorization(f"{self.service}:{self.action}", self._default())]
        )
        region = {"aws:requestedregion": [self.region]}
        return [Authorization(a.action, a.resource, {**region, **a.context}) for a in auths]

    def _default(self) -> str:
        return self._queue_arn() if self.service == "sqs" else "*"

    def _queue_arn(self) -> str:
        """SQS authorizes against the queue's ARN, named by QueueName or QueueUrl (moto finds
        it only from a QueueUrl, so its GetQueueUrl is authorized against ``*``)."""
        try:
            fields = json.loads(self.body or b"{}")
        except ValueError:
            fields = {}
        name = fields.get("QueueName") or self.param("QueueName")
        url = fields.get("QueueUrl") or self.param("QueueUrl")
        if not name and url:
            name = str(url).rstrip("/").rsplit("/", 1)[-1]
        if not name:
            return self.moto_resource
        return f"arn:{self.partition}:sqs:{self.region}:{self.account}:{name}"

    # EC2 ---------------------------------------------------------------------------------
    def _template(self, spec: Mapping[str, str], prefix: str) -> Any:
        backend = self._ec2()
        tid, name = spec.get(f"{prefix}LaunchTemplateId"), spec.get(f"{prefix}LaunchTemplateName")
        try:
            return (
                backend.get_launch_template(tid)
                if tid
                else backend.get_launch_template_by_name(name)
            )
        except Exception:
            return None

    def _ec2_CreateFleet(self) -> list[Authorization]:
        configs = _indexed(self.params, "LaunchTemplateConfigs")
        specs = {
            s.get("ResourceType", ""): _tags_of(s, "Tag.")
            for s in _indexed(self.params, "TagSpecification")
        }
        spot = self.param("TargetCapacitySpecification.DefaultTargetCapacityType") == "spot"
        used: list[tuple[str, dict[str, list[str]]]] = []
        roles: set[str] = set()
        for config in configs:
            template = self._template(config, "LaunchTemplateSpecification.")
            if template is None:
                continue
            used.append(
                (
                    self.ec2_arn("launch-template", template.id),
                    _resource_context(self.ec2_tags(template.id)),
                )
            )
            data = template.latest_version().data
            if data.get("ImageId"):
                used.append(
                    (f"arn:{self.partition}:ec2:{self.region}::image/{data['ImageId']}", {})
                )
            for group in data.get("SecurityGroupIds", []):
                used.append((self.ec2_arn("security-group", group), {}))
            profile = data.get("IamInstanceProfile") or {}
            roles |= self._profile_roles(
                profile.get("Name") or profile.get("Arn", "").rsplit("/", 1)[-1]
            )
            overrides = {
                k.split(".", 1)[1]: v for k, v in config.items() if k.startswith("Overrides.")
            }
            for key, value in overrides.items():
                if key.endswith(".SubnetId"):
                    used.append((self.ec2_arn("subnet", value), {}))
                elif key.endswith(".ImageId"):
                    used.append((f"arn:{self.partition}:ec2:{self.region}::image/{value}", {}))
        created = ["fleet", "instance", "volume", "network-interface"] + (
            ["spot-instances-request"] if spot else []
        )
        auths = []
        for kind in created:
            tags = specs.get(kind, {})
            arn = self.ec2_arn(kind, "new")
            ctx = _request_context(tags)
            actions = (
                ["ec2:CreateFleet"] if kind == "fleet" else ["ec2:CreateFleet", "ec2:RunInstances"]
            )
            auths += [Authorization(a, arn, ctx) for a in actions]
            if tags:
                auths.append(
                    Authorization(
                        "ec2:CreateTags", arn, {**ctx, "ec2:createaction": ["CreateFleet"]}
                    )
                )
        for arn, ctx in used:
            auths += [Authorization(a, arn, ctx) for a in ("ec2:CreateFleet", "ec2:RunInstances")]
        auths += [self._pass_role(role) for role in sorted(roles)]
        return auths

    def _ec2_RunInstances(self) -> list[Authorization]:
        specs = {
            s.get("ResourceType", ""): _tags_of(s, "Tag.")
            for s in _indexed(self.params, "TagSpecification")
        }
        auths = []
        for kind in ("instance", "volume", "network-interface"):
            ctx = _request_context(specs.get(kind, {}))
            arn = self.ec2_arn(kind, "new")
            auths.append(Authorization("ec2:RunInstances", arn, ctx))
            if specs.get(kind):
                create = {**ctx, "ec2:createaction": ["RunInstances"]}
                auths.append(Authorization("ec2:CreateTags", arn, create))
        image = self.param("ImageId")
        if image:
            arn = f"arn:{self.partition}:ec2:{self.region}::image/{image}"
            auths.append(Authorization("ec2:RunInstances", arn))
        return auths

    def _ec2_CreateLaunchTemplate(self) -> list[Authorization]:
        specs = {
            s.get("ResourceType", ""): _tags_of(s, "Tag.")
            for s in _indexed(self.params, "TagSpecification")
        }
        tags = specs.get("launch-template", {})
        arn, ctx = self.ec2_arn("launch-template", "new"), _request_context(tags)
        auths = [Authorization("ec2:CreateLaunchTemplate", arn, ctx)]
        if tags:
            auths.append(
                Authorization(
                    "ec2:CreateTags", arn, {**ctx, "ec2:createaction": ["CreateLaunchTemplate"]}
                )
            )
        return auths

    _KINDS = {
        "i-": "instance",
        "lt-": "launch-template",
        "vol-": "volume",
        "fleet-": "fleet",
        "eni-": "network-interface",
    }

    def _ec2_CreateTags(self) -> list[Authorization]:
        tags = _tags_of({k: str(_as_list(v)[0]) for k, v in self.params.items()}, "Tag.")
        auths = []
        for entry in _indexed(self.params, "ResourceId"):
            rid = entry[""]
            kind = next((k for p, k in self._KINDS.items() if rid.startswith(p)), "resource")
            ctx = {**_request_context(tags), **_resource_context(self.ec2_tags(rid))}
            auths.append(Authorization("ec2:CreateTags", self.ec2_arn(kind, rid), ctx))
        return auths

    def _ec2_TerminateInstances(self) -> list[Authorization]:
        return [
            Authorization(
                "ec2:TerminateInstances",
                self.ec2_arn("instance", e[""]),
                _resource_context(self.ec2_tags(e[""])),
            )
            for e in _indexed(self.params, "InstanceId")
        ]

    def _ec2_DeleteLaunchTemplate(self) -> list[Authorization]:
        template = self._template({k: str(_as_list(v)[0]) for k, v in self.params.items()}, "")
        rid = template.id if template else (self.param("LaunchTemplateId") or "unknown")
        return [
            Authorization(
                "ec2:DeleteLaunchTemplate",
                self.ec2_arn("launch-template", rid),
                _resource_context(self.ec2_tags(rid)),
            )
        ]

    # IAM ---------------------------------------------------------------------------------
    def _profile(self, name: str) -> Any:
        try:
            return self._iam().get_instance_profile(name)
        except Exception:
            return None

    def _profile_roles(self, name: str) -> set[str]:
        profile = self._profile(name) if name else None
        return {r.name for r in profile.roles} if profile else set()

    def _profile_auth(self, action: str, name: str | None = None) -> Authorization:
        name = name or self.param("InstanceProfileName") or ""
        profile = self._profile(name)
        if profile is None:
            arn = f"arn:{self.partition}:iam::{self.account}:instance-profile/{name}"
            return Authorization(action, arn)
        tags = {t["Key"]: t["Value"] for t in profile.tags}
        return Authorization(action, profile.arn, _resource_context(tags))

    def _pass_role(self, role: str) -> Authorization:
        return Authorization(
            "iam:PassRole", self._role_arn(role), {"iam:passedtoservice": [_PASS_ROLE_SERVICE]}
        )

    def _role_arn(self, role: str) -> str:
        try:
            arn: str = self._iam().get_role(role).arn
        except Exception:
            arn = f"arn:{self.partition}:iam::{self.account}:role/{role}"
        return arn

    def _iam_CreateInstanceProfile(self) -> list[Authorization]:
        entry = {k: str(_as_list(v)[0]) for k, v in self.params.items()}
        tags = _tags_of(entry, "Tags.member.")
        path = self.param("Path") or "/"
        name = self.param("InstanceProfileName")
        arn = f"arn:{self.partition}:iam::{self.account}:instance-profile{path}{name}"
        ctx = _request_context(tags)
        auths = [Authorization("iam:CreateInstanceProfile", arn, ctx)]
        if tags:  # the new profile holds the tags it is created with
            auths.append(
                Authorization("iam:TagInstanceProfile", arn, {**ctx, **_resource_context(tags)})
            )
        return auths

    def _iam_AddRoleToInstanceProfile(self) -> list[Authorization]:
        role = self.param("RoleName") or ""
        return [self._profile_auth("iam:AddRoleToInstanceProfile"), self._pass_role(role)]

    def _iam_RemoveRoleFromInstanceProfile(self) -> list[Authorization]:
        return [self._profile_auth("iam:RemoveRoleFromInstanceProfile")]

    def _iam_DeleteInstanceProfile(self) -> list[Authorization]:
        return [self._profile_auth("iam:DeleteInstanceProfile")]

    def _iam_GetInstanceProfile(self) -> list[Authorization]:
        return [self._profile_auth("iam:GetInstanceProfile")]

    def _iam_TagInstanceProfile(self) -> list[Authorization]:
        entry = {k: str(_as_list(v)[0]) for k, v in self.params.items()}
        auth = self._profile_auth("iam:TagInstanceProfile")
        ctx = {**auth.context, **_request_context(_tags_of(entry, "Tags.member."))}
        return [Authorization(auth.action, auth.resource, ctx)]

    def _iam_GetRole(self) -> list[Authorization]:
        return [Authorization("iam:GetRole", self._role_arn(self.param("RoleName") or ""))]

    # SSM and EKS -------------------------------------------------------------------------
    def _ssm_GetParameters(self) -> list[Authorization]:
        names = json.loads(self.body or b"{}").get("Names", [])
        auths = []
        for name in names:
            path = name if name.startswith("/") else f"/{name}"
            owner = "" if path.startswith("/aws/service/") else self.account
            arn = f"arn:{self.partition}:ssm:{self.region}:{owner}:parameter{path}"
            auths.append(Authorization("ssm:GetParameters", arn))
        return auths

    def _eks_DescribeCluster(self) -> list[Authorization]:
        name = self.path.rstrip("/").rsplit("/", 1)[-1]
        arn = f"arn:{self.partition}:eks:{self.region}:{self.account}:cluster/{name}"
        return [Authorization("eks:DescribeCluster", arn)]


# -- the hook ------------------------------------------------------------------------------------


def _check_action_permitted(self: IAMRequestBase, resource: str) -> None:
    service, _, action = self._action.partition(":")
    if self._action == "sts:GetCallerIdentity":
        return
    request = _Request(
        service=service,
        action=action,
        region=self._region,
        account=self.account_id,
        params=self._data or {},
        body=self._body if isinstance(self._body, bytes) else str(self._body or "").encode(),
        path=self._path,
        moto_resource=resource,
    )
    documents = [IAMPolicy(p)._policy_json for p in self._access_key.collect_policies()]
    for auth in request.authorizations():
        if not allowed(documents, auth):
            if service == "ec2":
                raise UnauthorizedOperation(self._access_key.arn, auth.action, auth.resource)
            self._action = auth.action  # the denial names the action that was refused
            self._raise_access_denied()


# moto recomputes SigV4 signatures of REST-JSON requests over another path than the client
# signed, so it refuses every correctly signed EKS call; their signature is not checked here
# (the access key still is: an unknown key is refused when the request is read).
_UNSIGNED_SERVICES = frozenset({"eks"})


def _check_signature(self: IAMRequestBase) -> None:
    if self._service in _UNSIGNED_SERVICES:
        return
    _MOTO_CHECK_SIGNATURE(self)


_MOTO_CHECK_SIGNATURE = IAMRequestBase.check_signature


@contextmanager
def enforced() -> Iterator[None]:
    """IAM enforcement on, as AWS evaluates it for Joinery's calls, for the block's length.

    Every request must then be signed by an IAM user's access key (moto's default account)
    and is allowed only by that user's policies; on exit, moto's own (disabled) authorization
    is back."""
    from moto.core.authorization import enable_iam_authentication

    original = IAMRequestBase.check_action_permitted
    IAMRequestBase.check_action_permitted = _check_action_permitted  # type: ignore[method-assign]
    IAMRequestBase.check_signature = _check_signature  # type: ignore[method-assign]
    try:
        with enable_iam_authentication():
            yield
    finally:
        IAMRequestBase.check_action_permitted = original  # type: ignore[method-assign]
        IAMRequestBase.check_signature = _MOTO_CHECK_SIGNATURE  # type: ignore[method-assign]
