"""Admission in the agent's path (issue 30, docs/write-protocol.md §4).

Every create the agent sends is a server-side apply carrying the create-only resourceVersion
(``certain.CREATE_ONLY``). On the real API server, with a validating webhook of the test's own
and ValidatingAdmissionPolicies (each limited to the test's namespace):

- both see that resourceVersion on every create: the webhook in its AdmissionReview's
  ``request.object.metadata.resourceVersion``, CEL in ``object.metadata.resourceVersion``;
- a policy refusing it makes the agent's start-up check fall back to read-before-create: one
  warning, ``syncagent_create_read_first`` 1, and the graph still converges;
- a mutating webhook labelling and annotating the agent's Deployments and Services (a service
  mesh) costs no write at resync: those fields are the webhook's, not the agent's.
"""

from __future__ import annotations

from syncagent.ssa.certain import CREATE_ONLY
from tests.cluster.support.admission import (
    MESH_ANNOTATION,
    MESH_LABEL,
    Webhook,
    bound_policy,
    mutating_webhook,
    policy_checks,
    probe_create,
    registered,
    validating_webhook,
)
from tests.cluster.support.resync import resync_window
from tests.support.agent import Agent, running_agent
from tests.support.fake_workloads import simulate_ready
from tests.support.graphs import component, graph
from tests.support.kube import Kube, ready_reason
from tests.support.polling import eventually

DEADLINE = 90.0
FALLBACK_LINE = "admission refuses the create-only write"
# CEL: false (a violation) exactly for the create-only write.
NOT_CREATE_ONLY = (
    f"!has(object.metadata.resourceVersion) || object.metadata.resourceVersion != '{CREATE_ONLY}'"
)
OWNED = (
    "DynamoComponentDeployment",
    "Deployment",
    "Service",
    "ServiceAccount",
    "Role",
    "RoleBinding",
)


def _graph(kube: Kube, ns: str) -> None:
    kube.create(graph(ns, "g", [component("frontend", "frontend"), component("decode", "decode")]))


def _ready(kube: Kube, ns: str) -> None:
    def ready() -> bool:
        simulate_ready(kube, ns)
        return ready_reason(kube, ns, "g") == "all_resources_are_ready"

    eventually(ready, deadline=DEADLINE, what="graph g to become Ready")


def _created_by_agent(kube: Kube, ns: str) -> set[tuple[str, str]]:
    """(kind, name) of every object of ``OWNED`` kinds a syncagent manager wrote."""
    return {
        (kind, o["metadata"]["name"])
        for kind in OWNED
        for o in kube.list(kind, ns)
        if any(
            (e.get("manager") or "").startswith("syncagent/")
            for e in o["metadata"].get("managedFields") or ()
        )
    }


def _fallback(agent: Agent) -> tuple[float, int]:
    """The agent's fallback gauge and its warning lines so far."""
    lines = [line for line in agent.logs().splitlines() if FALLBACK_LINE in line]
    return agent.scrape().sum("syncagent_create_read_first"), len(lines)


def test_admission_sees_the_create_only_resource_version_on_every_create(
    control_plane, kube, namespace
):
    _graph(kube, namespace)
    name = f"observe-{namespace}"
    with (
        Webhook(control_plane.pki) as webhook,
        registered(kube, "ValidatingWebhookConfiguration", validating_webhook(webhook, namespace)),
        bound_policy(
            kube, name, namespace, expression=NOT_CREATE_ONLY, message="create-only", action="Warn"
        ),
    ):
        eventually(
            lambda: webhook.creates() and policy_checks(kube, name).get("warn"),
            step=lambda: probe_create(kube, namespace),
            deadline=DEADLINE,
            what="the webhook and the policy to see a create",
        )
        webhook.clear()
        before = policy_checks(kube, name)
        with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
            _ready(kube, namespace)
            created = _created_by_agent(kube, namespace)
            fallback = _fallback(agent)
        creates = [s for s in webhook.creates() if s.kind != "Event"]
        after = policy_checks(kube, name)
    assert fallback == (0, 0)  # the start-up check passed: no fallback
    # The webhook saw every object the agent created, created create-only; and nothing else
    # but Events was created (the graph was there before the webhook).
    written = {(s.kind, s.name) for s in creates if not s.dry_run}
    assert created
    assert created <= written
    assert {s.resource_version for s in creates} == {CREATE_ONLY}
    # The start-up check: a dry run, seen by admission like the real write.
    assert any(s.dry_run and s.kind == "ConfigMap" for s in creates)
    # CEL saw it too: one violation (warn) per create-only create, the webhook's count.
    warned = after.get("warn", 0) - before.get("warn", 0)
    assert warned == len(creates)


def test_a_policy_refusing_create_only_writes_makes_the_agent_read_first(
    control_plane, kube, namespace
):
    _graph(kube, namespace)
    name = f"refuse-{namespace}"
    with bound_policy(
        kube,
        name,
        namespace,
        expression=NOT_CREATE_ONLY,
        message="creates may not carry a resourceVersion",
        action="Deny",
    ):
        eventually(
            lambda: probe_create(kube, namespace),
            deadline=DEADLINE,
            what="the policy to refuse a create-only write",
        )
        with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
            _ready(kube, namespace)
            created = _created_by_agent(kube, namespace)
            fallback = _fallback(agent)
            refused = agent.scrape().sum("syncagent_apply_actions_total", result="error")
    assert fallback == (1, 1)
    assert {"Deployment", "Service", "DynamoComponentDeployment"} <= {k for k, _ in created}
    assert refused == 0  # no write of the agent was refused: every create read first


def test_a_mutating_webhook_labelling_our_objects_costs_no_writes_at_resync(
    control_plane, kube, namespace
):
    _graph(kube, namespace)
    with (
        Webhook(control_plane.pki) as webhook,
        registered(kube, "MutatingWebhookConfiguration", mutating_webhook(webhook, namespace)),
    ):
        eventually(
            lambda: _mesh_probe(kube, namespace) or (False, webhook.seen[-3:]),
            deadline=DEADLINE,
            what="the mesh webhook to label a Service",
        )
        args = ("--resync-period", "4s")
        with running_agent(control_plane.kubeconfig, *args, namespace=namespace) as agent:
            _ready(kube, namespace)
            for kind in ("Deployment", "Service"):
                for obj in kube.list(kind, namespace):
                    meta = obj["metadata"]
                    assert (meta["labels"][MESH_LABEL], MESH_ANNOTATION in meta["annotations"]) == (
                        "true",
                        True,
                    ), f"{kind}/{meta['name']}"
            eventually(
                lambda: resync_window(agent, graphs=1, deadline=60)[0] == 0,
                deadline=DEADLINE,
                what="a resync without writes",
            )
            for _ in range(3):
                writes, _requests = resync_window(agent, graphs=1, deadline=60)
                assert writes == 0


def _mesh_probe(kube: Kube, ns: str) -> bool:
    """A dry-run create of a Service comes back labelled by the mesh."""
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "mesh-probe", "namespace": ns},
        "spec": {"ports": [{"port": 80}]},
    }
    answer = kube.request("POST", kube.path("Service", ns), body, dryRun="All")
    return (answer["metadata"].get("labels") or {}).get(MESH_LABEL) == "true" or answer["metadata"]
