"""Go's ``encoding/json`` output as syncagent reproduces it (syncagent/render/gojson).

Expected values are Go's: quantities from apimachinery v0.36.2
``pkg/api/resource/quantity_test.go`` ``TestQuantityString`` (each ``alternate`` parses to its
``expect``); strings and numbers as ``json.Marshal`` writes them (``encoding/json``'s
``TestMarshalHTMLEscape``/``TestEncodeString`` rules: ``<``, ``>``, ``&``, U+2028/9 escaped,
``\\b``/``\\f`` short since Go 1.22).
"""

from __future__ import annotations

import pytest

from syncagent.render.gojson import (
    QuantityError,
    canonical_quantity,
    go_float,
    go_string,
    marshal_untyped,
)
from syncagent.render.gojson.duration import go_duration

# TestQuantityString: (alternate, expect), and each expect parses to itself.
QUANTITIES = [
    ("1024Mi", "1Gi"),
    ("307200Ki", "300Mi"),
    ("1025024Mi", "1001Gi"),
    ("1024Gi", "1Ti"),
    ("5000m", "5"),
    ("0.5", "500m"),
    ("1000M", "1G"),
    ("0.001T", "1G"),
    ("1000u", "1m"),
    ("1.08", "1080m"),
    ("1080000000n", "1080m"),
    (".001e12", "1e9"),
    ("0.001e0", "1e-3"),
    ("1000e-12", "1e-9"),
    ("00", "0"),
    ("6Ki", "6Ki"),
    ("1025", "1025"),
    ("80e-3", "80e-3"),
    ("3k", "3k"),
    ("1080u", "1080u"),
]


@pytest.mark.parametrize(("text", "expected"), QUANTITIES)
def test_a_quantity_is_written_in_gos_canonical_form(text: str, expected: str) -> None:
    assert canonical_quantity(text) == expected
    assert canonical_quantity(expected) == expected


def test_a_fractional_binary_quantity_is_written_as_decimal_units() -> None:
    # 1.5Gi is 1536Mi; 0.5Ki is 512 bytes (under 1024: decimal).
    assert canonical_quantity("1.5Gi") == "1536Mi"
    assert canonical_quantity("0.5Ki") == "512"


def test_not_a_quantity_is_refused() -> None:
    with pytest.raises(QuantityError, match="'12 GB' is not a Kubernetes quantity"):
        canonical_quantity("12 GB")


def test_strings_are_escaped_as_go_escapes_them() -> None:
    assert go_string("a && b") == '"a \\u0026\\u0026 b"'
    assert go_string("<x>") == '"\\u003cx\\u003e"'
    assert go_string('q"\\') == '"q\\"\\\\"'
    assert go_string("\n\r\t\b\f\x01") == '"\\n\\r\\t\\b\\f\\u0001"'
    assert go_string("\u2028\u2029") == '"\\u2028\\u2029"'
    assert go_string("é☃") == '"é☃"'


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1.0, "1"), (0.5, "0.5"), (1e-5, "0.00001"), (1e-7, "1e-07"), (1e21, "1e+21"), (-2.5, "-2.5")],
)
def test_floats_are_written_as_go_writes_a_float64(value: float, expected: str) -> None:
    assert go_float(value) == expected


def test_untyped_values_sort_map_keys_and_write_numbers_as_floats() -> None:
    assert (
        marshal_untyped({"b": 1, "a": [True, None, "x&y"]}) == '{"a":[true,null,"x\\u0026y"],"b":1}'
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [("90s", "1m30s"), ("1h", "1h0m0s"), ("1.5ms", "1.5ms"), ("100us", "100µs"), ("0", "0s")],
)
def test_a_duration_is_written_as_gos_duration_string(text: str, expected: str) -> None:
    # time.Duration.String() of time.ParseDuration(text) (Go's time package examples).
    assert go_duration(text) == expected
