"""The Go type facts syncagent's Go-JSON encoder runs on (``gotypes.json``, generated).

Upstream's worker hash (``ComputeDGDWorkersSpecHash``) hashes Go's ``json.Marshal`` of generated
DCD specs, so its bytes depend on facts only Go's source holds: each struct's fields in order,
their JSON names and ``omitempty``, embedded structs, and which types marshal themselves.
``tests/parity/tools/gotypes`` reads them from upstream's compiled types (reflection, as
``encoding/json`` does) for ``DynamoComponentDeploymentSpec`` and everything it reaches; the
parity tier checks the committed table is current. A ``pip install`` has neither Go nor the
source, hence the committed copy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Final

TABLE: Final = Path(__file__).with_name("gotypes.json")
# A type as the table describes it: {"kind": "struct", "name": ...}, {"kind": "ptr", "elem": ...}
TypeRef = Mapping[str, Any]
Field = Mapping[str, Any]


class GoTypes:
    """The table: struct fields by Go type name (``<package path>.<Name>``)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.root: str = data["root"]
        self._structs: Mapping[str, Sequence[Field]] = data["structs"]

    def fields(self, name: str) -> Sequence[Field]:
        return self._structs[name]

    def group(self, name: str, embedded_pointer: str) -> list[Field]:
        """The fields promoted from one embedded pointer of struct ``name``."""
        return [f for f in self._structs[name] if f.get("embeddedPointer") == embedded_pointer]

    def structs(self) -> list[str]:
        return sorted(self._structs)

    def root_ref(self) -> TypeRef:
        return {"kind": "struct", "name": self.root}

    def custom_types(self) -> set[str]:
        """Every type the table says writes itself (the encoder must know each)."""
        found: set[str] = set()
        for fields in self._structs.values():
            for field in fields:
                _customs(field["type"], found)
        return found


def _customs(ref: TypeRef, found: set[str]) -> None:
    if ref["kind"] in ("marshaler", "textmarshaler"):
        found.add(ref["name"])
    for key in ("elem", "key"):
        if key in ref:
            _customs(ref[key], found)


@cache
def dcd_spec_types() -> GoTypes:
    """The committed table for upstream's ``v1beta1.DynamoComponentDeploymentSpec``."""
    return GoTypes(json.loads(TABLE.read_text()))
