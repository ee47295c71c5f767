"""How a graph comes to the DisaggregatedSet pathway (docs/routing.md §2,
docs/disaggregatedset.md §1): the opt-in, the eligibility rules and the
``DisaggregatedSetEligible`` condition. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from syncagent.api import WORKER_TYPES, is_multinode_component
from syncagent.programs.disaggregatedset.render import MAX_ROLES
from syncagent.programs.program import Condition
from syncagent.programs.routing import Selection
from syncagent.render.labels import ENABLE_GROVE

PATHWAY = "DisaggregatedSet"
ENABLE_DS = "nvidia.com/enable-disaggregatedset"
ELIGIBLE = "DisaggregatedSetEligible"
FALLBACK = "FallbackToComponentProgram"
# The pathway that takes precedence over this one, named in its condition (pathway packages
# do not import each other: the CLI composes them).
GROVE = "Grove"


def eligible_condition(selection: Selection) -> Condition | None:
    """``DisaggregatedSetEligible`` while the graph asks for the pathway (``None``: remove it);
    falling back raises the ``DisaggregatedSetFallback`` warning."""
    ds = selection.claim(PATHWAY)
    if not ds.wanted:
        return None
    if selection.pathway == GROVE:
        return Condition(
            ELIGIBLE,
            "False",
            "GroveSelected",
            f'Grove pathway takes precedence; set {ENABLE_GROVE}: "false" to use DisaggregatedSet',
        )
    if selection.pathway == PATHWAY:
        return Condition(ELIGIBLE, "True", "Selected", "DisaggregatedSet pathway selected")
    warning = (
        "DisaggregatedSetFallback",
        f"DisaggregatedSet requested but falling back to DynamoComponentDeployments: {ds.reason}",
    )
    return Condition(ELIGIBLE, "False", FALLBACK, ds.reason, warning=warning)


def ds_candidates(components: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Multinode worker-type components in spec order (docs/disaggregatedset.md §1): the wire-form
    twin of ``disaggregatedset.render.selected_components``, read before a graph is parsed."""
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
