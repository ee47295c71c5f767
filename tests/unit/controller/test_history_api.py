"""The history as an aggregated API (controller/historyapi.py, historyaccess.py): discovery,
one object's history and the list, each answered only to a caller whose SubjectAccessReview
allows ``get``; verdicts remembered briefly. The app is driven over ASGI; the reviews are
answered by a table of grants standing in for the API server's authorizer."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from syncagent.controller.history import HistoryRecorder
from syncagent.controller.historyaccess import ALLOWED_TTL, Access, Target, review
from syncagent.controller.historyapi import BASE, HistoryApi
from syncagent.kube import kinds
from syncagent.rest.resource import Resource
from syncagent.runtime.cache import Change, ChangeType
from syncagent.runtime.frontproxy import Caller, Trust
from syncagent.ssa.historylog import HistoryLog
from tests.unit.support.managedfields import scaled_away

pytestmark = pytest.mark.anyio

ALICE = {"X-Remote-User": "alice", "X-Remote-Group": "dev"}


class Authorizer:
    """Grants ``get`` on the (namespace, resource, name) listed; records each review."""

    def __init__(self, *grants: tuple[str, str, str]) -> None:
        self.grants = set(grants)
        self.reviews: list[dict[str, Any]] = []

    async def __call__(self, resource: Resource, body: dict[str, Any]) -> dict[str, Any]:
        assert resource.plural == "subjectaccessreviews"
        self.reviews.append(body)
        attrs = body["spec"]["resourceAttributes"]
        asked = (attrs.get("namespace", ""), attrs["resource"], attrs.get("name", ""))
        return {**body, "status": {"allowed": asked in self.grants}}


def recorded() -> HistoryRecorder:
    recorder = HistoryRecorder(HistoryLog(start=5.0), clock=lambda: 42.0)
    handle = recorder.handler(kinds.DEPLOYMENT)
    old, new = scaled_away()
    for ns, name in (("ns", "web"), ("ns", "api"), ("other", "web")):
        for before, after in ((None, old), (old, new)):
            handle(Change(ChangeType.MODIFIED, ns, name, before, after))
    return recorder


def client(authorizer: Authorizer, clock: list[float] | None = None) -> httpx2.AsyncClient:
    now = clock or [0.0]
    access = Access(authorizer, clock=lambda: now[0])
    api = HistoryApi(recorded(), access, trust=Trust)
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=api), base_url="http://agent")


ONE = f"{BASE}/namespaces/ns/ownershiphistories/web"
DEPLOY = {"group": "apps", "kind": "Deployment"}


async def test_discovery_needs_no_caller_and_names_the_resource() -> None:
    async with client(Authorizer()) as http:
        listed = (await http.get(BASE)).json()
        group = (await http.get("/apis/history.syncagent.io")).json()
    assert listed["kind"] == "APIResourceList"
    assert [(r["name"], r["namespaced"], r["verbs"]) for r in listed["resources"]] == [
        ("ownershiphistories", True, ["get", "list"])
    ]
    assert group["preferredVersion"]["groupVersion"] == "history.syncagent.io/v1alpha1"


async def test_a_caller_who_may_get_the_object_reads_its_history() -> None:
    authorizer = Authorizer(("ns", "deployments", "web"))
    async with client(authorizer) as http:
        response = await http.get(ONE, params=DEPLOY, headers=ALICE)
    assert response.status_code == 200
    doc = response.json()
    assert (doc["kind"], doc["metadata"], doc["object"]["uid"]) == (
        "OwnershipHistory",
        {"name": "web", "namespace": "ns"},
        "u1",
    )
    assert [t["time"] for t in doc["transitions"]] == [42.0]
    spec = authorizer.reviews[0]["spec"]
    assert (spec["user"], spec["groups"]) == ("alice", ["dev"])
    assert spec["resourceAttributes"] == {
        "verb": "get",
        "group": "apps",
        "resource": "deployments",
        "namespace": "ns",
        "name": "web",
    }


async def test_a_caller_who_may_not_get_it_is_refused_with_a_status_naming_object_and_user() -> (
    None
):
    async with client(Authorizer(("ns", "deployments", "api"))) as http:
        response = await http.get(ONE, params=DEPLOY, headers=ALICE)
        nobody = await http.get(ONE, params=DEPLOY)
    assert response.status_code == 403
    assert response.json()["message"].startswith("Deployment/ns/web: alice may not get deployments")
    assert response.json()["kind"] == "Status"
    assert nobody.status_code == 401


async def test_a_kind_not_recorded_or_not_named_is_said_so() -> None:
    async with client(Authorizer()) as http:
        unknown = await http.get(ONE, params={"kind": "Secret"}, headers=ALICE)
        unnamed = await http.get(ONE, headers=ALICE)
        written = await http.post(ONE, params=DEPLOY, headers=ALICE)
    assert unknown.status_code == 404
    assert "records no history of this kind; it records Deployment.apps" in unknown.text
    assert unnamed.status_code == 400
    assert written.status_code == 405


async def test_the_list_shows_only_the_objects_the_caller_may_get() -> None:
    authorizer = Authorizer(("ns", "deployments", "web"), ("other", "deployments", ""))
    async with client(authorizer) as http:
        everywhere = (await http.get(f"{BASE}/ownershiphistories", headers=ALICE)).json()
        in_ns = (await http.get(f"{BASE}/namespaces/ns/ownershiphistories", headers=ALICE)).json()
    names = lambda doc: [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in doc["items"]]  # noqa: E731
    assert names(everywhere) == [("ns", "web"), ("other", "web")]
    assert names(in_ns) == [("ns", "web")]
    assert everywhere["kind"] == "OwnershipHistoryList"


async def test_a_verdict_is_remembered_for_a_while_then_asked_again() -> None:
    authorizer = Authorizer(("ns", "deployments", "web"))
    clock = [100.0]
    async with client(authorizer, clock) as http:
        for _ in range(3):
            assert (await http.get(ONE, params=DEPLOY, headers=ALICE)).status_code == 200
        assert len(authorizer.reviews) == 1
        authorizer.grants.clear()  # the RoleBinding is deleted
        clock[0] += ALLOWED_TTL + 0.1
        assert (await http.get(ONE, params=DEPLOY, headers=ALICE)).status_code == 403
    assert len(authorizer.reviews) == 2


def test_the_review_carries_uid_and_extra_and_no_name_for_every_object() -> None:
    who = Caller("bob", "u-9", ("g",), {"scopes": ["a"]})
    spec = review(who, Target("", "configmaps", "", ""))["spec"]
    assert spec == {
        "user": "bob",
        "uid": "u-9",
        "groups": ["g"],
        "extra": {"scopes": ["a"]},
        "resourceAttributes": {"verb": "get", "group": "", "resource": "configmaps"},
    }
