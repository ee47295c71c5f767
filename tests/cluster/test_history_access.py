"""Who may read the ownership history, on the real API server (docs/security.md §9): the history
is an aggregated API, so the API server authenticates the caller and the agent answers only for
objects the caller may ``get``. A ServiceAccount (bearer token) and a client-certificate user
read through ``syncagent blame --history``; a caller who may not get the object gets 403 from the
agent; an anonymous one what the API server decides; the list shows only the objects the caller
may get; a direct connection to the agent's port without the front proxy's certificate gets no
HTTP answer at all."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx2
import pytest

from syncagent.cli.main import main
from syncagent.devcluster import controlplane, pki
from tests.cluster.support.chart_identity import token_kubeconfig
from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.helm import ca_file
from tests.support.history import aggregated, history_path, wait_available
from tests.support.kubectl import Kubectl
from tests.support.polling import eventually

DEADLINE = 60.0
FRONT, WORKER = "acc-frontend", "acc-worker"
HISTORY_RULE = {
    "apiGroups": ["history.syncagent.io"],
    "resources": ["ownershiphistories"],
    "verbs": ["get", "list"],
}


def _role(kube: Any, ns: str, name: str, rules: list[dict[str, Any]], subject: dict) -> None:
    rbac = "rbac.authorization.k8s.io"
    kube.create(
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "Role",
            "metadata": {"name": name, "namespace": ns},
            "rules": rules,
        }
    )
    kube.create(
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": ns},
            "roleRef": {"apiGroup": rbac, "kind": "Role", "name": name},
            "subjects": [subject],
        }
    )


def _account(control_plane, kube, ns: str, name: str, rules: list[dict[str, Any]]) -> str:
    """A ServiceAccount bound to ``rules`` in ``ns``; its token (the account made with it)."""
    _role(kube, ns, name, rules, {"kind": "ServiceAccount", "name": name, "namespace": ns})
    return control_plane.token_for(namespace=ns, service_account=name)


def _cert_user(control_plane, kube, ns: str, tmp_path: Path) -> Path:
    """User ``carol`` with a client certificate, who may get every Deployment of ``ns``."""
    assert control_plane.pki is not None
    p = control_plane.pki
    cert, key = pki.issue_client(p.ca_cert, p.ca_key, tmp_path, common_name="carol")
    deployments = {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}
    subject = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "carol"}
    _role(kube, ns, "carol", [deployments, HISTORY_RULE], subject)
    path = tmp_path / "carol.kubeconfig"
    controlplane.write_kubeconfig(
        path, server=control_plane.server, ca=Path(ca_file(control_plane)), cert=cert, key=key
    )
    return path


def _get(control_plane, path: str, *, token: str | None = None, **params: str) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx2.Client(verify=ssl.create_default_context(cafile=ca_file(control_plane))) as http:
        return http.get(control_plane.server + path, params=params, headers=headers, timeout=10)


def _blame(capsys, config: Path, ns: str, name: str) -> str | None:
    code = main(["blame", f"deploy/{name}", "--history", "-n", ns, "--kubeconfig", str(config)])
    out, err = capsys.readouterr()
    if code != 0 and "HTTP 503" in err:
        return None  # the aggregator has not seen the agent answer yet
    assert code == 0, err
    return out


def _listed(control_plane, ns: str, token: str) -> list[str]:
    response = _get(control_plane, history_path(ns), token=token)
    assert response.status_code == 200, response.text
    return [i["metadata"]["name"] for i in response.json()["items"]]


def _both_recorded(control_plane, ns: str, token: str) -> bool:
    return _listed(control_plane, ns, token) == [FRONT, WORKER]


@pytest.mark.timeout(300)
def test_the_history_is_read_only_by_those_who_may_get_the_object(
    control_plane, kube, namespace, kubectl: Kubectl, capsys, tmp_path
):
    ns = namespace
    deployments = {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}
    front_only = {**deployments, "resourceNames": [FRONT]}
    reader = _account(control_plane, kube, ns, "reader", [front_only, HISTORY_RULE])
    stranger = _account(control_plane, kube, ns, "stranger", [HISTORY_RULE])
    admin = _account(control_plane, kube, ns, "admin", [deployments, HISTORY_RULE])
    carol = _cert_user(control_plane, kube, ns, tmp_path)
    reader_config = token_kubeconfig(control_plane, reader, tmp_path / "reader.kubeconfig")
    kube.create(
        graph(ns, "acc", [component("Frontend", "frontend"), component("Worker", "worker")])
    )
    with (
        aggregated(kube, ns, "agent-history", tmp_path / "tls") as flags,
        running_agent(control_plane.kubeconfig, *flags, namespace=ns),
    ):
        wait_available(kube)
        for name in (FRONT, WORKER):
            eventually(lambda n=name: kube.get("Deployment", ns, n), deadline=DEADLINE, what=name)
            kubectl("scale", f"deployment/{name}", "--replicas=3")
        eventually(
            lambda: _both_recorded(control_plane, ns, admin), deadline=DEADLINE, what="both flips"
        )
        # Allowed: a bearer token limited to the one Deployment, and a client certificate.
        text = eventually(
            lambda: _blame(capsys, reader_config, ns, FRONT), deadline=DEADLINE, what="reader"
        )
        assert text.startswith(f"Deployment/{ns}/{FRONT}: ownership history since ")
        assert ".spec.replicas" in text
        assert _blame(capsys, carol, ns, WORKER).startswith(f"Deployment/{ns}/{WORKER}:")
        # The list: only what the caller may get.
        assert _listed(control_plane, ns, reader) == [FRONT]
        # May read histories, may not get the object: the agent's 403.
        one = history_path(ns, FRONT)
        refused = _get(control_plane, one, token=stranger, group="apps", kind="Deployment")
        assert refused.status_code == 403, refused.text
        assert refused.json()["message"].startswith(
            f"Deployment/{ns}/{FRONT}: system:serviceaccount:{ns}:stranger may not get deployments"
        )
        assert _listed(control_plane, ns, stranger) == []
        # The reader's token, another Deployment.
        other = _get(
            control_plane, history_path(ns, WORKER), token=reader, kind="Deployment", group="apps"
        )
        assert other.status_code == 403
        # No credentials: the API server answers (anonymous may not get ownershiphistories).
        assert _get(control_plane, one, group="apps", kind="Deployment").status_code in (401, 403)
        # Straight to the agent's port, naming a user, without the front proxy's certificate.
        address = flags[1]
        insecure = ssl.create_default_context()
        insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
        with pytest.raises(httpx2.TransportError), httpx2.Client(verify=insecure) as direct:
            direct.get(
                f"https://{address}{one}",
                params={"group": "apps", "kind": "Deployment"},
                headers={"X-Remote-User": "system:admin", "X-Remote-Group": "system:masters"},
                timeout=10,
            )
