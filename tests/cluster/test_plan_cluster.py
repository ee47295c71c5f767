"""``syncagent plan`` against the test API server: created -> (agent converges) -> unchanged,
never a write; and the takeover step shown before it happens."""

from __future__ import annotations

from pathlib import Path

import anyio
import orjson
import pytest
import yaml

from syncagent.cli.main import main
from syncagent.cli.pathways import PROGRAMS
from syncagent.inspect import report
from syncagent.inspect.planapplier import PlanApplier
from syncagent.inspect.planner import plan_documents
from syncagent.programs.capabilities import Setting, capability_overrides
from syncagent.render.naming import dcd_name
from syncagent.runtime.client import make_client
from syncagent.runtime.metrics import Metrics
from syncagent.ssa import Engine, RequestCounter, SsaError
from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.polling import eventually

CAPS = ["--capability", "grove=false"]  # as the test agent runs


def _graph(ns: str, name: str) -> dict:
    return graph(ns, name, [component("frontend", "frontend"), component("decode", "worker")])


def _plan(kubeconfig: Path, doc: dict) -> tuple[report.Plan, RequestCounter]:
    counter = RequestCounter()

    async def go() -> report.Plan:
        client = make_client(kubeconfig=kubeconfig, metrics=Metrics())
        try:
            run = await plan_documents(
                client,
                [doc],
                namespace=doc["metadata"]["namespace"],
                settings=capability_overrides(
                    [("grove", Setting.FALSE)], declared=PROGRAMS.capabilities()
                ),
                programs=PROGRAMS,
                counter=counter,
            )
        finally:
            await client.aclose()
        return report.build(run)

    return anyio.run(go), counter


def _converged(kubeconfig: Path, doc: dict) -> bool:
    """Whether a plan finds nothing to do; a plan racing the running agent may fail: not yet."""
    try:
        plan = _plan(kubeconfig, doc)[0]
    except SsaError:
        return False
    return plan.exit_code == 0 and set(_actions(plan).values()) == {"unchanged"}


def _actions(plan: report.Plan) -> dict[str, str]:
    return {r.subject: r.action for r in plan.rows}


def _cli(path: Path, kubeconfig: Path, *extra: str) -> int:
    return main(["plan", "-f", str(path), "--kubeconfig", str(kubeconfig), *CAPS, *extra])


def test_created_then_unchanged_with_zero_writes(
    control_plane, namespace: str, kube, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = control_plane.kubeconfig
    doc = _graph(namespace, "p")
    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(doc))

    plan, counter = _plan(kc, doc)
    actions = _actions(plan)
    assert set(actions.values()) == {"created"}, actions
    for subject in (
        f"DynamoGraphDeployment/{namespace}/p",
        f"DynamoComponentDeployment/{namespace}/{dcd_name('p', 'frontend')}",
        f"Deployment/{namespace}/{dcd_name('p', 'decode')}",
        f"Service/{namespace}/{dcd_name('p', 'frontend')}",
    ):
        assert subject in actions
    assert counter.writes == 0
    assert counter.count("apply", dry_run=True) > 0
    assert kube.list("DynamoComponentDeployment", namespace) == []  # nothing was written
    assert _cli(path, kc) == 2
    assert "Plan: " in capsys.readouterr().out

    kube.create(doc)
    with running_agent(kc, namespace=namespace):
        eventually(lambda: _converged(kc, doc), deadline=60, what="the agent to converge the graph")
    plan, counter = _plan(kc, doc)
    assert set(_actions(plan).values()) == {"unchanged"}
    assert set(_actions(plan)) == set(actions)  # the same objects
    assert plan.exit_code == 0
    assert counter.writes == 0
    assert _cli(path, kc, "-o", "json") == 0
    assert '"changes": false' in capsys.readouterr().out


