"""Quantity strings: rates, times, sizes, their errors and canonical forms."""

from fractions import Fraction

import pytest
from ccarena.spec.units import (
    BYTES_PATTERN,
    RATE_PATTERN,
    SIZE_PATTERN,
    TIME_PATTERN,
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


@pytest.mark.parametrize("text", ["-1s", "20", "20 sec", "20msec", "20mss", "true"])
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


# --- Case and tc's spellings (issue 31) -------------------------------------


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("100MBPS", 100_000_000),
        ("100 MBPS", 100_000_000),
        ("100mbit", 100_000_000),
        ("100Mbit", 100_000_000),
        ("100MBIT", 100_000_000),
        ("735kbit", 735_000),
        ("1gbit", 1_000_000_000),
        ("800bit", 800),
        ("2tbit", 2 * 10**12),
        ("10GBPS", 10_000_000_000),
    ],
)
def test_rates_ignore_case_and_take_tc_spellings(text: str, bps: int) -> None:
    assert parse_rate(text) == bps


@pytest.mark.parametrize(("text", "ns"), [("40MS", 40_000_000), ("20S", 20 * 10**9), ("5US", 5_000), ("3NS", 3),
                                          ("2MIN", 120 * 10**9), ("1H", 3600 * 10**9), ("7µs", 7_000)])
def test_times_ignore_case(text: str, ns: int) -> None:
    assert parse_time(text) == ns


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1BDP", Size("bdp", Fraction(1))),
        ("0.5Bdp", Size("bdp", Fraction(1, 2))),
        ("100PKTS", Size("pkts", 100)),
        ("1PKT", Size("pkts", 1)),
        ("64KIB", Size("bytes", 65_536)),
        ("64kiB", Size("bytes", 65_536)),
        ("1mB", Size("bytes", 1_000_000)),
    ],
)
def test_sizes_ignore_case_except_the_byte(text: str, size: Size) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["64Mb", "64mb", "64b", "64KIb", "1iB"])
def test_a_lowercase_b_is_bits_not_bytes(text: str) -> None:
    # Folding case in sizes would read "64Mb" (megabits) as "64MB" (megabytes): refused instead.
    with pytest.raises(UnitError, match=r"\(units: B, KB, MB, GB, KiB, MiB, GiB, pkts, bdp\)"):
        parse_size(text)


@pytest.mark.parametrize(("text", "bits"), [("100MBps", "800Mbps"), ("12.5KBps", "100kbps"), ("1Bps", "8bps")])
def test_bytes_per_second_is_refused_with_the_rate_in_bits(text: str, bits: str) -> None:
    with pytest.raises(UnitError) as e:
        parse_rate(text)
    assert str(e.value) == f'expected a rate in bits per second, got "{text}" (bytes per second; write "{bits}")'


def test_a_wrong_unit_gets_the_list_of_units() -> None:
    with pytest.raises(UnitError) as e:
        parse_rate("100 Mbit/s")
    assert str(e.value) == (
        'expected a rate such as "100Mbps" (units: bps, kbps, Mbps, Gbps, Tbps, or bit, kbit, mbit, gbit), '
        'got "100 Mbit/s"'
    )
    with pytest.raises(UnitError) as e:
        parse_time("20 sec")
    assert str(e.value) == 'expected a time such as "20ms" (units: ns, us, ms, s, min, h), got "20 sec"'
    with pytest.raises(UnitError) as e:
        parse_bytes("100pkts")
    assert str(e.value) == (
        'expected a size in bytes such as "10MB" or "64KiB" (units: B, KB, MB, GB, KiB, MiB, GiB), got "100pkts"'
    )


def test_a_right_unit_with_a_wrong_number_gets_no_list() -> None:
    with pytest.raises(UnitError) as e:
        parse_rate("-5Mbps")
    assert "units:" not in str(e.value)


@pytest.mark.parametrize(
    ("pattern", "parse", "texts"),
    [
        (RATE_PATTERN, parse_rate, ["100Mbps", "100MBPS", "100mbit", "800bit", " 1.5 Gbps ", "100MBps", "100Mb",
                                    "100 Mbit/s", "-5Mbps", "1kBps"]),
        (TIME_PATTERN, parse_time, ["20ms", "40MS", "1H", "7µs", "20 sec", "20", "1hr"]),
        (SIZE_PATTERN, parse_size, ["64KB", "64KIB", "1BDP", "100PKTS", "64Mb", "1iB", "iB", "64kb"]),
        (BYTES_PATTERN, parse_bytes, ["64KB", "64KiB", "1pkt", "1bdp", "64Mb"]),
    ],
)
def test_schema_patterns_accept_what_the_parsers_accept(pattern: str, parse: object, texts: list[str]) -> None:
    import re

    for text in texts:
        try:
            parse(text)  # type: ignore[operator]
            ok = True
        except UnitError:
            ok = False
        assert (re.search(pattern, text) is not None) == ok, text
