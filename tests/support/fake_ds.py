"""A test helper that plays the DisaggregatedSet controller (no LWS manager runs in this tier).

Per issue 6: each child LeaderWorkerSet it creates gets a controller reference to the DS UID
(no ``blockOwnerDeletion``), the labels of spec/third-party.md §2 (``/slice`` on v0.10.0, where
names also carry the slice), the role's ``metadata.labels``/``annotations`` copied at creation,
and ``spec`` = the role spec with its ``replicas`` (containers with ``resources: {}``, as Go types
write them). It writes the children's ``status.observedGeneration``, ``replicas``,
``updatedReplicas`` and ``readyReplicas``.

The revision is 8 hex chars of sha256 over the role templates as the server returns them, so it
changes exactly when they do. It is NOT upstream's value (upstream hashes Go's struct encoding of
the templates; tests/e2e/test_e2e_fake_ds.py reproduces it for a small DS): nothing may rely on
the value, as the agent does not (spec/third-party.md §2, "treat as opaque").

Rollout, like v0.9.0 with replicas 1 (tests/e2e checks the order on the real controller): a new
revision's children start at 0 and old ones get ``initial-replicas``; once the new ones are ready
at their size the next :meth:`sync` raises them to the role's replicas, then old children go to
0, then old children are deleted. v0.9.0 moves in batches of ``maxSurge``; this fake moves whole
steps. Drive it with :meth:`sync` from a polling loop.

Readiness is per revision, as pods of one template become ready independently of another's:
``ready`` (every revision) or ``ready_revisions`` (only those) say which children report ready
replicas, so "old revision serving, new one not ready" can be staged; ``drain = False`` holds
old children at their size (a rollout stuck before scale-down).
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import orjson

from tests.support.kube import ApiFailure, Kube

DS_PATH = "/apis/disaggregatedset.x-k8s.io/v1/namespaces/{ns}/disaggregatedsets"
LWS = "LeaderWorkerSet"
G = "disaggregatedset.x-k8s.io/"
MANAGER = "fake-ds-controller"
INITIAL_REPLICAS = G + "initial-replicas"


def revision_of(ds: dict[str, Any]) -> str:
    roles = [
        {"name": r["name"], "template": r["spec"]["leaderWorkerTemplate"]}
        for r in ds["spec"]["roles"]
    ]
    return hashlib.sha256(orjson.dumps(roles)).hexdigest()[:8]


def child_name(ds: str, role: str, rev: str, *, slice_index: int = 0, v010: bool = False) -> str:
    return f"{ds}-{slice_index}-{rev}-{role}" if v010 else f"{ds}-{rev}-{role}"


def child_manifest(
    ds: dict[str, Any],
    role: dict[str, Any],
    *,
    slice_index: int,
    rev: str,
    replicas: int | None,
    v010: bool = False,
) -> dict[str, Any]:
    """The child LeaderWorkerSet this fake creates for ``role`` of ``ds`` at revision ``rev``
    (the e2e tier compares it with what the real controller creates)."""
    ds_name, role_name = ds["metadata"]["name"], role["name"]
    labels = {
        "app": f"{ds_name}-{slice_index}-{role_name}" if v010 else f"{ds_name}-{role_name}",
        G + "name": ds_name,
        G + "role": role_name,
        G + "revision": rev,
    }
    if v010:
        labels[G + "slice"] = str(slice_index)
    role_meta = role.get("metadata") or {}
    spec = copy.deepcopy(role["spec"])
    if replicas is not None:
        spec["replicas"] = replicas
    for key in ("leaderTemplate", "workerTemplate"):
        template = spec["leaderWorkerTemplate"].get(key)
        if template is not None:
            meta = template.setdefault("metadata", {})
            meta["labels"] = {**(meta.get("labels") or {}), **labels}
            # The real controller round-trips the spec through Go types, which write an empty
            # resources block on every container (checked in tests/e2e).
            pod = template.get("spec") or {}
            for container in (*pod.get("initContainers", ()), *pod.get("containers", ())):
                container.setdefault("resources", {})
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": LWS,
        "metadata": {
            "name": child_name(ds_name, role_name, rev, slice_index=slice_index, v010=v010),
            "labels": {**(role_meta.get("labels") or {}), **labels},
            "annotations": dict(role_meta.get("annotations") or {}),
            "ownerReferences": [
                {
                    "apiVersion": "disaggregatedset.x-k8s.io/v1",
                    "kind": "DisaggregatedSet",
                    "name": ds_name,
                    "uid": ds["metadata"]["uid"],
                    # v0.9.0 sets no blockOwnerDeletion (checked in tests/e2e)
                    "controller": True,
                }
            ],
        },
        "spec": spec,
    }


class FakeDsController:
    def __init__(self, kube: Kube, namespace: str, *, v010: bool = False) -> None:
        self.kube = kube
        self.ns = namespace
        self.v010 = v010
        self.ready = True  # whether children report ready replicas
        # When set, only children of these revisions report ready replicas.
        self.ready_revisions: set[str] | None = None
        self.drain = True  # whether old children are scaled down and deleted
        self.created: list[str] = []

    # -- reads -------------------------------------------------------------------------------

    def sets(self) -> list[dict[str, Any]]:
        return self.kube.request("GET", DS_PATH.format(ns=self.ns))["items"]

    def children(self, ds: dict[str, Any]) -> list[dict[str, Any]]:
        uid = ds["metadata"]["uid"]
        return [
            c
            for c in self.kube.list(LWS, self.ns)
            if any(
                r.get("controller") and r.get("uid") == uid
                for r in c["metadata"].get("ownerReferences", [])
            )
        ]

    # -- one step ------------------------------------------------------------------------------

    def sync(self) -> None:
        for ds in self.sets():
            if ds["metadata"].get("deletionTimestamp"):
                continue
            self._sync_set(ds)

    def _name(self, ds: str, slice_index: int, rev: str, role: str) -> str:
        return child_name(ds, role, rev, slice_index=slice_index, v010=self.v010)

    def _sync_set(self, ds: dict[str, Any]) -> None:
        rev = revision_of(ds)
        slices = ds["spec"].get("slices", 1) if self.v010 else 1
        children = self.children(ds)
        old = [c for c in children if c["metadata"]["labels"].get(G + "revision") != rev]
        roles = {r["name"]: r for r in ds["spec"]["roles"]}
        new_children = []
        for role in ds["spec"]["roles"]:
            for s in range(slices):
                name = self._name(ds["metadata"]["name"], s, rev, role["name"])
                found = next((c for c in children if c["metadata"]["name"] == name), None)
                if found is None:
                    found = self._create(ds, role, s, rev, name, replicas=0 if old else None)
                new_children.append(found)
        for child in old:
            self._mark_initial_replicas(child)
        self._rollout(roles, new_children, old)
        for child in self.children(ds):
            self._write_status(child)

    def _rollout(
        self,
        roles: dict[str, dict[str, Any]],
        new: list[dict[str, Any]],
        old: list[dict[str, Any]],
    ) -> None:
        def want(child: dict[str, Any]) -> int:
            return int(roles[child["metadata"]["labels"][G + "role"]]["spec"].get("replicas", 1))

        def ready(child: dict[str, Any]) -> bool:
            st = child.get("status") or {}
            return st.get("readyReplicas", 0) == child["spec"].get("replicas", 1)

        if not old:
            for child in new:
                if child["spec"].get("replicas", 1) != want(child):
                    self._scale(child, want(child))
            return
        if any(child["spec"].get("replicas", 1) != want(child) for child in new):
            if all(ready(c) for c in new):
                for child in new:
                    self._scale(child, want(child))
            return
        if not all(ready(c) for c in new) or not self.drain:
            return
        if any(c["spec"].get("replicas", 1) != 0 for c in old):
            for child in old:
                self._scale(child, 0)
            return
        if all((c.get("status") or {}).get("replicas", 0) == 0 for c in old):
            for child in old:
                self.kube.delete(LWS, self.ns, child["metadata"]["name"])

    # -- writes ----------------------------------------------------------------------------------

    def _create(
        self,
        ds: dict[str, Any],
        role: dict[str, Any],
        slice_index: int,
        rev: str,
        name: str,
        *,
        replicas: int | None,
    ) -> dict[str, Any]:
        body = child_manifest(
            ds, role, slice_index=slice_index, rev=rev, replicas=replicas, v010=self.v010
        )
        body["metadata"]["namespace"] = self.ns
        created = self.kube.request(
            "POST", self.kube.path(LWS, self.ns), body, fieldManager=MANAGER
        )
        self.created.append(name)
        return created

    def _mark_initial_replicas(self, child: dict[str, Any]) -> None:
        # v0.9.0 records an old child's replicas when a rollout starts (checked in tests/e2e)
        if INITIAL_REPLICAS in (child["metadata"].get("annotations") or {}):
            return
        replicas = str(child["spec"].get("replicas", 1))
        self.kube.merge(
            LWS,
            self.ns,
            child["metadata"]["name"],
            {"metadata": {"annotations": {INITIAL_REPLICAS: replicas}}},
            manager=MANAGER,
        )

    def _scale(self, child: dict[str, Any], replicas: int) -> None:
        self.kube.merge(
            LWS,
            self.ns,
            child["metadata"]["name"],
            {"spec": {"replicas": replicas}},
            manager=MANAGER,
        )

    def reports_ready(self, child: dict[str, Any]) -> bool:
        if self.ready_revisions is not None:
            return child["metadata"]["labels"].get(G + "revision") in self.ready_revisions
        return self.ready

    def _write_status(self, child: dict[str, Any]) -> None:
        replicas = child["spec"].get("replicas", 1)
        status = {
            "observedGeneration": child["metadata"]["generation"],
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas if self.reports_ready(child) else 0,
        }
        current = child.get("status") or {}
        if all(current.get(k) == v for k, v in status.items()):
            return
        try:
            self.kube.merge(
                LWS,
                self.ns,
                child["metadata"]["name"],
                {"status": status},
                sub="status",
                manager=MANAGER,
            )
        except ApiFailure as err:
            if err.code != 404:
                raise