def test_changed_graph_shows_configured_and_would_delete(
    control_plane, namespace: str, kube, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = control_plane.kubeconfig
    doc = _graph(namespace, "q")
    kube.create(doc)
    with running_agent(kc, namespace=namespace):
        eventually(lambda: _converged(kc, doc), deadline=60, what="convergence")
    changed = _graph(namespace, "q")
    changed["spec"]["components"] = [component("frontend", "frontend", replicas=3)]
    plan, counter = _plan(kc, changed)
    actions = _actions(plan)
    frontend, decode = dcd_name("q", "frontend"), dcd_name("q", "decode")
    assert actions[f"DynamoGraphDeployment/{namespace}/q"] == "configured"
    assert actions[f"DynamoComponentDeployment/{namespace}/{frontend}"] == "configured"
    assert actions[f"DynamoComponentDeployment/{namespace}/{decode}"] == "would-delete"
    row = next(r for r in plan.rows if r.subject.endswith(f"Deployment/{namespace}/{frontend}"))
    assert "+  replicas: 3" in row.diff
    assert counter.writes == 0


def test_plan_never_predicts_the_removal_of_what_kubectl_added(
    control_plane, namespace: str, kube, kubectl
) -> None:
    kc = control_plane.kubeconfig
    doc = _graph(namespace, "k")
    kube.create(doc)
    with running_agent(kc, namespace=namespace):
        eventually(lambda: _converged(kc, doc), deadline=60, what="the agent to converge the graph")
    keeper = kube.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "keeper", "namespace": namespace},
        }
    )
    frontend = dcd_name("k", "frontend")
    targets = (
        f"dynamocomponentdeployments.nvidia.com/{frontend}",
        f"deployments.apps/{frontend}",
        f"services/{frontend}",
    )
    for target in targets:
        kubectl.label(target, "team=search")
        kubectl.annotate(target, "prometheus.io/scrape=true")
        kubectl.add_owner(target, keeper)
    plan, counter = _plan(kc, doc)
    assert set(_actions(plan).values()) == {"unchanged"}, _actions(plan)
    assert all(r.takeover is None for r in plan.rows)
    assert plan.exit_code == 0
    # A change that rewrites those objects keeps what kubectl added, in the diff too.
    changed = _graph(namespace, "k")
    changed["spec"]["labels"] = {"release": "r2"}
    changed["spec"]["components"][0]["replicas"] = 3
    plan, counter = _plan(kc, changed)
    rows = {r.subject: r for r in plan.rows}
    for subject in (
        f"DynamoComponentDeployment/{namespace}/{frontend}",
        f"Deployment/{namespace}/{frontend}",
        f"Service/{namespace}/{frontend}",
    ):
        row = rows[subject]
        assert row.action == "configured", (subject, row.action)
        assert any(line.startswith("+") and "release: r2" in line for line in row.diff), subject
        removed = [line for line in row.diff if line.startswith("-") and not line.startswith("---")]
        for foreign in ("team", "prometheus.io/scrape", keeper["metadata"]["uid"]):
            assert not any(foreign in line for line in removed), (subject, removed)
        assert row.takeover is None
    assert counter.writes == 0


def test_takeover_is_shown_before_it_happens(control_plane, namespace: str, kube) -> None:
    kc = control_plane.kubeconfig
    doc = _graph(namespace, "u")
    live_graph = kube.create(doc)
    name = dcd_name("u", "frontend")
    # As the upstream operator left it: written through Update by manager "manager".
    upstream = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"upstream-only": "yes"},
            "ownerReferences": [
                {
                    "apiVersion": "nvidia.com/v1beta1",
                    "kind": "DynamoGraphDeployment",
                    "name": "u",
                    "uid": live_graph["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"name": "frontend", "type": "frontend", "backendFramework": "vllm"},
    }
    kube.request(
        "POST",
        kube.path("DynamoComponentDeployment", namespace),
        upstream,
        fieldManager="manager",
    )
    plan, counter = _plan(kc, doc)
    row = next(r for r in plan.rows if r.subject == f"DynamoComponentDeployment/{namespace}/{name}")
    assert row.takeover is not None
    assert {(m.source, m.target) for m in row.takeover.moves} == {
        ("manager", "syncagent/ownership"),
        ("manager", "syncagent/components"),
    }
    assert not any(c.manager == "manager" for c in row.conflicts)
    # Its label of another prefix is not taken, so the plan does not predict its removal.
    assert not any(line.startswith("-") and "upstream-only" in line for line in row.diff)
    assert counter.writes == 0
    after = kube.get("DynamoComponentDeployment", namespace, name)
    assert {e["manager"] for e in after["metadata"]["managedFields"]} == {"manager"}


def test_writes_around_the_engine_become_dry_runs(control_plane, namespace: str, kube) -> None:
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": namespace},
            "data": {"a": "1"},
        }
    )
    path = f"/api/v1/namespaces/{namespace}/configmaps/cm"
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": namespace},
    }

    async def go() -> list[str]:
        client_ = make_client(kubeconfig=control_plane.kubeconfig, metrics=Metrics())
        try:
            engine = PlanApplier(Engine(client_))
            answer = await engine.patch(obj, {"data": {"a": "2"}}, manager="test")
            assert answer["data"] == {"a": "2"}  # the dry-run answer
            return engine.records.other_writes
        finally:
            await client_.aclose()

    assert anyio.run(go) == [f"PATCH {path}"]
    assert kube.request("GET", path)["data"] == {"a": "1"}


