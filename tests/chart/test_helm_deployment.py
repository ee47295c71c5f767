"""The agent's Deployment: hardened pod, probes on the agent's health port, flags from values."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from syncagent.cli.pathways import PROGRAMS
from syncagent.programs.capabilities import Setting, capability_overrides
from syncagent.runtime.workers import DEFAULT_CONCURRENCY
from tests.chart.support.render import CHART, RELEASE_NS, container, objects, one, render


def render_values(values: dict[str, Any]) -> dict[str, Any]:
    """values.yaml with ``values`` merged in (one level deep is all these tests need)."""
    merged = yaml.safe_load((CHART / "values.yaml").read_text())
    for key, value in values.items():
        merged[key] = {**merged[key], **value} if isinstance(value, dict) else value
    return merged


def flags(values: dict[str, Any] | None = None) -> list[str]:
    agent = container(render(values))
    assert agent["command"] == ["syncagent"]
    assert agent["args"][0] == "run"
    return list(agent["args"][1:])


def flag_values(args: list[str], name: str) -> list[str]:
    prefix = f"--{name}="
    return [a.removeprefix(prefix) for a in args if a.startswith(prefix)]


def test_pod_runs_non_root_with_runtime_default_seccomp() -> None:
    pod = one(render(), "Deployment")["spec"]["template"]["spec"]
    security = pod["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["runAsUser"] != 0
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}


def test_container_is_locked_down() -> None:
    security = container(render())["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["privileged"] is False
    assert security["runAsNonRoot"] is True
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}


def test_only_tmp_is_writable() -> None:
    docs = render()
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    mounts = container(docs)["volumeMounts"]
    assert [m for m in mounts if not m.get("readOnly")] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert pod["volumes"][0]["name"] == "tmp"
    assert "emptyDir" in pod["volumes"][0]


def test_probes_hit_healthz_and_readyz_on_the_health_port() -> None:
    agent = container(render({"health": {"port": 9444}}))
    ports = {p["name"]: p["containerPort"] for p in agent["ports"]}
    assert ports["health"] == 9444
    assert agent["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert agent["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert flag_values(agent["args"], "health-probe-bind-address") == [":9444"]


def test_resources_request_cpu_and_memory_and_cap_memory() -> None:
    resources = container(render())["resources"]
    assert set(resources["requests"]) == {"cpu", "memory"}
    assert "memory" in resources["limits"]


def test_default_flags() -> None:
    args = flags()
    assert flag_values(args, "namespace") == []
    # every capability the pathways declare, in the registry's order, left to discovery
    assert flag_values(args, "capability") == [f"{c.name}=auto" for c in PROGRAMS.capabilities()]
    # no backend forced: the operator configuration's (upstream's default: kubernetes)
    assert flag_values(args, "discovery-backend") == []
    # the chart installs the agent with its own default, stated in one place
    assert flag_values(args, "concurrency") == [str(DEFAULT_CONCURRENCY)]
    assert flag_values(args, "log-level") == ["info"]
    assert flag_values(args, "metrics-bind-address") == [":8443"]
    assert "--metrics-secure" in args  # secure metrics are the chart's default
    assert "--leader-elect" in args
    assert flag_values(args, "leader-election-namespace") == [RELEASE_NS]
    assert flag_values(args, "leader-election-id") == ["syncagent"]
    assert flag_values(args, "resync-period") == []
    assert flag_values(args, "discovery-interval") == []
    # The fight detector's defaults are the issue's: 3 take-backs in 5 minutes, 1m doubling
    # to at most 1h.
    assert flag_values(args, "fight-threshold") == ["3"]
    assert flag_values(args, "fight-window") == ["5m"]
    assert flag_values(args, "fight-backoff") == ["1m"]
    assert flag_values(args, "fight-max-backoff") == ["1h"]


def test_fight_detector_flags_come_from_values() -> None:
    fights = {"threshold": 5, "window": "10m", "backoff": "30s", "maxBackoff": "2h"}
    args = flags({"fightDetector": fights})
    assert flag_values(args, "fight-threshold") == ["5"]
    assert flag_values(args, "fight-window") == ["10m"]
    assert flag_values(args, "fight-backoff") == ["30s"]
    assert flag_values(args, "fight-max-backoff") == ["2h"]


def test_capabilities_and_discovery_backend_come_from_values() -> None:
    args = flags(
        {
            # YAML booleans and strings both become the agent's true/false spelling.
            "capabilities": {"grove": False, "lws": "true", "disaggregatedSet": "false"},
            "discoveryBackend": "etcd",
        }
    )
    given = {"grove": "false", "lws": "true", "disaggregatedSet": "false"}
    assert flag_values(args, "capability") == [
        f"{c.name}={given.get(c.name, 'auto')}" for c in PROGRAMS.capabilities()
    ]
    assert flag_values(args, "discovery-backend") == ["etcd"]


def test_watch_namespaces_become_repeated_namespace_flags() -> None:
    args = flags({"watchNamespaces": ["team-a", "team-b"]})
    assert flag_values(args, "namespace") == ["team-a", "team-b"]


def test_leader_election_flags_follow_values() -> None:
    lease = {"enabled": True, "namespace": "leases", "leaseName": "shard-1"}
    args = flags({"leaderElection": lease})
    assert flag_values(args, "leader-election-namespace") == ["leases"]
    assert flag_values(args, "leader-election-id") == ["shard-1"]
    # The agent elects by default: switching it off must be explicit.
    args = flags({"leaderElection": {"enabled": False, "leaseName": "syncagent"}})
    assert "--leader-elect" not in args
    assert "--no-leader-elect" in args
    assert flag_values(args, "leader-election-namespace") == []


def test_tuning_flags_and_extra_args() -> None:
    args = flags(
        {
            "concurrency": 32,
            "resyncPeriod": "15m",
            "discoveryInterval": "2m",
            "extraArgs": ["--foo=bar"],
        }
    )
    assert flag_values(args, "concurrency") == ["32"]
    assert flag_values(args, "resync-period") == ["15m"]
    assert flag_values(args, "discovery-interval") == ["2m"]
    assert args[-1] == "--foo=bar"


def test_metrics_port_is_the_same_on_flag_container_and_service() -> None:
    docs = render({"metrics": {"port": 9100, "service": {"port": 80}}})
    agent = container(docs)
    assert flag_values(agent["args"], "metrics-bind-address") == [":9100"]
    assert {p["name"]: p["containerPort"] for p in agent["ports"]}["metrics"] == 9100
    service = one(docs, "Service", "r1-syncagent-metrics")
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 80, "targetPort": "metrics", "protocol": "TCP"}
    ]
    pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()


def test_metrics_service_can_be_switched_off() -> None:
    services = objects(render({"metrics": {"service": {"enabled": False}}}), "Service")
    assert [d["metadata"]["name"] for d in services] == ["r1-syncagent-history"]


def test_pod_runs_as_the_chart_service_account_and_knows_its_name() -> None:
    docs = render()
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == one(docs, "ServiceAccount")["metadata"]["name"]
    env = {e["name"]: e for e in container(docs)["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"


def test_image_defaults_to_the_app_version_and_accepts_a_digest() -> None:
    assert container(render())["image"] == "ghcr.io/syncagent/syncagent:0.1.0"
    digest = "sha256:" + "b" * 64
    image = container(render({"image": {"repository": "example.com/agent", "digest": digest}}))
    assert image["image"] == f"example.com/agent@{digest}"


def test_single_writer_without_leader_election() -> None:
    values = {"leaderElection": {"enabled": False, "leaseName": "syncagent"}}
    deployment = one(render(values), "Deployment")
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert deployment["spec"]["replicas"] == 1


@pytest.mark.parametrize(
    "values",
    [
        {},
        {
            "watchNamespaces": ["team-a", "team-b"],
            "resyncPeriod": "1h30m",
            "discoveryInterval": "45s",
            "logLevel": "debug",
        },
        {
            "capabilities": {"grove": True, "lws": "false", "disaggregatedSet": False},
            "discoveryBackend": "etcd",
            "leaderElection": {"enabled": False, "leaseName": "syncagent"},
            "concurrency": 16,
        },
        {"leaderElection": {"enabled": True, "namespace": "leases", "leaseName": "shard-1"}},
        {"fightDetector": {"threshold": 2, "window": "90", "backoff": "1m30s", "maxBackoff": "3h"}},
        {"metrics": {"secure": False, "port": 9090}, "health": {"port": 9091}},
        {"history": {"enabled": False, "port": 8082}},
    ],
)
def test_the_agent_accepts_the_flags_the_chart_builds(values: dict[str, Any]) -> None:
    # Imported here: the agent pulls in the whole controller, which only this test needs.
    from syncagent.cli.flags import duration
    from syncagent.cli.main import build_parser
    from syncagent.cli.run import run

    agent = container(render(values))
    parsed = build_parser(PROGRAMS).parse_args(agent["args"])
    assert parsed.func is run
    want = render_values(values)
    assert parsed.namespace == want["watchNamespaces"]
    assert parsed.concurrency == want["concurrency"]
    # a capability the chart's values do not name is left to discovery (auto)
    declared = PROGRAMS.capabilities()
    assert capability_overrides(parsed.capability, declared=declared) == {
        c.name: Setting(str(want["capabilities"].get(c.name, "auto")).lower()) for c in declared
    }
    assert parsed.discovery_backend == (want["discoveryBackend"] or None)
    assert parsed.leader_elect is want["leaderElection"]["enabled"]
    if parsed.leader_elect:
        assert parsed.leader_election_id == want["leaderElection"]["leaseName"]
        namespace = want["leaderElection"].get("namespace") or RELEASE_NS
        assert parsed.leader_election_namespace == namespace
    assert parsed.metrics_bind_address == f":{want['metrics']['port']}"
    assert parsed.metrics_secure is want["metrics"]["secure"]
    assert parsed.health_probe_bind_address == f":{want['health']['port']}"
    history = f":{want['history']['port']}" if want["history"]["enabled"] else "0"
    assert parsed.history_bind_address == history
    assert parsed.log_level == want["logLevel"]
    if want["resyncPeriod"]:
        assert parsed.resync_period == duration(want["resyncPeriod"])
    if want["discoveryInterval"]:
        assert parsed.discovery_interval == duration(want["discoveryInterval"])
    fights = want["fightDetector"]
    assert parsed.fight_threshold == fights["threshold"]
    assert parsed.fight_window == duration(str(fights["window"]))
    assert parsed.fight_backoff == duration(fights["backoff"])
    assert parsed.fight_max_backoff == duration(fights["maxBackoff"])
