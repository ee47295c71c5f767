"""The two kinds of 404: one object missing, or the whole kind no longer served.

Only the classification of the API server's answers is checked here, on ``httpx2_mock``
(``FakeApi``); that a write finding its kind gone re-routes graphs through a discovery refresh is proven against a real API server (tests/cluster/test_live_rediscovery.py).
The bodies are the API server's: a missing object's Status names it in ``details``
(apimachinery ``NewNotFound``); a path of a served group whose resource is gone answers the
empty-details Status of ``NotFoundHandler``; a group no longer served answers plain text.
"""

from __future__ import annotations

import httpx2
import orjson
import pytest
from lightkube.generic_resource import create_namespaced_resource

from syncagent.kube.objects import ObjectRef
from syncagent.ssa import ApplyOptions, Engine, NotFoundError, NotServedError
from syncagent.ssa.api import KubeApi
from syncagent.ssa.errors import resource_not_served
from syncagent.ssa.resources import builtin
from tests.support.fakeapi import FakeApi

pytestmark = pytest.mark.anyio

GV = "/apis/disaggregatedset.x-k8s.io/v1"
DS = ObjectRef("disaggregatedset.x-k8s.io/v1", "DisaggregatedSet", "g", "ns")
OBJECT_MISSING = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": 'disaggregatedsets.disaggregatedset.x-k8s.io "g" not found',
    "reason": "NotFound",
    "details": {"name": "g", "group": "disaggregatedset.x-k8s.io", "kind": "disaggregatedsets"},
    "code": 404,
}
RESOURCE_MISSING = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "the server could not find the requested resource",
    "reason": "NotFound",
    "details": {},
    "code": 404,
}
GROUP_MISSING = b"404 page not found\n"
SERVED = {
    "kind": "APIResourceList",
    "groupVersion": "disaggregatedset.x-k8s.io/v1",
    "resources": [{"name": "disaggregatedsets", "kind": "DisaggregatedSet", "namespaced": True}],
}


def test_a_missing_object_is_not_a_missing_kind():
    assert not resource_not_served(404, OBJECT_MISSING)
    namespace_missing = {**OBJECT_MISSING, "details": {"name": "ns", "kind": "namespaces"}}
    assert not resource_not_served(404, namespace_missing)


def test_a_missing_resource_or_group_is_a_missing_kind():
    assert resource_not_served(404, RESOURCE_MISSING)
    assert resource_not_served(404, {"message": GROUP_MISSING.decode()})
    assert not resource_not_served(403, RESOURCE_MISSING)


class Server(FakeApi):
    """Serves the DS group's discovery; answers every other request with ``answer``."""

    def __init__(self, answer: httpx2.Response) -> None:
        super().__init__()
        self.reply = answer
        self.discoveries = 0

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.path == GV:
            self.discoveries += 1
            return httpx2.Response(200, json=SERVED)
        return self.reply


def _api(answer: httpx2.Response) -> tuple[KubeApi, Server, list[str]]:
    server = Server(answer)
    http = server.client()
    told: list[str] = []
    return KubeApi(http, on_not_served=lambda ref: told.append(ref.subject)), server, told


async def _patch(api: KubeApi) -> None:
    await api.patch(DS, {"spec": {}}, content_type="application/merge-patch+json")


async def test_a_write_finding_its_kind_gone_tells_and_looks_the_kind_up_again():
    for answer in (
        httpx2.Response(404, json=RESOURCE_MISSING),
        httpx2.Response(404, content=GROUP_MISSING),
    ):
        api, server, told = _api(answer)
        with pytest.raises(NotServedError) as err:
            await _patch(api)
        assert str(err.value).startswith("DisaggregatedSet/ns/g: the server does not serve")
        assert told == ["DisaggregatedSet/ns/g"]
        await api.get(DS)  # absent, and said so again
        assert told == ["DisaggregatedSet/ns/g"] * 2
        assert server.discoveries == 2  # the kind was looked up again after the first 404


async def test_a_write_to_a_missing_object_tells_nobody():
    api, server, told = _api(httpx2.Response(404, content=orjson.dumps(OBJECT_MISSING)))
    with pytest.raises(NotFoundError):
        await _patch(api)
    assert await api.get(DS) is None
    assert told == []
    assert server.discoveries == 1


async def test_no_matches_for_kind_on_a_write_tells_a_lookup_does_not():
    api, _, told = _api(httpx2.Response(200, json={}))
    gone = ObjectRef("disaggregatedset.x-k8s.io/v1", "DisaggregatedSetRoleScaler", "g", "ns")
    with pytest.raises(NotServedError):
        await api.resolve(gone)  # a lookup alone is not a failed request
    assert told == []
    with pytest.raises(NotServedError):
        await api.apply(gone, {}, manager="m", force=False, dry_run=True)
    assert told == ["DisaggregatedSetRoleScaler/ns/g"]


async def test_the_engine_tells_of_an_apply_whose_kind_is_not_served():
    server = Server(httpx2.Response(200, json={}))
    http = server.client()
    told: list[str] = []
    engine = Engine(http, on_not_served=lambda ref: told.append(ref.subject))
    desired = {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSetRoleScaler",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {},
    }
    with pytest.raises(NotServedError):
        await engine.apply(desired, ApplyOptions(manager="m"))
    assert told == ["DisaggregatedSetRoleScaler/ns/g"]
    assert (
        await engine.list("disaggregatedset.x-k8s.io/v1", "DisaggregatedSetRoleScaler", "ns") == []
    )
    assert told == ["DisaggregatedSetRoleScaler/ns/g"]  # a list of a kind not served asks nothing


def test_a_kind_registered_in_process_is_still_looked_up_on_the_server():
    # A generic resource registered for a CRD (as the Helm tests do) must not pass for a
    # built-in model: the kind would never be discovered again after its CRD went away.
    create_namespaced_resource(GV.split("/")[2], "v1", "DisaggregatedSet", "disaggregatedsets")
    assert builtin(DS.api_version, DS.kind) is None
    assert builtin("apps/v1", "Deployment") is not None