def test_as_impersonates_the_agent(
    control_plane, namespace: str, kube, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = control_plane.kubeconfig
    for sa in ("nobody", "agent"):
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": sa, "namespace": namespace},
            }
        )
    kube.request(
        "POST",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "agent-admin", "namespace": namespace},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": namespace}],
        },
    )
    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(_graph(namespace, "i")))

    code = _cli(path, kc, "--as", f"system:serviceaccount:{namespace}:nobody")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1
    assert f"system:serviceaccount:{namespace}:nobody" in err[0]
    assert "forbidden" in err[0]

    code = _cli(path, kc, "--as", f"system:serviceaccount:{namespace}:agent", "--no-diff")
    out = capsys.readouterr()
    assert code == 2, out.err
    assert f"DynamoComponentDeployment/{namespace}/{dcd_name('i', 'frontend')}" in out.out
    assert kube.list("DynamoComponentDeployment", namespace) == []


def test_standalone_component(control_plane, namespace: str, kube) -> None:
    doc = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "solo", "namespace": namespace},
        "spec": {
            "backendFramework": "vllm",
            **{k: v for k, v in component("solo", "frontend").items() if k != "name"},
        },
    }
    plan, counter = _plan(control_plane.kubeconfig, doc)
    actions = _actions(plan)
    assert actions[f"DynamoComponentDeployment/{namespace}/solo"] == "created"
    assert actions[f"Deployment/{namespace}/solo"] == "created"
    assert actions[f"Service/{namespace}/solo"] == "created"
    assert counter.writes == 0
    assert kube.list("Deployment", namespace) == []


def test_plan_shows_the_status_writes_and_events_it_would_emit(
    control_plane, namespace: str, kube
) -> None:
    """Issue 14 item 6: the status the agent would write and the events it would raise."""
    kc = control_plane.kubeconfig
    doc = _graph(namespace, "ev")
    kube.create(doc)
    with running_agent(kc, namespace=namespace):
        eventually(lambda: _converged(kc, doc), deadline=60, what="convergence")
    changed = _graph(namespace, "ev")
    changed["spec"]["components"] = [component("frontend", "frontend", replicas=3)]
    plan, counter = _plan(kc, changed)
    graph_subject = f"DynamoGraphDeployment/{namespace}/ev"
    frontend = dcd_name("ev", "frontend")
    writes = {w.subject: w for w in plan.status_writes}
    assert writes[graph_subject].manager == "syncagent/graph-status"
    # the new generation is observed by the status the agent would write
    live = kube.get("DynamoGraphDeployment", namespace, "ev")
    assert f"+  observedGeneration: {live['metadata']['generation'] + 1}" in (
        report.status_diff(writes[graph_subject])
    )
    events = {(e.subject, e.type, e.reason, e.message) for e in plan.events}
    assert (
        graph_subject,
        "Normal",
        "UpdateDynamoComponentDeployment",
        f"Updated DynamoComponentDeployment {frontend}",
    ) in events
    assert (
        graph_subject,
        "Normal",
        "DeleteDynamoComponentDeployment",
        f"Deleted DynamoComponentDeployment {dcd_name('ev', 'decode')}",
    ) in events
    text = report.to_text(plan)
    assert f"status (dry run): {graph_subject}  syncagent/graph-status" in text
    assert f"event: Normal UpdateDynamoComponentDeployment on {graph_subject}: " in text
    doc_json = orjson.loads(report.to_json(plan))
    assert graph_subject in {w["subject"] for w in doc_json["statusWrites"]}
    assert {
        "subject": graph_subject,
        "type": "Normal",
        "reason": "DeleteDynamoComponentDeployment",
        "message": f"Deleted DynamoComponentDeployment {dcd_name('ev', 'decode')}",
    } in doc_json["events"]
    assert counter.writes == 0
