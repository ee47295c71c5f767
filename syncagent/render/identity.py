"""The discovery ServiceAccount, Role and RoleBinding of a graph (docs/rendering.md §4)."""

from __future__ import annotations

from typing import Any

from fieldmanagers import identity
from syncagent.kube.objects import OwnerRef
from syncagent.render import labels as L
from syncagent.render.model import Rendered, build
from syncagent.render.naming import (
    discovery_role,
    discovery_role_binding,
    discovery_service_account,
    label_value_with_hash,
)

RBAC = "rbac.authorization.k8s.io"
_READ = ["get", "list", "watch"]
RULES = [
    {"apiGroups": [""], "resources": ["endpoints", "pods"], "verbs": _READ},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": _READ},
    {
        "apiGroups": ["nvidia.com"],
        "resources": ["dynamoworkermetadatas"],
        # upstream's order (a reordered list is a change to the Role on a takeover)
        "verbs": ["create", "get", "list", "watch", "update", "patch", "delete"],
    },
]


def discovery_identity(parent: str, *, namespace: str, owner: OwnerRef) -> list[Rendered]:
    """``[ServiceAccount, Role, RoleBinding]`` for the pods of ``parent`` (a DGD or a DCD)."""
    account = discovery_service_account(parent)
    role = discovery_role(parent)
    labels = {
        L.APP_MANAGED_BY: L.MANAGED_BY_OPERATOR,
        L.APP_COMPONENT: "rbac",
        L.APP_NAME: label_value_with_hash(account),
    }

    def one(api_version: str, kind: str, name: str, **top: Any) -> Rendered:
        return build(
            manager=identity.MANAGER.name,
            api_version=api_version,
            kind=kind,
            name=name,
            namespace=namespace,
            labels=labels,
            owner=owner,
            **top,
        )

    return [
        one("v1", "ServiceAccount", account),
        one(
            f"{RBAC}/v1",
            "Role",
            role,
            rules=[{k: list(v) for k, v in rule.items()} for rule in RULES],
        ),
        one(
            f"{RBAC}/v1",
            "RoleBinding",
            discovery_role_binding(parent),
            subjects=[{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
            roleRef={"apiGroup": RBAC, "kind": "Role", "name": role},
        ),
    ]
