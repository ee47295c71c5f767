"""Writers whose Update entries we take over before adopting or handing over an object.

The upstream Dynamo operator is a controller-runtime binary named ``manager``; its writes show
as Update entries of manager ``manager`` (controller-runtime's default field manager is the
binary name). ``kubectl`` writes (create, edit, replace, client-side apply, label, annotate...)
are covered by the ``kubectl`` prefix of :data:`syncagent.ssa.takeover.KUBECTL`.
"""

from __future__ import annotations

from typing import Any

from fieldmanagers import component_status, ownership
from syncagent.ssa.takeover import KUBECTL, TakeoverPolicy

UPSTREAM_OPERATOR_MANAGERS: tuple[str, ...] = ("manager", "dynamo-operator")

POLICY: TakeoverPolicy = KUBECTL.with_managers(*UPSTREAM_OPERATOR_MANAGERS)

# Status subresources we write, by kind: upstream status entries move there on takeover.
STATUS_MANAGERS: dict[str, str] = {
    "DynamoComponentDeployment": component_status.MANAGER.name,
}


def targets_for(kind: str, content_manager: str) -> dict[str, Any]:
    """The keyword arguments of :func:`syncagent.ssa.takeover.take_over` for an object of
    ``kind`` written under ``content_manager`` (the same for the agent and ``plan``)."""
    return {
        "content_manager": content_manager,
        "ownership_manager": ownership.MANAGER.name,
        "status_manager": STATUS_MANAGERS.get(kind),
        "policy": POLICY,
    }
