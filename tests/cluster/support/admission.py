"""Admission in the agent's path (issue 30; no tests here): a webhook server of the test's own,
its validating and mutating registrations, and ValidatingAdmissionPolicies, each limited to one
namespace (the control plane is shared by the session) and removed when its ``with`` ends.

The webhook serves HTTPS on 127.0.0.1 with the control plane's webhook serving certificate
(``devcluster/pki.py``: signed by the control plane's CA, valid for 127.0.0.1), and the
registrations carry that CA as their ``caBundle``: kube-apiserver runs on this host, so it
reaches the webhook by URL.
"""

from __future__ import annotations

import base64
import contextlib
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

from syncagent.devcluster.pki import Pki
from syncagent.ssa.certain import CREATE_ONLY
from tests.support.kube import ApiFailure, Kube

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
MESH_LABEL = "mesh.example.com/injected"
MESH_ANNOTATION = "mesh.example.com/status"


@dataclass(frozen=True, slots=True)
class Seen:
    """One AdmissionReview request, as the webhook saw it."""

    operation: str
    kind: str
    name: str
    dry_run: bool
    resource_version: str | None  # request.object.metadata.resourceVersion


class Webhook:
    """A validating (``/validate``: allows everything, records it) and mutating (``/mutate``:
    adds :data:`MESH_LABEL` and :data:`MESH_ANNOTATION`, as a service mesh's injector does)
    webhook server."""

    def __init__(self, pki: Pki) -> None:
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self.ca_bundle = base64.b64encode(pki.ca_cert.read_bytes()).decode()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(pki.webhook_dir / "tls.crt", pki.webhook_dir / "tls.key")
        self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self._server.server_address[1]}{path}"

    def __enter__(self) -> Webhook:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def clear(self) -> None:
        with self._lock:
            self.seen.clear()

    def creates(self) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if s.operation == "CREATE"]

    def _review(self, path: str, review: dict[str, Any]) -> dict[str, Any]:
        request = review["request"]
        obj = request.get("object") or {}
        meta = obj.get("metadata") or {}
        with self._lock:
            self.seen.append(
                Seen(
                    operation=request["operation"],
                    kind=request["kind"]["kind"],
                    name=meta.get("name") or request.get("name") or "",
                    dry_run=bool(request.get("dryRun")),
                    resource_version=meta.get("resourceVersion"),
                )
            )
        response: dict[str, Any] = {"uid": request["uid"], "allowed": True}
        if path == "/mutate":
            patch = mesh_patch(meta)
            if patch:
                response["patchType"] = "JSONPatch"
                response["patch"] = base64.b64encode(orjson.dumps(patch)).decode()
        return {"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": response}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        webhook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                # The API server adds its timeout to the URL (``/mutate?timeout=10s``).
                path = self.path.split("?", 1)[0]
                answer = orjson.dumps(webhook._review(path, orjson.loads(body)))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass  # the API server's reviews are recorded in ``seen``

        return Handler


def mesh_patch(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """JSON patch adding the mesh's label and annotation where they are missing."""
    ops: list[dict[str, Any]] = []
    for field, key, value in (
        ("labels", MESH_LABEL, "true"),
        ("annotations", MESH_ANNOTATION, "injected"),
    ):
        current = meta.get(field)
        if current is None:
            ops.append({"op": "add", "path": f"/metadata/{field}", "value": {key: value}})
        elif current.get(key) != value:
            escaped = key.replace("~", "~0").replace("/", "~1")
            ops.append({"op": "add", "path": f"/metadata/{field}/{escaped}", "value": value})
    return ops


def _in(namespace: str) -> dict[str, Any]:
    return {"matchLabels": {"kubernetes.io/metadata.name": namespace}}


def _rules(operations: list[str], groups: list[str], resources: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "operations": operations,
            "apiGroups": groups,
            "apiVersions": ["*"],
            "resources": resources,
            "scope": "Namespaced",
        }
    ]


