"""Quantity strings: rates, times, sizes, their errors and canonical forms."""

from fractions import Fraction

import pytest
from ccarena.spec.units import (
    Size,
    UnitError,
    format_bytes,
    format_rate,
    format_size,
    format_time,
    parse_bytes,
    parse_rate,
    parse_size,
    parse_time,
)


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("100Mbps", 100_000_000),
        ("1.5Gbps", 1_500_000_000),
        ("735kbps", 735_000),
        ("735Kbps", 735_000),
        ("800bps", 800),
        ("100mbps", 100_000_000),
        ("1e3kbps", 1_000_000),
        ("10 Mbps", 10_000_000),
    ],
)
def test_rates(text: str, bps: int) -> None:
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("20ms", 20_000_000),
        ("1.5s", 1_500_000_000),
        ("100us", 100_000),
        ("250ns", 250),
        ("2min", 120_000_000_000),
        ("1h", 3_600_000_000_000),
        ("0s", 0),
        ("0.1ms", 100_000),
    ],
)
def test_times(text: str, ns: int) -> None:
    assert parse_time(text) == ns


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("64KB", Size("bytes", 64_000)),
        ("64kB", Size("bytes", 64_000)),
        ("64KiB", Size("bytes", 65_536)),
        ("1MB", Size("bytes", 1_000_000)),
        ("1MiB", Size("bytes", 1_048_576)),
        ("1500B", Size("bytes", 1500)),
        ("1.5KB", Size("bytes", 1500)),
        ("100pkts", Size("pkts", 100)),
        ("1pkt", Size("pkts", 1)),
        ("1bdp", Size("bdp", Fraction(1))),
        ("0.2bdp", Size("bdp", Fraction(1, 5))),
    ],
)
def test_sizes(text: str, size: Size) -> None:
    assert parse_size(text) == size


def test_bare_number_is_an_error_with_an_example() -> None:
    with pytest.raises(UnitError) as e:
        parse_rate(100)
    assert str(e.value) == 'expected a rate such as "100Mbps", got 100'
    with pytest.raises(UnitError) as e:
        parse_time(20)
    assert str(e.value) == 'expected a time such as "20ms", got 20'
    with pytest.raises(UnitError) as e:
        parse_size(64000)
    assert str(e.value) == 'expected a size such as "64KB", "100pkts" or "1bdp", got 64000'


@pytest.mark.parametrize(
    "text",
    ["-5Mbps", "100", "100Mb", "100MBps", "fastbps", "", "1.2.3Mbps", "100 Mbit/s", "inf Mbps"],
)
def test_bad_rates(text: str) -> None:
    with pytest.raises(UnitError, match="expected a rate"):
        parse_rate(text)


@pytest.mark.parametrize("text", ["-1s", "20", "20 sec", "20msec", "20S", "true"])
def test_bad_times(text: str) -> None:
    with pytest.raises(UnitError, match="expected a time"):
        parse_time(text)


@pytest.mark.parametrize("text", ["abc", "64kb", "64Kbit", "iB", "-1pkts", "1bdps", "64"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(UnitError, match="expected a size"):
        parse_size(text)


def test_range_errors() -> None:
    with pytest.raises(UnitError, match="greater than 0"):
        parse_rate("0Mbps")
    with pytest.raises(UnitError, match="whole number"):
        parse_size("1.5pkts")
    with pytest.raises(UnitError, match="whole number of bytes"):
        parse_size("1.0001KB")
    with pytest.raises(UnitError, match="greater than 0"):
        parse_size("0bdp")
    with pytest.raises(UnitError, match="size in bytes"):
        parse_bytes("100pkts")
    with pytest.raises(UnitError, match="size in bytes"):
        parse_bytes("1bdp")
    assert parse_bytes("10MB") == 10_000_000


@pytest.mark.parametrize(
    ("bps", "text"),
    [
        (100_000_000, "100Mbps"),
        (1_500_000_000, "1.5Gbps"),
        (735_000, "735kbps"),
        (800, "800bps"),
        (1_234_567, "1.234567Mbps"),
    ],
)
def test_canonical_rates_round_trip(bps: int, text: str) -> None:
    assert format_rate(bps) == text
    assert parse_rate(format_rate(bps)) == bps


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0s"),
        (20_000_000, "20ms"),
        (1_500_000_000, "1.5s"),
        (120_000_000_000, "120s"),
        (250, "250ns"),
        (100_500, "100.5us"),
    ],
)
def test_canonical_times_round_trip(ns: int, text: str) -> None:
    assert format_time(ns) == text
    assert parse_time(format_time(ns)) == ns


@pytest.mark.parametrize(
    ("n", "text"), [(1500, "1500B"), (64_000, "64KB"), (65_536, "64KiB"), (10_000_000, "10MB"), (1_048_576, "1MiB")]
)
def test_canonical_bytes_round_trip(n: int, text: str) -> None:
    assert format_bytes(n) == text
    assert parse_bytes(format_bytes(n)) == n


@pytest.mark.parametrize("text", ["0.2bdp", "1bdp", "2.25bdp", "100pkts", "64KiB"])
def test_canonical_sizes_round_trip(text: str) -> None:
    size = parse_size(text)
    assert format_size(size) == text
    assert parse_size(format_size(size)) == size
