"""The read side of a reconcile: live objects from the watch caches, by kind.

Programs read through :class:`Store` and never list from the API server, so a converged
reconcile costs no requests. :func:`environment` turns namespace facts into the renderer's
:class:`~syncagent.render.Environment`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Protocol

import orjson

from syncagent.api.checkpoint import checkpoint_ready
from syncagent.kube import kinds
from syncagent.kube.objects import Body
from syncagent.render import (
    NO_INFRASTRUCTURE,
    AgentAccount,
    Environment,
    Infrastructure,
    PullSecret,
)
from syncagent.render.pullsecrets import registry_hosts

Obj = dict[str, Any]
COMPONENT_POD_LABEL = "nvidia.com/dynamo-component-pod"
DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
REGISTRIES = "registries"  # the key of a pull_secret_summary that replaces the Secret's data


class Store(Protocol):
    """Live objects by kind (``Deployment``, ``DynamoComponentDeployment``...)."""

    def get(self, kind: str, namespace: str, name: str) -> Obj | None: ...

    def list(
        self, kind: str, namespace: str, *, owner: str | None = None, selector: str | None = None
    ) -> list[Obj]:
        """Objects of ``kind`` in ``namespace``; with ``owner`` (a UID) only those whose
        ownerReferences name it (a watch cache answers that from an index); with ``selector``
        (``k=v[,k=v...]``) only those carrying those labels (answered by the watch made with
        that selector, when there is one)."""
        ...


def matches(obj: Mapping[str, Any], selector: str | None) -> bool:
    """Whether ``obj`` carries every label of an equality ``selector`` (``k=v[,k=v...]``)."""
    if not selector:
        return True
    labels = Body(obj).meta.labels
    pairs = [term.split("=", 1) for term in selector.split(",")]
    if any(len(p) != 2 or not p[0] for p in pairs):
        raise ValueError(f"{selector!r}: only equality selectors (k=v,...) are supported here")
    return all(labels.get(k.strip()) == v.strip() for k, v in pairs)


class DictStore:
    """A :class:`Store` over plain dicts (tests, and the controller's cache adapter base)."""

    def __init__(self, objects: Mapping[str, list[Obj]] | None = None) -> None:
        self.objects: dict[str, list[Obj]] = {k: list(v) for k, v in (objects or {}).items()}

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        for obj in self.objects.get(kind, ()):
            meta = Body(obj).meta
            if meta.namespace == namespace and meta.name == name:
                return obj
        return None

    def list(
        self, kind: str, namespace: str, *, owner: str | None = None, selector: str | None = None
    ) -> list[Obj]:
        return [
            o
            for o in self.objects.get(kind, ())
            if Body(o).meta.namespace == namespace
            and (owner is None or Body(o).owned_by(owner))
            and matches(o, selector)
        ]


def pull_secret(secret: Mapping[str, Any]) -> PullSecret | None:
    """A ``kubernetes.io/dockerconfigjson`` Secret (or its :func:`pull_secret_summary`) as the
    renderer needs it."""
    if secret.get("type") != DOCKER_CONFIG_JSON:
        return None
    if REGISTRIES in secret:
        found = secret[REGISTRIES]
        return None if found is None else PullSecret(Body(secret).meta.name, frozenset(found))
    raw = (secret.get("data") or {}).get(".dockerconfigjson") or ""
    try:
        auths = orjson.loads(base64.b64decode(raw)).get("auths") or {}
    except (binascii.Error, orjson.JSONDecodeError, AttributeError, ValueError):
        return None
    return PullSecret(name=secret["metadata"]["name"], registries=registry_hosts(auths))


def pull_secret_summary(secret: Obj) -> Obj:
    """What the pull-secret cache keeps of a Secret: its identity, type and the registry hosts
    it covers (None: not a usable pull secret), never its data."""
    found = pull_secret(secret)
    meta = secret.get("metadata") or {}
    return {
        "metadata": {
            k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion") if k in meta
        },
        "type": secret.get("type"),
        REGISTRIES: None if found is None else sorted(found.registries),
    }


def environment(
    store: Store,
    namespace: str,
    *,
    discovery_backend: str,
    checkpoints: Mapping[str, bool] | None = None,
    agent_account: AgentAccount | None = None,
    infrastructure: Infrastructure = NO_INFRASTRUCTURE,
) -> Environment:
    secrets = [pull_secret(s) for s in store.list("Secret", namespace)]
    accounts = sorted(
        Body(a).meta.name
        for a in store.list("ServiceAccount", namespace, selector=f"{COMPONENT_POD_LABEL}=true")
    )
    return Environment(
        discovery_backend=discovery_backend,
        pull_secrets=tuple(sorted((s for s in secrets if s), key=lambda s: s.name)),
        component_pod_service_accounts=tuple(accounts),
        checkpoint_ready=dict(checkpoints or {}),
        agent_account=agent_account,
        infrastructure=infrastructure,
    )


def checkpoint_readiness(store: Store, namespace: str, names: list[str]) -> dict[str, bool]:
    """Ready per DynamoCheckpoint name (missing object or API = not ready)."""
    out = {}
    for name in names:
        out[name] = checkpoint_ready(store.get(kinds.CHECKPOINT.kind, namespace, name))
    return out


class CacheStore:
    """A :class:`Store` over watch caches (anything with ``get(ns, name)`` and ``list(ns)``).

    One kind may have several caches (Services of components and model Services are watched
    with different label selectors); the first that holds an object answers. A list by a
    selector some cache of the kind was watched with reads that cache only: every object
    carrying those labels is in it.
    """

    def __init__(self) -> None:
        self._caches: dict[str, list[Any]] = {}
        self._selected: dict[tuple[str, str], list[Any]] = {}

    def add(self, kind: str, cache: Any, *, selector: str | None = None) -> None:
        """Register ``cache`` for ``kind``; ``selector``: the label selector it watches with."""
        self._caches.setdefault(kind, []).append(cache)
        if selector:
            self._selected.setdefault((kind, selector), []).append(cache)

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        for cache in self._caches.get(kind, ()):
            obj = cache.get(namespace, name)
            if obj is not None:
                return obj
        return None

    def list(
        self, kind: str, namespace: str, *, owner: str | None = None, selector: str | None = None
    ) -> list[Obj]:
        caches = self._selected.get((kind, selector or ""), self._caches.get(kind, ()))
        seen: dict[str, Obj] = {}
        for cache in caches:
            for obj in cache.list(namespace, owner=owner):
                if matches(obj, selector):
                    seen.setdefault(Body(obj).meta.name, obj)
        return list(seen.values())
