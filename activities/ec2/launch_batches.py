"""Which instance of a batched CreateFleet is whose: one rule, for the launch and its retry.

One CreateFleet for several NodeClaims tags every instance alike (EC2 applies a request's
tags to each instance it launches), so the claim's own tag (``karpenter.sh/nodeclaim``) can
only be added after the answer, one CreateTags per instance. A worker killed between the
answer and those tags would leave instances no lookup by claim finds, and the claims' retried
launches would make second ones. So the request tags every instance with one tag per member
claim (:func:`member_tag`, valued with the batch's token), and the instances go to the claims
by a rule that needs nothing but what EC2 keeps (:func:`assign`): the members sorted by their
tag, the instances sorted by id, paired in order; a short answer leaves the last members
without one. A retry that finds no instance by claim tag looks for its member tag and applies
the same rule to that batch's instances, terminated ones included, so the pairing holds
whatever became of the others.

Tags per instance are capped at 50 by EC2, which caps a batch's members
(:func:`member_capacity`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

MEMBER_TAG_PREFIX = "joinery.dev/launch/"
# EC2's limits: tag keys of at most 128 characters, 50 tags a resource (``aws:`` ones aside).
MAX_TAG_KEY = 128
MAX_TAGS = 50
# Tags CreateTags adds after the answer: ``Name`` and ``karpenter.sh/nodeclaim``.
TAGS_ADDED_LATER = 2


def member_tag(nodeclaim: str) -> str:
    """The tag key naming ``nodeclaim`` a member of a batch; a name too long for a key is
    replaced by its digest (the rule only needs keys that are unique and stable)."""
    key = MEMBER_TAG_PREFIX + nodeclaim
    if len(key) <= MAX_TAG_KEY:
        return key
    return MEMBER_TAG_PREFIX + "sha256-" + hashlib.sha256(nodeclaim.encode()).hexdigest()


def member_capacity(shared_tags: int) -> int:
    """How many claims one request may carry beside ``shared_tags`` tags of its own."""
    return max(1, MAX_TAGS - TAGS_ADDED_LATER - shared_tags)


def batch_token(uids: Iterable[str]) -> str:
    """CreateFleet's ClientToken for these claims: a lone claim's UID (as before batching),
    else a digest of them all (at most 64 characters, as EC2 allows)."""
    ordered = sorted(set(uids))
    if len(ordered) == 1:
        return ordered[0]
    return hashlib.sha256("\n".join(ordered).encode()).hexdigest()


def assign(members: Iterable[str], instance_ids: Iterable[str]) -> dict[str, str]:
    """Claim name -> instance id: members in order of their tag, instances in order of id."""
    ordered = sorted(set(members), key=member_tag)
    return dict(zip(ordered, sorted(instance_ids), strict=False))


def members_of(tags: Mapping[str, str]) -> list[str]:
    """The member tag keys an instance carries (the batch's members, as keys)."""
    return [k for k in tags if k.startswith(MEMBER_TAG_PREFIX)]


def recover(nodeclaim: str, instances: Sequence[tuple[str, Mapping[str, str]]]) -> list[str]:
    """The instance ids :func:`assign` gave ``nodeclaim``, one per batch it was a member of
    that gave it one, from ``(instance id, tags)`` of every instance carrying its member tag
    (terminated ones included, or the pairing shifts). A claim left without an instance by
    one batch and launched by the next has two batches; the caller keeps the live one."""
    key = member_tag(nodeclaim)
    by_token: dict[str, list[tuple[str, Mapping[str, str]]]] = {}
    for instance_id, tags in instances:
        token = tags.get(key)
        if token is not None:
            by_token.setdefault(token, []).append((instance_id, tags))
    found: list[str] = []
    for batch in by_token.values():
        keys = sorted(members_of(batch[0][1]))
        ids = sorted(i for i, _ in batch)
        position = keys.index(key)
        if position < len(ids):
            found.append(ids[position])
    return found
