"""The offering index's answers kept by the types' names (a list equal to one asked about
before, as a round's solves build them) and its skipping of types that sell where an earlier
one does never change an answer: one index asked many times agrees with a fresh one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from models.catalog import load_catalog
from models.requirements import Requirement, Requirements
from scheduling.offers import OfferIndex
from tests.support.catalogs import TYPES, ZA, ZB, catalog
from tests.support.labels import CAPACITY_TYPE, ZONE

NAMES = sorted(TYPES)
UNAVAILABLE = [(n, z, ct) for n in NAMES[::3] for z in (ZA,) for ct in ("spot",)]
TYPE_LIST = load_catalog(catalog(unavailable=UNAVAILABLE))
BY_NAME = {it.name: it for it in TYPE_LIST}
_REQ = st.one_of(
    st.none(),
    st.frozensets(st.sampled_from([ZA, ZB, "us-east-1c"]), min_size=1).map(
        lambda v: Requirement(ZONE, False, v)
    ),
)
_CT = st.one_of(
    st.none(),
    st.frozensets(st.sampled_from(["on-demand", "spot"]), min_size=1).map(
        lambda v: Requirement(CAPACITY_TYPE, False, v)
    ),
)
_ASK = st.tuples(st.lists(st.sampled_from(NAMES), max_size=8), _REQ, _CT)


def _reqs(zone: Requirement | None, ct: Requirement | None) -> Requirements:
    return Requirements(r for r in (zone, ct) if r is not None)


@settings(max_examples=150, deadline=None)
@given(st.lists(_ASK, min_size=1, max_size=12))
def test_an_index_asked_many_times_agrees_with_a_fresh_one(
    asks: list[tuple[list[str], Requirement | None, Requirement | None]],
) -> None:
    kept = OfferIndex(TYPE_LIST)
    for names, zone, ct in asks:
        reqs = _reqs(zone, ct)
        for _ in range(2):  # an equal list, another object: answered by the names
            types = [BY_NAME[n] for n in names]
            fresh = OfferIndex(TYPE_LIST)
            universe = (3, 2)
            assert kept.zones_and_types(types, reqs, universe) == fresh.zones_and_types(
                types, reqs, universe
            )
            assert kept.offered(types, reqs) == fresh.offered(types, reqs)
            zones: set[str] = set()
            cts: set[str] = set()
            for it in types:
                for o in it.offerings:
                    zone_ok = reqs.get_or_exists(ZONE).has(o.zone)
                    if (
                        o.available
                        and zone_ok
                        and reqs.get_or_exists(CAPACITY_TYPE).has(o.capacity_type)
                    ):
                        zones.add(o.zone)
                        cts.add(o.capacity_type)
            assert kept.zones_and_types(types, reqs, universe) == (zones, cts)
