"""What we take over, and from whom: only what the upstream Dynamo operator wrote (docs/ownership.md).

The upstream operator is our predecessor: what it set that we no longer set should go. It is a
controller-runtime binary whose writes show as Update entries of manager ``manager`` (the
binary's name, controller-runtime's default) or ``dynamo-operator``. But ``manager`` is also the
name of other controllers (the LeaderWorkerSet controller writes LWS status as ``manager``), so
only what the Dynamo operator demonstrably wrote is taken from those entries:

- the content fields (``spec``; ``rules``/``subjects``/``roleRef``/``imagePullSecrets`` of the
  discovery identity) of every kind we render, as our content managers declare them;
- labels, annotations and finalizers under the ``nvidia.com/`` prefix, on those kinds;
- owner references to our kinds (graphs and components);
- status, only of graphs and components (never of a third-party kind).

Nothing is taken from any other writer (kubectl of every kind, other controllers, people): from
them our forced applies take exactly the fields we set, and what they added beside ours stays.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fieldmanagers import (
    component_status,
    components,
    graph_status,
    identity,
    ownership,
    services,
    workloads,
)
from fieldmanagers.contract import FieldManager
from syncagent.kube import kinds
from syncagent.ssa.fieldsets import FieldSelector
from syncagent.ssa.takeover import TakeoverPolicy, TakeoverRule

UPSTREAM_OPERATOR_MANAGERS: tuple[str, ...] = ("manager", "dynamo-operator")
PREFIX = "nvidia.com/"
OUR_KINDS = frozenset({kinds.DGD.kind, kinds.DCD.kind})
OUR_API_VERSIONS = frozenset({"nvidia.com/v1alpha1", "nvidia.com/v1beta1"})
# The content managers every pathway shares; each pathway adds its own (``Registry``
# ``takeover_policy``: the managers its program declares that write no subresource).
COMMON_CONTENT: tuple[FieldManager, ...] = (
    components.MANAGER,
    workloads.MANAGER,
    services.MANAGER,
    identity.MANAGER,
)

# Status subresources we write, by kind: upstream status entries move there on takeover.
STATUS_MANAGERS: dict[str, str] = {
    kinds.DGD.kind: graph_status.MANAGER.name,
    kinds.DCD.kind: component_status.MANAGER.name,
}

_METADATA = (
    FieldSelector(("metadata", "labels"), prefix=PREFIX),
    FieldSelector(("metadata", "annotations"), prefix=PREFIX),
    FieldSelector(("metadata", "finalizers"), prefix=PREFIX),
    FieldSelector(
        ("metadata", "ownerReferences"),
        item=(("kind", OUR_KINDS), ("apiVersion", OUR_API_VERSIONS)),
    ),
)
_STATUS = (FieldSelector(("status",)),)


def content_fields(manager: FieldManager) -> tuple[str, ...]:
    """The top-level fields other than metadata that ``manager`` declares (``spec``...)."""
    tops = (p.lstrip(".").split(".")[0].split("[")[0].rstrip("*") for p in manager.paths)
    return tuple(dict.fromkeys(t for t in tops if t not in ("metadata", "status")))


def upstream_policy(
    content: Iterable[FieldManager], *, managers: tuple[str, ...] = UPSTREAM_OPERATOR_MANAGERS
) -> TakeoverPolicy:
    """What a takeover moves from ``managers`` into ours: the fields of every kind the
    ``content`` managers write (:data:`COMMON_CONTENT` and each pathway's own)."""
    names = frozenset(managers)
    rules = [
        TakeoverRule(
            names,
            tuple(FieldSelector((name,)) for name in content_fields(m)) + _METADATA,
            kinds=frozenset(m.kinds),
        )
        for m in content
    ]
    rules.append(TakeoverRule(names, _STATUS, kinds=OUR_KINDS))
    rules.append(TakeoverRule(names, _STATUS, kinds=OUR_KINDS, subresource="status"))
    return TakeoverPolicy(tuple(rules))


def targets_for(kind: str, content_manager: str, *, policy: TakeoverPolicy) -> dict[str, Any]:
    """The keyword arguments of :func:`syncagent.ssa.takeover.take_over` for an object of
    ``kind`` written under ``content_manager`` (the same for the agent and ``plan``)."""
    return {
        "content_manager": content_manager,
        "ownership_manager": ownership.MANAGER.name,
        "status_manager": STATUS_MANAGERS.get(kind),
        "policy": policy,
    }
