"""The stable document of ``syncagent status -o json|yaml`` (docs/status.md)."""

from __future__ import annotations

from typing import Any

from syncagent.cli.status.treenodes import Node

SCHEMA = "syncagent.dynamo.nvidia.com/status-v1"


def document(root: Node, *, namespace: str, generated: str) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "namespace": namespace,
        "generated": generated,
        "ready": root.ready is True,
        "tree": node_dict(root),
    }


def node_dict(node: Node) -> dict[str, Any]:
    return {
        "kind": node.kind,
        "name": node.name,
        "ready": node.ready,
        "state": node.state,
        "reason": node.reason,
        "controller": node.controller,
        "managers": [
            {"manager": m.manager, "operation": m.operation, "subresource": m.subresource}
            for m in node.managers
        ],
        "events": [
            {
                "type": e.type,
                "reason": e.reason,
                "message": e.message,
                "count": e.count,
                "lastSeen": e.last_seen,
            }
            for e in node.events
        ],
        "selects": list(node.selects),
        "children": [node_dict(c) for c in node.children],
    }
