"""Go's ``encoding/json`` output, reproduced for the types of a DCD spec (pure).

:func:`marshal` writes a JSON-shaped value as Go writes the typed value it decodes to, guided by
the committed type table (:mod:`syncagent.api.gotypes`); :func:`go_string` is Go's string
encoding (HTML escaping included); :func:`canonical_quantity` is ``resource.Quantity``'s form.
"""

from __future__ import annotations

from syncagent.render.gojson.encode import marshal, marshal_untyped
from syncagent.render.gojson.quantity import QuantityError, canonical_quantity
from syncagent.render.gojson.strings import go_float, go_string

__all__ = [
    "QuantityError",
    "canonical_quantity",
    "go_float",
    "go_string",
    "marshal",
    "marshal_untyped",
]
