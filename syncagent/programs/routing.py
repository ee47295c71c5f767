"""Routing vocabulary (docs/routing.md §2). Pure: no I/O.

The precedence itself is the registry's (:mod:`syncagent.programs.registry`: each program
claims the graph or not, in order); this module holds the recorded routing, the selection and
the ``WorkloadPathway`` text; what is particular to a pathway (its annotations, rules and
conditions) is in its package. Capabilities (docs/routing.md §1) live in
:mod:`syncagent.programs.capabilities`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from syncagent.api.graph import ROUTING_FIELDS
from syncagent.programs.program import Claim


@dataclass(frozen=True, slots=True)
class RecordedRouting:
    """``status.routing``: the pathway and the raw values of the annotations the programs
    record (``Program.records``) it was chosen under; a program's claim compares them with the
    graph's (the routed-graph exception, docs/routing.md §2). On the wire those of
    ``ROUTING_FIELDS`` have a field of their own, any other is in ``annotations``."""

    pathway: str
    annotations: Mapping[str, str] = field(default_factory=dict)

    def to_status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pathway": self.pathway}
        for annotation, wire in ROUTING_FIELDS.items():
            if annotation in self.annotations:
                out[wire] = self.annotations[annotation]
        others = {k: v for k, v in self.annotations.items() if k not in ROUTING_FIELDS}
        if others:
            out["annotations"] = dict(sorted(others.items()))
        return out

    @classmethod
    def from_status(cls, routing: Mapping[str, Any] | None) -> RecordedRouting | None:
        if not routing or not routing.get("pathway"):
            return None
        annotations = {str(k): str(v) for k, v in (routing.get("annotations") or {}).items()}
        for annotation, wire in ROUTING_FIELDS.items():
            if routing.get(wire) is not None:
                annotations[annotation] = str(routing[wire])
        return cls(str(routing["pathway"]), annotations)


@dataclass(frozen=True, slots=True)
class Selection:
    """The routing decision (the registry's ``select``) and every program's claim, which the
    conditions need to report it."""

    pathway: str
    claims: Mapping[str, Claim] = field(default_factory=dict)
    records: tuple[str, ...] = ()  # the annotations the programs record (Program.records)

    def claim(self, pathway: str) -> Claim:
        return self.claims.get(pathway) or Claim(False)

    def record(self, annotations: Mapping[str, str]) -> RecordedRouting:
        return RecordedRouting(self.pathway, recorded(annotations, self.records))


def recorded(annotations: Mapping[str, str], keys: Sequence[str]) -> dict[str, str]:
    """The values of ``keys`` the graph sets (an absent annotation is not recorded)."""
    return {k: annotations[k] for k in keys if k in annotations}


def pathway_message(selection: Selection) -> str:
    """``WorkloadPathway`` message when no stale object remains."""
    text = f"workloads are served by the {selection.pathway} pathway"
    notes = [c.note for c in selection.claims.values() if c.held_back and c.note]
    return "; ".join([text, *notes])
