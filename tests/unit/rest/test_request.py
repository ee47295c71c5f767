"""The request builder (syncagent/rest/request.py): pure, so every URL and write option is checked
here; that the server accepts what it builds is proven by the cluster tier (every engine, watch,
discovery, lease and event request goes through it)."""

from __future__ import annotations

import orjson
import pytest

from syncagent.kube.kinds import CONFIG_MAP, DEPLOYMENT, DGD, SERVICE
from syncagent.rest.request import (
    APPLY,
    JSON,
    MERGE_PATCH,
    Addressed,
    addressed,
    build,
    discovery,
    path,
)
from syncagent.rest.resource import Resource

NODE = Resource.of("v1", "Node", "nodes", namespaced=False)
CRD = Resource.of(
    "apiextensions.k8s.io/v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
    namespaced=False,
)


@pytest.mark.parametrize(
    ("resource", "namespace", "name", "subresource", "expected"),
    [
        (CONFIG_MAP, "ns", "", "", "/api/v1/namespaces/ns/configmaps"),
        (CONFIG_MAP, "ns", "a", "", "/api/v1/namespaces/ns/configmaps/a"),
        (CONFIG_MAP, "", "", "", "/api/v1/configmaps"),  # every namespace
        (DEPLOYMENT, "ns", "web", "scale", "/apis/apps/v1/namespaces/ns/deployments/web/scale"),
        (
            DGD,
            "ns",
            "g",
            "status",
            "/apis/nvidia.com/v1beta1/namespaces/ns/dynamographdeployments/g/status",
        ),
        (NODE, "", "n1", "", "/api/v1/nodes/n1"),
        (NODE, "ignored", "n1", "", "/api/v1/nodes/n1"),  # a cluster-scoped one has none
        (CRD, "", "", "", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"),
        (
            SERVICE,
            "ns",
            "s:80",
            "proxy/history",
            "/api/v1/namespaces/ns/services/s:80/proxy/history",
        ),
    ],
)
def test_paths_of_core_and_grouped_namespaced_and_cluster_resources(
    resource, namespace, name, subresource, expected
):
    assert path(resource, namespace=namespace, name=name, subresource=subresource) == expected


@pytest.mark.parametrize(
    ("verb", "method"),
    [("get", "GET"), ("update", "PUT"), ("delete", "DELETE"), ("list", "GET"), ("create", "POST")],
)
def test_each_verb_has_its_method(verb, method):
    name = "" if verb in ("list", "create") else "a"
    request = build(CONFIG_MAP, verb, namespace="ns", name=name)
    assert request.method == method
    assert request.headers == {"Accept": JSON}
    assert request.content is None
    assert request.params == {}


def test_list_and_watch_carry_their_params():
    listed = build(
        DEPLOYMENT, "list", namespace="ns", params={"labelSelector": "a=1", "limit": "5"}
    )
    assert (listed.method, listed.path) == ("GET", "/apis/apps/v1/namespaces/ns/deployments")
    assert listed.params == {"labelSelector": "a=1", "limit": "5"}
    watched = build(DEPLOYMENT, "watch", params={"resourceVersion": "9"})
    assert (watched.method, watched.path) == ("GET", "/apis/apps/v1/deployments")
    assert watched.params == {"resourceVersion": "9", "watch": "true"}


def test_apply_is_a_patch_of_the_apply_content_type_with_its_options():
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
    request = build(
        CONFIG_MAP,
        "apply",
        namespace="ns",
        name="a",
        body=body,
        field_manager="syncagent",
        force=True,
        dry_run=True,
    )
    assert (request.method, request.path) == ("PATCH", "/api/v1/namespaces/ns/configmaps/a")
    assert request.headers["Content-Type"] == APPLY
    assert request.params == {"fieldManager": "syncagent", "force": "true", "dryRun": "All"}
    assert orjson.loads(request.content or b"") == body


def test_apply_without_force_or_dry_run_sends_only_the_field_manager():
    request = build(
        DGD, "apply", namespace="ns", name="g", subresource="status", body={}, field_manager="m"
    )
    assert request.path.endswith("/dynamographdeployments/g/status")
    assert request.params == {"fieldManager": "m"}


def test_writes_carry_json_the_field_manager_and_dry_run():
    created = build(
        SERVICE, "create", namespace="ns", body={"a": 1}, field_manager="m", dry_run=True
    )
    assert (created.method, created.path) == ("POST", "/api/v1/namespaces/ns/services")
    assert created.headers == {"Accept": JSON, "Content-Type": JSON}
    assert created.params == {"fieldManager": "m", "dryRun": "All"}
    assert created.content == b'{"a":1}'
    patched = build(
        SERVICE, "patch", namespace="ns", name="s", body={"a": None}, content_type=MERGE_PATCH
    )
    assert patched.headers["Content-Type"] == MERGE_PATCH
    assert patched.params == {}


@pytest.mark.parametrize(
    ("verb", "options", "message"),
    [
        ("fetch", {"name": "a"}, "unknown verb 'fetch'"),
        ("get", {}, "get needs a name"),
        ("list", {"name": "a"}, "list addresses a collection"),
        ("create", {"name": "a"}, "create addresses a collection"),
        ("list", {"subresource": "status"}, "a subresource needs an object name"),
        ("apply", {"name": "a", "body": {}}, "server-side apply needs a field manager"),
        ("update", {"name": "a", "force": True}, "force is an option of apply only"),
        ("patch", {"name": "a", "body": {}}, "a patch needs a content type"),
    ],
)
def test_a_request_the_server_would_misread_is_refused_here(verb, options, message):
    with pytest.raises(ValueError, match=message):
        build(CONFIG_MAP, verb, namespace="ns", **options)


@pytest.mark.parametrize(
    ("resource", "namespace", "name", "subresource"),
    [
        (CONFIG_MAP, "ns", "", ""),
        (CONFIG_MAP, "ns", "a", ""),
        (DEPLOYMENT, "", "", ""),
        (DGD, "ns", "g", "status"),
        (NODE, "", "n1", ""),
        (SERVICE, "ns", "s:80", "proxy/history"),
    ],
)
def test_a_built_path_reads_back_as_what_it_addresses(resource, namespace, name, subresource):
    built = path(resource, namespace=namespace, name=name, subresource=subresource)
    assert addressed(built) == Addressed(resource.plural, name, subresource)


def test_namespaces_and_discovery_read_back():
    assert addressed("/api/v1/namespaces") == Addressed("namespaces")
    assert addressed("/api/v1/namespaces/ns") == Addressed("namespaces", "ns")
    assert addressed("/apis/apps/v1") == Addressed("")
    assert addressed("/version") == Addressed("")


def test_discovery_documents():
    assert discovery().path == "/apis"
    assert discovery("v1").path == "/api/v1"
    assert discovery("apps/v1").path == "/apis/apps/v1"
    assert discovery("apps/v1").method == "GET"


def test_a_resource_is_named_by_where_it_is_served():
    # Discovery, the kinds module and a lightkube class describe the same resource: equal.
    discovered = Resource("apps", "v1", "", "deployments", namespaced=False)
    assert discovered == DEPLOYMENT
    assert discovered in {DEPLOYMENT}
    assert DEPLOYMENT.api_version == "apps/v1"
    assert CONFIG_MAP.api_version == "v1"
    assert str(DEPLOYMENT) == "Deployment"
    assert CONFIG_MAP.gvr == "v1 configmaps"
    assert Resource.of("grove.io/v1alpha1", "PodCliqueSet", "podcliquesets").gvr == (
        "grove.io/v1alpha1 podcliquesets"
    )
