"""Pathway selection (spec/routing.md §2). Pure: no I/O.

Capabilities (§1: discovery, ``--capability``, offline defaults) live in
:mod:`syncagent.runtime.capabilities`; :func:`select_pathway` takes its snapshot and is
recomputed on every reconcile, by the agent and by the offline commands alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from syncagent.api import is_multinode_component
from syncagent.programs.capabilities import Capabilities

ENABLE_GROVE = "nvidia.com/enable-grove"
ENABLE_DS = "nvidia.com/enable-disaggregatedset"


class Pathway(StrEnum):
    GROVE = "Grove"
    DISAGGREGATED_SET = "DisaggregatedSet"
    COMPONENT = "Component"


@dataclass(frozen=True, slots=True)
class RecordedRouting:
    """``status.routing``: the pathway and the raw grove annotation it was chosen under."""

    pathway: Pathway
    grove_annotation: str | None = None

    def to_status(self) -> dict[str, str]:
        out = {"pathway": self.pathway.value}
        if self.grove_annotation is not None:
            out["groveAnnotation"] = self.grove_annotation
        return out

    @classmethod
    def from_status(cls, routing: Mapping[str, Any] | None) -> RecordedRouting | None:
        if not routing or not routing.get("pathway"):
            return None
        return cls(Pathway(routing["pathway"]), routing.get("groveAnnotation"))


def recorded_from_children(
    annotations: Mapping[str, str], *, pcs: bool, ds: bool, dcds: bool
) -> RecordedRouting | None:
    """Stand-in for a missing ``status.routing``: the one workload family the graph owns."""
    if pcs and not ds and not dcds:
        family = Pathway.GROVE
    elif ds and not pcs:
        family = Pathway.DISAGGREGATED_SET
    elif dcds and not pcs and not ds:
        family = Pathway.COMPONENT
    else:
        return None
    return RecordedRouting(family, annotations.get(ENABLE_GROVE))


@dataclass(frozen=True, slots=True)
class Selection:
    """The routing decision and what the conditions need to report it."""

    pathway: Pathway
    ds_wanted: bool
    # the DS ineligibility reason when DS was wanted but fell back; "" otherwise
    ds_reason: str = ""
    # Grove would take the graph but the routed-graph exception keeps it in place
    grove_held_back: bool = False

    def record(self, annotations: Mapping[str, str]) -> RecordedRouting:
        return RecordedRouting(self.pathway, annotations.get(ENABLE_GROVE))


def select_pathway(
    annotations: Mapping[str, str],
    caps: Capabilities,
    *,
    recorded: RecordedRouting | None,
    ds_reason: Callable[[], str],
) -> Selection:
    """Grove > opt-in DisaggregatedSet > Component (routing.md §2).

    ``ds_reason`` returns the DS ineligibility reason (:func:`ds_ineligibility`); it is only
    called when DS is wanted and Grove did not take the graph.
    """
    grove_value = annotations.get(ENABLE_GROVE)
    grove_allowed = caps.grove and (grove_value or "").lower() != "false"
    held_back = (
        grove_allowed
        and recorded is not None
        and recorded.pathway is not Pathway.GROVE
        and grove_value == recorded.grove_annotation
    )
    ds_wanted = (annotations.get(ENABLE_DS) or "").lower() == "true"
    if grove_allowed and not held_back:
        return Selection(Pathway.GROVE, ds_wanted)
    if ds_wanted:
        reason = ds_reason()
        pathway = Pathway.COMPONENT if reason else Pathway.DISAGGREGATED_SET
        return Selection(pathway, ds_wanted, reason, grove_held_back=held_back)
    return Selection(Pathway.COMPONENT, ds_wanted, grove_held_back=held_back)


def ds_eligible_condition(selection: Selection) -> tuple[str, str, str] | None:
    """``(status, reason, message)`` of ``DisaggregatedSetEligible``; ``None`` = remove it."""
    if not selection.ds_wanted:
        return None
    if selection.pathway is Pathway.GROVE:
        return (
            "False",
            "GroveSelected",
            'Grove pathway takes precedence; set nvidia.com/enable-grove: "false" to use '
            "DisaggregatedSet",
        )
    if selection.pathway is Pathway.DISAGGREGATED_SET:
        return ("True", "Selected", "DisaggregatedSet pathway selected")
    return ("False", "FallbackToComponentProgram", selection.ds_reason)


WORKER_TYPES = frozenset({"worker", "prefill", "decode"})
MAX_ROLES = 10


def ds_candidates(components: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Multinode worker-type components in spec order (disaggregatedset.md §1)."""
    return [c for c in components if c.get("type") in WORKER_TYPES and is_multinode_component(c)]


def ds_ineligibility(components: Sequence[Mapping[str, Any]], caps: Capabilities) -> str:
    """The first reason the graph cannot use the DS pathway; ``""`` when it can."""
    if not caps.disaggregated_set:
        return "DisaggregatedSet API is not available"
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
    text = f"workloads are served by the {selection.pathway.value} pathway"
    if selection.grove_held_back:
        text += '; Grove is available: set nvidia.com/enable-grove: "true" to move this graph to it'
    return text
