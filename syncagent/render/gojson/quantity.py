"""A Kubernetes quantity as Go's ``resource.Quantity`` writes it (``MarshalJSON``: ``String()``).

Go parses a quantity into a value, rounded up to nano units, and a format named by its suffix
(binary ``Ki``..``Ei``, decimal ``n``..``E`` or none, or an ``e``/``E`` exponent), then writes
the canonical form: a decimal or exponent value with an exponent that is a multiple of 3 and
no trailing zeros it can fold into the suffix, a binary value as a multiple of 1024 where it is
a whole number of at least 1024 (else as a decimal). ``"1000"`` is ``"1k"``, ``"1.5Gi"`` is
``"1536Mi"``, ``"0.5"`` is ``"500m"``.
"""

from __future__ import annotations

import re
from decimal import ROUND_UP, Context, Decimal
from typing import Final

_QUANTITY: Final = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)
_BINARY: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL: Final = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL |= {"P": 15, "E": 18}
_DECIMAL_SUFFIX: Final = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_BINARY_SUFFIX: Final = {power // 10: suffix for suffix, power in _BINARY.items()}
_NANO: Final = Decimal("1e-9")
# Wide enough for an exabyte in nano units.
_WIDE: Final = Context(prec=64, rounding=ROUND_UP)


class QuantityError(ValueError):
    """Not a quantity Go's ``resource.ParseQuantity`` accepts."""


def canonical_quantity(text: str) -> str:
    """``text`` as Go's ``Quantity.String()`` writes it after ``ParseQuantity``."""
    match = _QUANTITY.fullmatch(text.strip())
    if match is None:
        raise QuantityError(f"quantity {text!r} is not a Kubernetes quantity (e.g. 1Gi or 500m)")
    value, fmt = _value(match["number"], match["suffix"] or "")
    # Go keeps nano precision: a finer value is rounded away from zero.
    if _exponent(value) < -9:
        value = _WIDE.quantize(value, _NANO)
    if value == 0:
        return "0"
    if fmt == "binary" and (abs(value) < 1024 or value != value.to_integral_value()):
        fmt = "decimal"
    if fmt == "binary":
        return _binary(int(value))
    return _decimal(value, exponent_form=fmt == "exponent")


def _exponent(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return exponent if isinstance(exponent, int) else 0


def _value(number: str, suffix: str) -> tuple[Decimal, str]:
    amount = Decimal(number)
    if suffix in _BINARY:
        return amount * (2 ** _BINARY[suffix]), "binary"
    if suffix[:1] in ("e", "E"):
        return amount.scaleb(int(suffix[1:])), "exponent"
    return amount.scaleb(_DECIMAL[suffix]), "decimal"


def _decimal(value: Decimal, *, exponent_form: bool) -> str:
    sign, digits, exponent = value.normalize().as_tuple()
    mantissa = int("".join(map(str, digits)))
    assert isinstance(exponent, int)
    # Go's AsCanonicalBytes: the exponent goes down to a multiple of 3.
    shift = exponent % 3
    mantissa, exponent = mantissa * 10**shift, exponent - shift
    text = ("-" if sign else "") + str(mantissa)
    if exponent_form:
        return text + (f"e{exponent}" if exponent else "")
    suffix = _DECIMAL_SUFFIX.get(exponent)
    return text + (suffix if suffix is not None else f"e{exponent}")


def _binary(value: int) -> str:
    power = 0
    while power < 6 and value % 1024 == 0 and value != 0:
        value //= 1024
        power += 1
    return str(value) + (_BINARY_SUFFIX.get(power, "") if power else "")
