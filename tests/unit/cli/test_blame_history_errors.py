"""``syncagent blame --history``: where it reads, and what each refusal tells the user to do."""

from __future__ import annotations

import httpx2
import orjson

from syncagent.cli.commands.blame_history import path_of, refusal

SUBJECT = "Deployment/ns/web"


def status(code: int, message: str) -> httpx2.Response:
    return httpx2.Response(code, content=orjson.dumps({"kind": "Status", "message": message}))


def test_the_path_names_the_objects_namespace_group_and_kind() -> None:
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns"},
    }
    path, query = path_of(obj)
    assert path == "/apis/history.syncagent.io/v1alpha1/namespaces/ns/ownershiphistories/web"
    assert query == {"group": "apps", "kind": "Deployment"}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    assert path_of(node) == (
        "/apis/history.syncagent.io/v1alpha1/ownershiphistories/n1",
        {"group": "", "kind": "Node"},
    )


def test_each_refusal_says_what_is_missing() -> None:
    rbac = 'ownershiphistories.history.syncagent.io "web" is forbidden: User "bob" cannot get'
    assert "the view ClusterRole has it" in refusal(status(403, rbac), SUBJECT)
    agent = "Deployment/ns/web: bob may not get deployments 'web' in namespace ns; …"
    assert refusal(status(403, agent), SUBJECT) == f"HTTP 403 {agent}"
    missing = refusal(status(404, "the server could not find the requested resource"), SUBJECT)
    assert "no APIService v1alpha1.history.syncagent.io answers" in missing
    assert "history.enabled" in missing
    kind = "Deployment/ns/web: the agent records no history of this kind; it records …"
    assert refusal(status(404, kind), SUBJECT) == f"HTTP 404 {kind}"
    assert "not available" in refusal(status(503, "service unavailable"), SUBJECT)
    assert "does not know you" in refusal(status(401, "Unauthorized"), SUBJECT)
