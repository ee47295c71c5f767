"""How many GPUs the ``main`` container asks for (what vLLM and TRT-LLM size their launch by).

As upstream: the first GPU-like resource name (sorted) in ``limits``, else in ``requests``;
``nvidia.com/gpu``, ``gpu``, ``*/gpu``, MIG shapes (``*/mig-*``) and ``gpu.*`` count. The value
must be a whole number. GPUs requested only through DRA ``resources.claims`` would need the
ResourceClaimTemplates read from the cluster, which this pure renderer cannot do: that case is
an error naming the field, raised only when a backend needs the count.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from syncagent.render.model import RenderError

_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def is_gpu_resource(name: str) -> bool:
    low = name.lower()
    return (
        low in ("nvidia.com/gpu", "gpu")
        or low.endswith("/gpu")
        or "/mig-" in low
        or low.startswith("gpu.")
    )


def container_gpus(container: Mapping[str, Any]) -> int:
    """The GPU count of ``container``; raises :class:`RenderError` when it cannot be known."""
    resources = container.get("resources") or {}
    for section in ("limits", "requests"):
        names = sorted(n for n in (resources.get(section) or {}) if is_gpu_resource(n))
        if names:
            return _whole(names[0], resources[section][names[0]])
    if resources.get("claims"):
        raise RenderError(
            "main container resources.claims: GPUs requested only through DRA resource claims "
            "cannot be counted offline, and the multinode launch needs the count; also set the "
            "GPU count in resources.limits (for example nvidia.com/gpu)"
        )
    return 0


def _whole(name: str, quantity: object) -> int:
    value = parse_quantity(str(quantity))
    if value is None or value != value.to_integral_value():
        raise RenderError(
            f"main container resources: GPU resource {name!r} quantity {quantity!r} must be a "
            "whole number"
        )
    return int(value)


def parse_quantity(text: str) -> Decimal | None:
    """A Kubernetes quantity as a number (``None`` when it is not one)."""
    match = _QUANTITY.fullmatch(text.strip())
    if match is None:
        return None
    try:
        number = Decimal(match["number"])
    except InvalidOperation:
        return None
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix[:1] in ("e", "E"):
        return number.scaleb(int(suffix[1:]))
    return number.scaleb(_DECIMAL.get(suffix, 0))
