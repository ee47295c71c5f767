"""Every assumption of the cluster tier's fake DS controller (tests/support/fake_ds.py),
checked once against the real DisaggregatedSet controller of LWS v0.9.0: child names, labels,
owner reference, what is copied from the role, the revision's behaviour, the rollout order.

The DS here is written directly (no agent), with role metadata and template labels of its own,
so that what the controller copies is visible.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from typing import Any

import httpx2
import orjson

from tests.e2e.support.observe import DEADLINE, DS_REVISION, DS_ROLE, ds_children
from tests.support.fake_ds import child_manifest, child_name
from tests.support.kube import DS, ApiFailure, Kube
from tests.support.polling import eventually

NAME = "fakecheck"
INITIAL_REPLICAS = "disaggregatedset.x-k8s.io/initial-replicas"


def _role(name: str, image: str) -> dict[str, Any]:
    template = {
        "metadata": {"labels": {"tier": name}, "annotations": {"note": "template"}},
        "spec": {"containers": [{"name": "main", "image": image}]},
    }
    return {
        "name": name,
        "metadata": {"labels": {"team": "ml"}, "annotations": {"owner": "alice"}},
        "spec": {
            "replicas": 1,
            "startupPolicy": "LeaderCreated",
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {"maxSurge": 1, "maxUnavailable": 0, "partition": 0},
            },
            "networkConfig": {"subdomainPolicy": "Shared"},
            "leaderWorkerTemplate": {
                "size": 2,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": copy.deepcopy(template),
                "workerTemplate": template,
            },
        },
    }


def _ds(ns: str, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": DS,
        "metadata": {"name": NAME, "namespace": ns},
        "spec": {"roles": [_role("prefill", image), _role("decode", image)]},
    }


def _ready(child: dict[str, Any]) -> bool:
    status = child.get("status") or {}
    return status.get("readyReplicas", 0) == child["spec"].get("replicas", 1) == 1


class _Changes:
    """Watches LeaderWorkerSets and keeps, in order, each child's creation (with its replicas),
    each change of ``spec.replicas`` and each deletion."""

    def __init__(self, kube: Kube, ns: str) -> None:
        self.kube, self.ns, self.log = kube, ns, []
        listed = kube.request("GET", kube.path("LeaderWorkerSet", ns))
        self.last = {c["metadata"]["name"]: c for c in listed["items"]}
        self._replicas = {n: c["spec"].get("replicas", 1) for n, c in self.last.items()}
        rv = listed["metadata"]["resourceVersion"]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(rv,), daemon=True)
        self._thread.start()

    def _run(self, rv: str) -> None:
        own = self.kube.separate()
        try:
            while not self._stop.is_set():
                params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "5"}
                try:
                    with own.http.stream(
                        "GET", own.path("LeaderWorkerSet", self.ns), params=params
                    ) as resp:
                        for line in resp.iter_lines():
                            if line:
                                rv = self._record(orjson.loads(line)) or rv
                except httpx2.TransportError:
                    self._stop.wait(0.2)  # resume from the last resourceVersion seen
        finally:
            own.http.close()

    def _record(self, event: dict[str, Any]) -> str:
        obj = event["object"]
        name, replicas = obj["metadata"]["name"], obj.get("spec", {}).get("replicas", 1)
        self.last[name] = obj
        if event["type"] == "ADDED":
            self.log.append(("created", name, replicas))
        elif event["type"] == "DELETED":
            self.log.append(("deleted", name, None))
        elif self._replicas.get(name) != replicas:
            self.log.append(("scaled", name, replicas))
        self._replicas[name] = replicas
        return str(obj["metadata"]["resourceVersion"])

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


def test_fake_ds_controller_assumptions_hold_on_the_real_controller(kube, namespace):
    created = kube.create(_ds(namespace, "engine:1"))
    eventually(
        lambda: (
            len(ds_children(kube, namespace, created)) == 2
            and all(_ready(c) for c in ds_children(kube, namespace, created))
        ),
        deadline=DEADLINE,
        what="two ready children",
    )
    ds = kube.get(DS, namespace, NAME)
    children = {c["metadata"]["labels"][DS_ROLE]: c for c in ds_children(kube, namespace, ds)}
    (rev,) = {c["metadata"]["labels"][DS_REVISION] for c in children.values()}
    # one revision for all roles: upstream's hash of Go's encoding of the role templates, which
    # the fake does not reproduce (its own hash is opaque to the agent as the real one is)
    assert rev == _go_revision("engine:1")
    for role in ds["spec"]["roles"]:
        real = children[role["name"]]
        fake = child_manifest(ds, role, slice_index=0, rev=rev, replicas=1)
        assert real["metadata"]["name"] == child_name(NAME, role["name"], rev)
        assert real["metadata"]["labels"] == fake["metadata"]["labels"]
        assert real["metadata"]["annotations"] == fake["metadata"]["annotations"]
        assert real["metadata"]["ownerReferences"] == fake["metadata"]["ownerReferences"]
        assert real["spec"] == fake["spec"]
        assert not real["metadata"].get("finalizers")

    changes = _Changes(kube, namespace)
    try:
        # role metadata is not in the revision (third-party.md §2 acceptance 3): the edit below
        # makes no children; the log of changes would show them
        def retag(d: dict[str, Any]) -> None:
            d["spec"]["roles"][0]["metadata"]["annotations"]["owner"] = "bob"

        _edit(kube, namespace, retag)
        # a template change: a new revision for every role, rolled surge first in lockstep

        def new_image(d: dict[str, Any]) -> None:
            for role in d["spec"]["roles"]:
                for key in ("leaderTemplate", "workerTemplate"):
                    role["spec"]["leaderWorkerTemplate"][key]["spec"]["containers"][0]["image"] = (
                        "engine:2"
                    )

        _edit(kube, namespace, new_image)
        old = {c["metadata"]["name"] for c in children.values()}
        eventually(
            lambda: (
                len(kids := ds_children(kube, namespace, ds)) == 2
                and not ({c["metadata"]["name"] for c in kids} & old)
                and all(_ready(c) for c in kids)
            ),
            deadline=DEADLINE,
            what="the new revision alone, ready",
        )
    finally:
        changes.stop()
    new_children = ds_children(kube, namespace, ds)
    (new_rev,) = {c["metadata"]["labels"][DS_REVISION] for c in new_children}
    assert new_rev == _go_revision("engine:2")
    # children copy role metadata only at creation: the new ones carry the edit
    assert {c["metadata"]["annotations"]["owner"] for c in new_children} == {"bob", "alice"}
    new = {c["metadata"]["name"] for c in new_children}
    # the old children were marked with their replicas when the rollout started
    for name in old:
        assert changes.last[name]["metadata"]["annotations"][INITIAL_REPLICAS] == "1"
    phases = _phases(changes.log, old=old, new=new)
    assert phases == [
        ("created", "new", 0),
        ("scaled", "new", 1),
        ("scaled", "old", 0),
        ("deleted", "old", None),
    ], changes.log


def _go_revision(image: str) -> str:
    """Upstream's ComputeRevision (pkg/utils/disaggregatedset) for this test's DS: the first 8
    hex characters of sha256 over encoding/json of ``[{name, template}]``, which writes struct
    fields in declaration order (leaderTemplate, workerTemplate, size, restartPolicy; metadata
    labels before annotations; a container's name, image, resources) and a typed container's
    empty ``resources``. Replicas, rollout strategy and role metadata are not in it."""
    roles = []
    for name in ("prefill", "decode"):
        template = {
            "metadata": {"labels": {"tier": name}, "annotations": {"note": "template"}},
            "spec": {"containers": [{"name": "main", "image": image, "resources": {}}]},
        }
        roles.append(
            {
                "name": name,
                "template": {
                    "leaderTemplate": template,
                    "workerTemplate": template,
                    "size": 2,
                    "restartPolicy": "RecreateGroupOnPodRestart",
                },
            }
        )
    encoded = json.dumps(roles, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()[:8]


def _edit(kube: Kube, ns: str, change: Any) -> None:
    for _ in range(10):
        ds = kube.get(DS, ns, NAME)
        change(ds)
        try:
            kube.update(ds)
            return
        except ApiFailure as err:  # a conflicting write by the controller: read again
            if err.code != 409:
                raise
    raise AssertionError("could not update the DS")


def _phases(
    log: list[tuple[str, str, int | None]], *, old: set[str], new: set[str]
) -> list[tuple[str, str, int | None]]:
    """The rollout as steps over both roles: a step is complete once every child of its
    generation (old or new) has taken it; the roles move in lockstep."""
    steps: list[tuple[str, str, int | None]] = []
    for action, name, replicas in log:
        generation = "new" if name in new else "old" if name in old else "other"
        step = (action, generation, replicas)
        if not steps or steps[-1] != step:
            steps.append(step)
    return steps
