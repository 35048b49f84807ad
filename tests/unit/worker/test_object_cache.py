"""The provisioning round's copy of pods, Nodes and NodeClaims from the worker's watches:
trusted only while synced, replaced by a re-list, answered in the API server's order."""

from __future__ import annotations

from typing import Any

from activities.kubernetes.object_cache import ObjectCache
from activities.kubernetes.raw import LISTED, MODIFIED


def obj(name: str, namespace: str | None = None, version: str = "1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": version}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


def names(cache: ObjectCache) -> list[str]:
    return [o["metadata"]["name"] for o in cache.items()]


def test_a_list_is_trusted_only_once_handed_over_whole() -> None:
    cache = ObjectCache()
    cache.observe(LISTED, obj("a"))
    assert not cache.synced
    assert cache.items() == []  # half a list is nobody's answer
    cache.set_synced(True)
    assert names(cache) == ["a"]
    cache.set_synced(False)  # the watch broke
    assert not cache.synced


def test_a_re_list_drops_what_was_deleted_while_the_watch_was_down() -> None:
    cache = ObjectCache()
    for name in ("a", "b"):
        cache.observe(LISTED, obj(name))
    cache.set_synced(True)
    cache.set_synced(False)
    cache.observe(LISTED, obj("b", version="7"))  # "a" went while nobody watched
    cache.set_synced(True)
    assert names(cache) == ["b"]
    assert cache.items()[0]["metadata"]["resourceVersion"] == "7"


def test_watch_events_add_change_and_delete() -> None:
    cache = ObjectCache()
    cache.set_synced(True)
    cache.observe("ADDED", obj("a"))
    cache.observe("ADDED", obj("b"))
    cache.observe("MODIFIED", obj("a", version="2"))
    cache.observe("DELETED", obj("b"))
    assert [o["metadata"]["resourceVersion"] for o in cache.items()] == ["2"]


def test_items_come_in_the_api_servers_order() -> None:
    """namespace/name as one string, as etcd sorts its keys: "a-b/x" before "a/x"."""
    cache = ObjectCache()
    cache.set_synced(True)
    for namespace, name in (("a", "x"), ("a-b", "x"), ("a", "b"), ("b", "a")):
        cache.observe("ADDED", obj(name, namespace))
    got = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in cache.items()]
    assert got == [("a-b", "x"), ("a", "b"), ("a", "x"), ("b", "a")]


def test_a_created_object_counts_at_once_but_never_hides_a_newer_one() -> None:
    cache = ObjectCache()
    cache.set_synced(True)
    cache.observe_created(obj("made"))  # before the watch delivers it
    assert names(cache) == ["made"]
    cache.observe("MODIFIED", obj("other", version="5"))
    cache.observe_created(obj("other", version="4"))
    assert [o["metadata"]["resourceVersion"] for o in cache.items()] == ["1", "5"]


def test_a_derived_value_lives_as_long_as_its_object_version() -> None:
    """Made once per version of a held object; gone with a delete or a re-list without it."""
    cache = ObjectCache()
    made: list[str] = []

    def make(o: dict[str, Any]) -> str:
        made.append(o["metadata"]["resourceVersion"])
        return f"{o['metadata']['name']}@{o['metadata']['resourceVersion']}"

    for name in ("a", "b"):
        cache.observe(LISTED, obj(name))
    cache.set_synced(True)
    a, b = cache.items()
    assert cache.derived(a, make) == "a@1" and cache.derived(a, make) == "a@1"
    cache.derived(b, make)
    assert made == ["1", "1"]
    cache.observe("MODIFIED", obj("a", version="2"))
    assert cache.derived(cache.items()[0], make) == "a@2"  # a new version is made afresh
    assert cache.derived(obj("b", version="1"), make) == "b@1"  # same version: kept
    assert made == ["1", "1", "2"]
    assert cache.derived(obj("c", version="1"), make) == "c@1"  # not held: never kept
    cache.derived(obj("c", version="1"), make)
    assert made == ["1", "1", "2", "1", "1"]
    cache.observe("DELETED", obj("b"))
    assert sorted(cache._derived) == ["a"]
    cache.observe(LISTED, obj("x"))  # a re-list without "a"
    cache.set_synced(True)
    assert cache._derived == {}


def test_the_answer_to_an_own_write_replaces_an_older_watched_copy_only() -> None:
    cache = ObjectCache()
    claim = {"metadata": {"name": "c", "resourceVersion": "10"}}
    cache.observe_written({"metadata": {"name": "c", "resourceVersion": "11"}})
    assert cache.get("c") is None  # not synced: nothing is held, nothing is answered
    cache.observe(LISTED, claim)
    cache.set_synced(True)
    cache.observe_written({"metadata": {"name": "other", "resourceVersion": "12"}})
    assert cache.get("other") is None  # only what the watch holds is refreshed
    written = {"metadata": {"name": "c", "resourceVersion": "11"}, "status": {"x": 1}}
    cache.observe_written(written)
    assert cache.get("c") == written
    # the watch's newer event wins; an older answer arriving late does not undo it
    newer = {"metadata": {"name": "c", "resourceVersion": "13"}}
    cache.observe(MODIFIED, newer)
    cache.observe_written(written)
    assert cache.get("c") == newer
