import httpx2
import pytest

from syncagent.ssa.counter import RequestCounter, classify
from tests.support.fakeapi import FakeApi

BASE = "https://k8s.test"


@pytest.mark.parametrize(
    ("method", "path", "headers", "verb", "dry_run"),
    [
        ("GET", "/apis/apps/v1/namespaces/ns/deployments/web", {}, "get", False),
        ("GET", "/apis/apps/v1/namespaces/ns/deployments", {}, "list", False),
        ("GET", "/apis/apps/v1/namespaces/ns/deployments?watch=true", {}, "watch", False),
        ("GET", "/api/v1/namespaces/ns", {}, "get", False),
        ("GET", "/apis/x.io/v1", {}, "discovery", False),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/ns/deployments/web?dryRun=All",
            {"content-type": "application/apply-patch+yaml"},
            "apply",
            True,
        ),
        (
            "PATCH",
            "/apis/x.io/v1/namespaces/ns/things/a/status",
            {"content-type": "application/apply-patch+yaml"},
            "apply",
            False,
        ),
        (
            "PATCH",
            "/api/v1/namespaces/ns/services/s",
            {"content-type": "application/merge-patch+json"},
            "patch",
            False,
        ),
        ("PUT", "/apis/apps/v1/namespaces/ns/deployments/web", {}, "update", False),
        ("POST", "/apis/apps/v1/namespaces/ns/deployments", {}, "create", False),
        ("DELETE", "/api/v1/namespaces/ns/services/s", {}, "delete", False),
    ],
)
def test_classify(method, path, headers, verb, dry_run):
    key = classify(httpx2.Request(method, BASE + path, headers=headers))
    assert (key.verb, key.dry_run) == (verb, dry_run)


@pytest.mark.anyio
async def test_attached_counter_counts_every_request():
    http = FakeApi(lambda request: httpx2.Response(200, json={})).client()
    counter = RequestCounter().attach(http)
    counter.attach(http)  # idempotent
    await http.get("/api/v1/namespaces/ns/configmaps/a")
    before = counter.snapshot()
    await http.patch(
        "/api/v1/namespaces/ns/configmaps/a",
        params={"dryRun": "All"},
        headers={"content-type": "application/apply-patch+yaml"},
        content=b"{}",
    )
    await http.patch(
        "/api/v1/namespaces/ns/configmaps/a",
        headers={"content-type": "application/apply-patch+yaml"},
        content=b"{}",
    )
    assert counter.total == 3
    assert counter.count("get") == 1
    assert counter.count("apply", dry_run=True) == 1
    assert counter.writes == 1
    assert counter.by_verb() == {"apply": 1, "apply(dry-run)": 1, "get": 1}
    assert counter.since(before).total == 2
    counter.reset()
    assert counter.total == 0
