"""Routing vocabulary (docs/routing.md §2). Pure: no I/O.

The precedence itself is the registry's (:mod:`syncagent.programs.registry`: each program
claims the graph or not, in order); this module holds the recorded routing, the selection and
the documented texts of the routing conditions. Capabilities (docs/routing.md §1) live in
:mod:`syncagent.programs.capabilities`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from syncagent.api import WORKER_TYPES, is_multinode_component
from syncagent.programs.program import Claim

ENABLE_GROVE = "nvidia.com/enable-grove"
ENABLE_DS = "nvidia.com/enable-disaggregatedset"


class Pathway:
    """The built-in programs' pathway names; each program declares its own (``.pathway``)."""

    GROVE = "Grove"
    DISAGGREGATED_SET = "DisaggregatedSet"
    COMPONENT = "Component"


@dataclass(frozen=True, slots=True)
class RecordedRouting:
    """``status.routing``: the pathway and the raw values of the annotations the programs
    record (``Program.records``) it was chosen under; a program's claim compares them with the
    graph's (the routed-graph exception, docs/routing.md §2). On the wire Grove's is
    ``groveAnnotation``, any other is in ``annotations``."""

    pathway: str
    annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def grove_annotation(self) -> str | None:
        return self.annotations.get(ENABLE_GROVE)

    def to_status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pathway": self.pathway}
        if self.grove_annotation is not None:
            out["groveAnnotation"] = self.grove_annotation
        others = {k: v for k, v in self.annotations.items() if k != ENABLE_GROVE}
        if others:
            out["annotations"] = dict(sorted(others.items()))
        return out

    @classmethod
    def from_status(cls, routing: Mapping[str, Any] | None) -> RecordedRouting | None:
        if not routing or not routing.get("pathway"):
            return None
        annotations = {str(k): str(v) for k, v in (routing.get("annotations") or {}).items()}
        if routing.get("groveAnnotation") is not None:
            annotations[ENABLE_GROVE] = str(routing["groveAnnotation"])
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


def ds_eligible_condition(selection: Selection) -> tuple[str, str, str] | None:
    """``(status, reason, message)`` of ``DisaggregatedSetEligible``; ``None`` = remove it."""
    ds = selection.claim(Pathway.DISAGGREGATED_SET)
    if not ds.wanted:
        return None
    if selection.pathway == Pathway.GROVE:
        return (
            "False",
            "GroveSelected",
            'Grove pathway takes precedence; set nvidia.com/enable-grove: "false" to use '
            "DisaggregatedSet",
        )
    if selection.pathway == Pathway.DISAGGREGATED_SET:
        return ("True", "Selected", "DisaggregatedSet pathway selected")
    return ("False", "FallbackToComponentProgram", ds.reason)


MAX_ROLES = 10


def ds_candidates(components: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Multinode worker-type components in spec order (docs/disaggregatedset.md §1): the wire-form
    twin of ``render.disaggregatedset.selected_components``, read before a graph is parsed."""
    return [c for c in components if c.get("type") in WORKER_TYPES and is_multinode_component(c)]


def ds_ineligibility(components: Sequence[Mapping[str, Any]]) -> str:
    """The first reason the graph's components cannot use the DS pathway; ``""`` when they
    can (the capability is the registry's to check: ``Registry.select``)."""
    candidates = ds_candidates(components)
    for c in candidates:
        if "scalingAdapter" in c:
            return (
                f'component "{c["name"]}" uses scalingAdapter, but DisaggregatedSet does not '
                "support scale subresource integration"
            )
    if not candidates:
        return "no eligible multinode worker roles found"
    if len(candidates) > MAX_ROLES:
        return f"DisaggregatedSet supports at most {MAX_ROLES} roles"
    replicas = {c.get("replicas", 1) == 0 for c in candidates}
    if len(replicas) > 1:
        return (
            "DisaggregatedSet requires replicas to be zero for all selected roles or positive "
            "for all selected roles"
        )
    if len(candidates) < 2:
        return "DisaggregatedSet requires at least two eligible multinode worker roles"
    return ""


def pathway_message(selection: Selection) -> str:
    """``WorkloadPathway`` message when no stale object remains."""
    text = f"workloads are served by the {selection.pathway} pathway"
    if selection.claim(Pathway.GROVE).held_back:
        text += '; Grove is available: set nvidia.com/enable-grove: "true" to move this graph to it'
    return text
