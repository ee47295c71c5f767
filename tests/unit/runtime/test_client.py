import pytest

from syncagent.runtime.client import ClientConfigError, load_config, request_resource, request_verb


@pytest.mark.parametrize(
    ("method", "path", "params", "verb", "resource"),
    [
        ("GET", "/api/v1/namespaces/ns/services", {}, "list", "services"),
        ("GET", "/api/v1/namespaces/ns/services/a", {}, "get", "services"),
        ("GET", "/apis/apps/v1/deployments", {"watch": ["true"]}, "watch", "deployments"),
        ("GET", "/api/v1/namespaces", {}, "list", "namespaces"),
        ("GET", "/api/v1/namespaces/ns", {}, "get", "namespaces"),
        ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/a", {}, "patch", "deployments"),
        ("PATCH", "/apis/nvidia.com/v1beta1/namespaces/ns/x/a/status", {}, "patch", "x/status"),
        ("PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", {}, "update", "leases"),
        ("POST", "/api/v1/namespaces/ns/events", {}, "create", "events"),
        ("DELETE", "/apis/apps/v1/namespaces/ns/deployments/a", {}, "delete", "deployments"),
        ("GET", "/apis/grove.io/v1alpha1", {}, "get", ""),
    ],
)
def test_verb_and_resource(method, path, params, verb, resource):
    assert request_verb(method, path, params) == verb
    assert request_resource(path) == resource


def test_missing_kubeconfig_names_the_file_and_the_fix(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ClientConfigError) as exc:
        load_config(kubeconfig=missing)
    assert str(missing) in str(exc.value)
    assert "--kubeconfig" in str(exc.value)


def test_unknown_context_is_reported(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
    )
    assert load_config(kubeconfig=path).context_name == "a"
    with pytest.raises(ClientConfigError, match="'b' not found"):
        load_config(kubeconfig=path, context="b")
