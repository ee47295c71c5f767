"""What an identity did, read from the test control plane's audit log, and what RBAC grants it
(no tests here). ``tests/cluster/test_helm_rights.py`` compares the two."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from lightkube import Client
from lightkube.resources.rbac_authorization_v1 import (
    ClusterRole,
    ClusterRoleBinding,
    Role,
    RoleBinding,
)

ANY_NAMESPACE = "*"


@dataclass(frozen=True, order=True)
class Right:
    """One (verb, group, resource, namespace); ``resource`` carries its subresource
    (``deployments/scale``); ``namespace`` is ``*`` for a cluster-wide grant."""

    verb: str
    group: str
    resource: str
    namespace: str

    def __str__(self) -> str:
        group = self.group or "core"
        return f"{self.verb} {group}/{self.resource} in {self.namespace or '(cluster)'}"


def audit_offset(log: Path) -> int:
    """Where the log ends now: a later ``used_rights`` reads only what came after."""
    return log.stat().st_size if log.exists() else 0


def used_rights(log: Path, *, user: str, offset: int = 0) -> set[Right]:
    """Every resource request ``user`` sent after ``offset``. A server-side apply that created
    its object (PATCH answered 201) was authorised as patch and as create: both count."""
    rights: set[Right] = set()
    for event in _events(log, offset):
        ref = event.get("objectRef")
        if event["user"]["username"] != user or not ref or "resource" not in ref:
            continue
        resource = ref["resource"] + (f"/{ref['subresource']}" if ref.get("subresource") else "")
        where = (ref.get("apiGroup", ""), resource, ref.get("namespace", ""))
        rights.add(Right(event["verb"], *where))
        if event["verb"] == "patch" and event.get("responseStatus", {}).get("code") == 201:
            rights.add(Right("create", *where))
    return rights


@dataclass(frozen=True)
class Sent:
    """One request on a named object, as the audit log has it."""

    verb: str
    group: str
    resource: str
    namespace: str
    name: str
    code: int


def sent(log: Path, *, user: str, offset: int = 0) -> list[Sent]:
    """The requests ``user`` sent on named objects after ``offset``, in the order logged."""
    out = []
    for event in _events(log, offset):
        ref = event.get("objectRef") or {}
        if event["user"]["username"] != user or not ref.get("name") or "resource" not in ref:
            continue
        where = (ref.get("apiGroup", ""), ref["resource"], ref.get("namespace", ""), ref["name"])
        out.append(Sent(event["verb"], *where, event.get("responseStatus", {}).get("code", 0)))
    return out


def denied(log: Path, *, user: str, offset: int = 0) -> list[str]:
    """The requests of ``user`` the API server refused with 403, as ``VERB URI`` lines."""
    return [
        f"{e['verb']} {e['requestURI']}"
        for e in _events(log, offset)
        if e["user"]["username"] == user and e.get("responseStatus", {}).get("code") == 403
    ]


def _events(log: Path, offset: int) -> Iterator[dict[str, Any]]:
    with log.open("rb") as f:
        f.seek(offset)
        for line in f:
            if line.strip():
                yield orjson.loads(line)


def granted_rights(client: Client, *, namespace: str, account: str) -> set[Right]:
    """Every right RBAC gives the ServiceAccount, expanded to single verbs and resources."""
    subject = {"kind": "ServiceAccount", "name": account, "namespace": namespace}
    rights: set[Right] = set()
    for binding in client.list(ClusterRoleBinding):
        if _binds(binding.subjects, subject):
            rules = client.get(ClusterRole, binding.roleRef.name).rules
            rights |= set(_expand(rules or [], ANY_NAMESPACE))
    for binding in client.list(RoleBinding, namespace="*"):
        if _binds(binding.subjects, subject):
            role_ns = binding.metadata.namespace
            if binding.roleRef.kind == "ClusterRole":
                rules = client.get(ClusterRole, binding.roleRef.name).rules
            else:
                rules = client.get(Role, binding.roleRef.name, namespace=role_ns).rules
            rights |= set(_expand(rules or [], role_ns))
    return rights


def _binds(subjects: Iterable[Any] | None, subject: dict[str, str]) -> bool:
    return any(
        (s.kind, s.name, s.namespace) == (subject["kind"], subject["name"], subject["namespace"])
        for s in subjects or []
    )


def _expand(rules: Iterable[Any], namespace: str) -> Iterator[Right]:
    for rule in rules:
        for group in rule.apiGroups or []:
            for resource in rule.resources or []:
                for verb in rule.verbs:
                    yield Right(verb, group, resource, namespace)


def covers(grant: Right, used: Right) -> bool:
    return (grant.verb, grant.group, grant.resource) == (used.verb, used.group, used.resource) and (
        grant.namespace in (ANY_NAMESPACE, used.namespace)
    )