@contextlib.contextmanager
def registered(kube: Kube, kind: str, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Create a cluster-scoped admission object for the ``with`` block."""
    plural = kind.lower().removesuffix("y") + ("ies" if kind.endswith("y") else "s")
    created = kube.request("POST", f"{ADMISSION}/{plural}", body)
    try:
        yield created
    finally:
        with contextlib.suppress(ApiFailure):
            kube.request("DELETE", f"{ADMISSION}/{plural}/{body['metadata']['name']}")


def validating_webhook(webhook: Webhook, namespace: str) -> dict[str, Any]:
    """Every CREATE in ``namespace``, of every resource, sent to the recording webhook."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": f"observe-{namespace}"},
        "webhooks": [
            {
                "name": "observe.syncagent.test",
                "clientConfig": {"url": webhook.url("/validate"), "caBundle": webhook.ca_bundle},
                "rules": _rules(["CREATE"], ["*"], ["*"]),
                "namespaceSelector": _in(namespace),
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 10,
            }
        ],
    }


def mutating_webhook(webhook: Webhook, namespace: str) -> dict[str, Any]:
    """Deployments and Services of ``namespace``, on every CREATE and UPDATE (a server-side
    apply is one of the two), labelled and annotated by the mesh."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": f"mesh-{namespace}"},
        "webhooks": [
            {
                "name": "mesh.syncagent.test",
                "clientConfig": {"url": webhook.url("/mutate"), "caBundle": webhook.ca_bundle},
                "rules": [
                    *_rules(["CREATE", "UPDATE"], ["apps"], ["deployments"]),
                    *_rules(["CREATE", "UPDATE"], [""], ["services"]),
                ],
                "namespaceSelector": _in(namespace),
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "reinvocationPolicy": "Never",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 10,
            }
        ],
    }


def policy(name: str, expression: str, message: str) -> dict[str, Any]:
    """A ValidatingAdmissionPolicy on every CREATE of every resource."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": _rules(["CREATE"], ["*"], ["*"])},
            "validations": [{"expression": expression, "message": message}],
        },
    }


def binding(name: str, namespace: str, action: str) -> dict[str, Any]:
    """``name``'s policy bound in ``namespace`` only, with ``action`` (Deny, Warn, Audit)."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": [action],
            "matchResources": {"namespaceSelector": _in(namespace)},
        },
    }


@contextlib.contextmanager
def bound_policy(
    kube: Kube, name: str, namespace: str, *, expression: str, message: str, action: str
) -> Iterator[None]:
    with (
        registered(kube, "ValidatingAdmissionPolicy", policy(name, expression, message)),
        registered(kube, "ValidatingAdmissionPolicyBinding", binding(name, namespace, action)),
    ):
        yield


def policy_checks(kube: Kube, name: str) -> dict[str, float]:
    """kube-apiserver's ``apiserver_validating_admission_policy_check_total`` of policy
    ``name``, by enforcement action (allow, deny, warn, audit)."""
    text = kube.http.get("/metrics").text
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("apiserver_validating_admission_policy_check_total{") and (
            f'policy="{name}"' in line
        ):
            action = line.split('enforcement_action="', 1)[1].split('"', 1)[0]
            out[action] = out.get(action, 0.0) + float(line.rsplit(" ", 1)[1])
    return out


PROBE = "admission-probe"


def probe_create(kube: Kube, namespace: str) -> ApiFailure | None:
    """A dry-run create-only apply of a ConfigMap in ``namespace``: what admission makes of
    the agent's create-only write, nothing stored (None: admitted)."""
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": PROBE, "namespace": namespace, "resourceVersion": CREATE_ONLY},
    }
    try:
        kube.request(
            "PATCH",
            kube.path("ConfigMap", namespace, PROBE),
            body,
            content_type="application/apply-patch+yaml",
            fieldManager="admission-probe",
            dryRun="All",
        )
    except ApiFailure as err:
        return err
    return None
