"""The chart lints strictly, renders cleanly for the value sets we support, and rejects bad
values with a message naming the field."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import syncagent
from tests.chart.support.render import CHART, RELEASE_NS, helm_with_values, render, render_error

VALUE_SETS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "watch-namespaces": {"watchNamespaces": ["team-a", "team-b"]},
    "no-crds": {"crds": {"install": False}},
    "no-leader-election": {"leaderElection": {"enabled": False}},
    "ha": {
        "replicaCount": 3,
        "leaderElection": {"enabled": True, "namespace": "leases", "leaseName": "shard-1"},
    },
    "external-identity": {
        "serviceAccount": {"create": False, "name": "agent"},
        "rbac": {"create": False},
    },
    "everything-off": {
        "capabilities": {"grove": "false", "lws": False, "disaggregatedSet": False},
        "logLevel": "debug",
        "discoveryBackend": "etcd",
        "metrics": {"port": 9000, "service": {"enabled": False}},
        "resyncPeriod": "1h30m",
        "discoveryInterval": "5m",
        "image": {"repository": "example.com/agent", "digest": "sha256:" + "a" * 64},
    },
}


@pytest.mark.parametrize("name", sorted(VALUE_SETS))
def test_helm_lint_strict_is_clean(name: str) -> None:
    result = helm_with_values("lint", VALUE_SETS[name], "--strict", str(CHART))
    assert result.returncode == 0, result.stdout + result.stderr
    # --strict turns warnings into failures; INFO lines (the missing icon) are allowed.
    assert "[WARNING]" not in result.stdout
    assert "[ERROR]" not in result.stdout


@pytest.mark.parametrize("name", sorted(VALUE_SETS))
def test_helm_template_renders_well_formed_objects(name: str) -> None:
    docs = render(VALUE_SETS[name])
    assert docs
    seen: set[tuple[str, str, str]] = set()
    for doc in docs:
        assert doc.get("apiVersion"), doc
        assert doc.get("kind"), doc
        meta = doc["metadata"]
        key = (doc["kind"], meta.get("namespace", ""), meta["name"])
        assert key not in seen, f"{key} rendered twice"
        seen.add(key)
        assert meta["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        assert meta["labels"]["app.kubernetes.io/instance"] == "r1"


def test_namespaced_objects_of_the_release_live_in_the_release_namespace() -> None:
    for doc in render():
        if doc["kind"] in {"Deployment", "ServiceAccount", "Service"}:
            assert doc["metadata"]["namespace"] == RELEASE_NS


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"capabilities": {"grove": "maybe", "lws": "auto", "disaggregatedSet": "auto"}}, "grove"),
        ({"discoveryBackend": "zookeeper"}, "discoveryBackend"),
        ({"watchNamespaces": ["Team_A"]}, "watchNamespaces"),
        ({"watchNamespaces": ["a", "a"]}, "watchNamespaces"),
        ({"concurrency": 0}, "concurrency"),
        ({"resyncPeriod": "ten minutes"}, "resyncPeriod"),
        ({"resyncPeriod": "500ms"}, "resyncPeriod"),
        ({"discoveryInterval": "every minute"}, "discoveryInterval"),
        ({"fightDetector": {"threshold": 0}}, "threshold"),
        ({"fightDetector": {"window": ""}}, "window"),
        ({"fightDetector": {"backoff": "a minute"}}, "backoff"),
        ({"fightDetector": {"maxBackoff": "1d"}}, "maxBackoff"),
        ({"logLevel": "verbose"}, "logLevel"),
        ({"leaderElection": {"enabled": True, "leaseName": "Bad Name"}}, "leaseName"),
        ({"crds": {"instal": True}}, "instal"),
        ({"unknownKey": 1}, "unknownKey"),
        ({"image": {"repository": "x", "digest": "latest"}}, "digest"),
    ],
)
def test_schema_rejects_bad_values_naming_the_field(values: dict[str, Any], field: str) -> None:
    error = render_error(values)
    assert "values don't meet the specifications of the schema" in error
    assert field in error


def test_several_replicas_need_leader_election() -> None:
    error = render_error({"replicaCount": 2, "leaderElection": {"enabled": False}})
    assert "replicaCount: more than 1 replica needs leaderElection.enabled=true" in error


def test_an_existing_service_account_must_be_named() -> None:
    error = render_error({"serviceAccount": {"create": False}})
    assert "serviceAccount.name: required when serviceAccount.create is false" in error


def test_disaggregated_set_cannot_be_required_without_lws() -> None:
    error = render_error(
        {"capabilities": {"grove": "auto", "lws": "false", "disaggregatedSet": True}}
    )
    assert "capabilities.disaggregatedSet: true needs capabilities.lws" in error
    assert "but capabilities.lws=false switches it off" in error


def test_metrics_and_health_ports_must_differ() -> None:
    error = render_error({"metrics": {"port": 8081}})
    assert "health.port: must differ from metrics.port" in error


def test_values_file_documents_every_schema_property() -> None:
    # Every top-level key the schema knows has a default in values.yaml, and vice versa.
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    schema = yaml.safe_load((CHART / "values.schema.json").read_text())
    assert set(values) == set(schema["properties"]) - {"global"}


def test_chart_app_version_is_the_agent_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["appVersion"] == syncagent.__version__
