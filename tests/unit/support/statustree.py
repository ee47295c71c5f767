"""Live objects as ``syncagent status`` reads them, for its pure tests (no tests here)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def live_object(kind: str, name: str, *, owner: dict | None = None, **rest: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{kind}-{name}"}
    meta["generation"] = 1
    meta["managedFields"] = [{"manager": f"m-{name}", "operation": "Apply"}]
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    return {"apiVersion": "v1", "kind": kind, "metadata": meta, **rest}


def conditions(type_: str, status: str, reason: str = "R", message: str = "") -> dict[str, Any]:
    return {"conditions": [{"type": type_, "status": status, "reason": reason, "message": message}]}
