"""Kubernetes quantities: parsing, formatting, binary and decimal suffixes, milli precision."""

from __future__ import annotations

import pytest

from models.quantity import MAX_MILLI, QuantityError, format_quantity, parse_limit, parse_quantity
from models.resources import parse_resources


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        ("1", 1000),
        ("100m", 100),
        ("1.5", 1500),
        ("0.1", 100),
        (".5", 500),
        ("2k", 2_000_000),
        ("1M", 1_000_000_000),
        ("1G", 10**12),
        ("1Ki", 1024 * 1000),
        ("1Mi", 2**20 * 1000),
        ("1Gi", 2**30 * 1000),
        ("1.5Gi", 3 * 2**29 * 1000),
        ("1Ti", 2**40 * 1000),
        ("1e3", 1_000_000),
        ("1E3", 1_000_000),
        ("5e-3", 5),
        ("+2", 2000),
        ("0", 0),
    ],
)
def test_parse(text: str, milli: int) -> None:
    assert parse_quantity(text) == milli


def test_parse_numbers() -> None:
    assert parse_quantity(2) == 2000
    assert parse_quantity(0.25) == 250
    assert parse_quantity(" 3 ") == 3000


def test_finer_than_milli_rounds_up() -> None:
    assert parse_quantity("1u") == 1
    assert parse_quantity("100n") == 1
    assert parse_quantity("0.0001") == 1
    assert parse_quantity("1500u") == 2


@pytest.mark.parametrize("bad", ["abc", "", "1.2.3", "1Gb", "Gi", "1 Gi", "-1", "1ki", True, "--1"])
def test_errors(bad: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)  # type: ignore[arg-type]


def test_quantity_error_is_value_error() -> None:
    assert issubclass(QuantityError, ValueError)


@pytest.mark.parametrize(
    ("milli", "resource", "text"),
    [
        (1100, "cpu", "1100m"),
        (2000, "cpu", "2"),
        (0, "cpu", "0"),
        (2**30 * 1000, "memory", "1Gi"),
        (512 * 2**20 * 1000, "memory", "512Mi"),
        (1536 * 2**20 * 1000, "memory", "1536Mi"),
        (1000 * 1000, "memory", "1000"),
        (0, "memory", "0"),
        (3000, "pods", "3"),
        (2**40 * 1000, "ephemeral-storage", "1Ti"),
        (2**21 * 1000, "hugepages-2Mi", "2Mi"),
        (1500, "memory", "1500m"),
    ],
)
def test_format(milli: int, resource: str, text: str) -> None:
    assert format_quantity(milli, resource) == text


@pytest.mark.parametrize(
    ("text", "resource"),
    [
        ("100m", "cpu"),
        ("4", "cpu"),
        ("1Gi", "memory"),
        ("768Mi", "memory"),
        ("29", "pods"),
        ("3Ki", "memory"),
    ],
)
def test_round_trip(text: str, resource: str) -> None:
    assert format_quantity(parse_quantity(text), resource) == text
    assert parse_quantity(format_quantity(parse_quantity(text), resource)) == parse_quantity(text)


def test_decimal_memory_round_trips_by_value() -> None:
    milli = parse_quantity("1G")
    assert parse_quantity(format_quantity(milli, "memory")) == milli


def test_parse_resources_names_the_resource() -> None:
    assert parse_resources({"cpu": "250m", "memory": "1Gi"}) == {"cpu": 250, "memory": 2**30 * 1000}
    assert parse_resources(None) == {}
    with pytest.raises(ValueError, match="cpu"):
        parse_resources({"cpu": "abc"})


@pytest.mark.parametrize("text", ["10000000Gi", "9223372036854776", "1e30", "1e999999"])
def test_a_limit_beyond_64_bit_milli_is_held_at_the_largest_a_request_is_refused(
    text: str,
) -> None:
    assert parse_limit(text) == MAX_MILLI
    with pytest.raises(QuantityError, match="too large"):
        parse_quantity(text)


def test_a_limit_in_range_is_exact_and_a_bad_one_still_refused() -> None:
    assert parse_limit("1000Gi") == parse_quantity("1000Gi")
    for bad in ("-1", "lots", "nan"):
        with pytest.raises(QuantityError):
            parse_limit(bad)
