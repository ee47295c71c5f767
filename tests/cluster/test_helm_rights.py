"""Issue 26 item 1: the chart's rights, proven by a recorded run.

The chart is installed as the default install (``watchNamespaces: []``, one ClusterRoleBinding)
and the cluster tier's agent scenarios run under a token of its ServiceAccount, with leader
election on: every pathway and the migrations between them, graph and component removal,
takeover of another manager's fields, the fight detector, the wait-for-leader ConfigMap,
pull-secret discovery, and the stale-cache read of every applied kind (``stale_reads``: an
object created behind the agent's held watch, which its create then finds). The control plane's
audit log (``syncagent.devcluster.audit``) records every request the API server saw from that
user. The chart must grant every (verb, resource, namespace) the run used, and nothing the run
never used except the grants the chart explains as needed by admission (``ADMISSION_ONLY``) or
handed out to each graph's discovery Role.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from lightkube import Client, KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace

from syncagent.devcluster import ControlPlane, ensure_binaries, versions
from syncagent.render.identity import RULES as DISCOVERY_ROLE_RULES
from tests.cluster import (
    test_agent_component,
    test_agent_takeover,
    test_ds_agent,
    test_field_fight,
    test_grove_agent,
    test_migration_ds,
    test_migration_grove,
    test_multinode_agent,
    test_scaling_adapters,
)
from tests.cluster.support import stale_reads
from tests.cluster.support.chart_identity import token_kubeconfig
from tests.cluster.support.grove import GROVE_AUTO, grove_step
from tests.cluster.support.rights import (
    ANY_NAMESPACE,
    Right,
    audit_offset,
    covers,
    denied,
    granted_rights,
    used_rights,
)
from tests.cluster.support.secure_metrics import scrape
from tests.support import agent as agents
from tests.support import figures
from tests.support.agent import Agent, kubeconfig_via, running_agent
from tests.support.graphs import ds_graph, grove_components
from tests.support.helm import Helm
from tests.support.kube import TEST_TIMEOUT, Kube
from tests.support.kubectl import Kubectl
from tests.support.polling import eventually

# Each scenario once, chosen so that together they send every request the agent can send.
SCENARIOS: list[tuple[ModuleType, str]] = [
    # Component pathway: create, edit, remove a component, delete the graph, model Service.
    (test_agent_component, "test_example_graph_yields_rendered_objects_and_becomes_ready"),
    (test_agent_component, "test_removing_a_component_deletes_its_dcd_and_workloads_only"),
    (test_agent_component, "test_deleting_a_graph_deletes_what_it_owned_and_nothing_else"),
    (test_agent_component, "test_model_service_is_co_owned_and_left_by_each_owner"),
    # Every migration between the three pathways.
    (test_migration_ds, "test_component_to_ds_cutover_keeps_every_component_served"),
    (test_migration_ds, "test_ds_fallback_to_dcds_hands_services_back_and_deletes_ds_last"),
    (test_migration_grove, "test_grove_to_component_keeps_the_pcs_until_the_dcds_are_ready"),
    (test_migration_grove, "test_ds_to_grove_keeps_the_ds_until_the_pcs_is_ready"),
    (test_grove_agent, "test_grove_to_ds_removes_the_pcs_only_after_the_ds_is_ready"),
    (
        test_migration_grove,
        "test_component_to_grove_with_a_model_hands_the_model_service_over_cleanly",
    ),
    # Grove scale subresources (a scaling group, then a single clique); multinode (LWS, the
    # wait-for-leader ConfigMap); pull secrets.
    (test_grove_agent, "test_grove_pcs_readiness_scale_writes_and_clique_set_refusal"),
    (sys.modules[__name__], "_grove_single_clique_scaled"),
    # Secure metrics, the chart's default: one scrape with a token.
    (sys.modules[__name__], "_metrics_scraped"),
    # The history: the front proxy's trust read from kube-system (its reviews: as the scrape's).
    (sys.modules[__name__], "_history_trust_read"),
    (test_multinode_agent, "test_component_pathway_launch_and_wait_leader_config_map"),
    (test_ds_agent, "test_a_new_pull_secret_re_renders_the_ds_roles_without_a_resync"),
    # Takeover of the upstream operator's fields; the fight detector, backoff and take-back.
    (test_agent_takeover, "test_agent_takes_over_fields_the_upstream_operator_wrote"),
    # A graph the operator served: its status entry taken (patch of its managedFields), its
    # finalizer released once it is deleted (patch of its finalizers).
    (
        test_agent_takeover,
        "test_a_graph_the_operator_served_has_its_status_taken_and_can_be_deleted",
    ),
    (test_field_fight, "test_a_second_manager_forcing_replicas_is_named_once_and_left_alone"),
    (
        test_field_fight,
        "test_after_the_backoff_the_field_is_taken_back_and_a_continued_fight_doubles_it",
    ),
    # Scaling adapters: created, applied, their status applied, deleted; the adapter's replicas
    # into the graph's spec (the one spec write, through the agent guard).
    (
        test_scaling_adapters,
        "test_the_adapter_keeps_its_replicas_and_goes_when_the_component_stops_asking",
    ),
    (test_scaling_adapters, "test_scaling_the_adapter_moves_the_graph_and_the_deployment"),
    # The one get on each applied kind: a foreign object appears behind the agent's held watch
    # and the agent's create finds its name taken, so it reads the object and refuses it.
    (stale_reads, "stale_caches_are_re_read"),
]

# Grants no request of the agent uses, each needed by an admission check; the chart's comment
# on each rule says the same.
ADMISSION_ONLY: dict[tuple[str, str, str], str] = {
    ("update", "nvidia.com", "dynamographdeployments/finalizers"): (
        "OwnerReferencesPermissionEnforcement: blockOwnerDeletion on a reference to a graph"
    ),
    ("update", "nvidia.com", "dynamocomponentdeployments/finalizers"): (
        "OwnerReferencesPermissionEnforcement: blockOwnerDeletion on a reference to a DCD"
    ),
}


def _grove_single_clique_scaled(control_plane: ControlPlane, kube: Kube, namespace: str) -> None:
    """A Grove graph's single-node component scaled: a merge patch on its PodClique's scale."""
    kube.create(ds_graph(namespace, "gs", grove_components()))
    step = grove_step(kube, namespace)
    with running_agent(control_plane.kubeconfig, *GROVE_AUTO, namespace=namespace):
        eventually(
            lambda: kube.get("PodClique", namespace, "gs-0-frontend"),
            deadline=test_grove_agent.DEADLINE,
            step=step,
            what="the frontend PodClique",
        )

        def scale(g: dict[str, Any]) -> None:
            g["spec"]["components"][0]["replicas"] = 2

        kube.edit_graph(namespace, "gs", scale)
        eventually(
            lambda: kube.get("PodClique", namespace, "gs-0-frontend")["spec"]["replicas"] == 2,
            deadline=test_grove_agent.DEADLINE,
            step=step,
            what="the frontend PodClique scaled to 2",
        )


def _metrics_scraped(control_plane: ControlPlane, namespace: str) -> None:
    """A scrape of the secure metrics endpoint: the agent asks the API server who sent the token
    (a TokenReview) and whether it may get /metrics (a SubjectAccessReview); this account may
    not, so the answer is 403."""
    token = control_plane.token_for(namespace=namespace, service_account="scraper")
    with running_agent(control_plane.kubeconfig, "--metrics-secure", namespace=namespace) as agent:
        status, body = scrape(f"https://127.0.0.1:{agent.port}/metrics", token)
        assert status == 403, (status, body)


def _history_trust_read(control_plane: ControlPlane, namespace: str) -> None:
    """The history port: the agent reads the front proxy's trust from
    kube-system/extension-apiserver-authentication before any read can be answered."""
    flags = ("--history-bind-address", "127.0.0.1:0")
    with running_agent(control_plane.kubeconfig, *flags, namespace=namespace) as agent:
        eventually(
            lambda: "front-proxy trust loaded" in agent.logs(),
            deadline=30,
            what="the agent to read the front proxy's trust",
        )


def _handed_out() -> dict[tuple[str, str, str], str]:
    """The rights of each graph's discovery Role: RBAC lets the agent create a Role only with
    rights it holds itself (it has no ``escalate``)."""
    return {
        (verb, group, resource): "granted by each graph's discovery Role"
        for rule in DISCOVERY_ROLE_RULES
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


@dataclass(frozen=True)
class Run:
    used: set[Right]
    granted: set[Right]
    denied: list[str]
    failures: dict[str, str]


@pytest.fixture(scope="module")
def recorded_run(control_planes: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    control_plane: ControlPlane = control_planes.get(versions.DEFAULT_LWS)
    home = tmp_path_factory.mktemp("helm-rights")
    config = KubeConfig.from_file(str(control_plane.kubeconfig))
    with Client(config=config, field_manager="syncagent-tests", timeout=TEST_TIMEOUT) as admin:
        release_ns = f"rights-{uuid.uuid4().hex[:8]}"
        with _namespace(admin, release_ns), _installed(control_plane, home, release_ns):
            account = f"{release_ns}-syncagent"
            token = control_plane.token_for(namespace=release_ns, service_account=account)
            kubeconfig = token_kubeconfig(control_plane, token, home / "agent.kubeconfig")
            user = f"system:serviceaccount:{release_ns}:{account}"
            offset = audit_offset(control_plane.audit_log)
            started = time.monotonic()
            failures: dict[str, str] = {}
            for module, name in SCENARIOS:
                scenario = getattr(module, name)
                # A failed scenario (a denial, most likely) is reported by its own test below;
                # the others still run, so the comparison names every right at once.
                try:
                    with _as_chart(module, kubeconfig, release_ns), _namespace(admin) as ns:
                        _call(
                            scenario,
                            control_plane=control_plane,
                            admin=admin,
                            namespace=ns,
                            user=user,
                        )
                except Exception as err:
                    failures[name] = f"{type(err).__name__}: {err}"[:2000]
            seconds = time.monotonic() - started
            figures.count("rights run", f"{len(SCENARIOS)} scenarios, seconds", round(seconds))
            yield Run(
                used_rights(control_plane.audit_log, user=user, offset=offset),
                granted_rights(admin, namespace=release_ns, account=account),
                denied(control_plane.audit_log, user=user, offset=offset),
                failures,
            )


@contextlib.contextmanager
def _namespace(admin: Client, name: str | None = None) -> Iterator[str]:
    name = name or f"t-{uuid.uuid4().hex[:10]}"
    admin.create(Namespace(metadata=ObjectMeta(name=name, labels={"syncagent-test": "true"})))
    try:
        yield name
    finally:
        admin.delete(Namespace, name)


@contextlib.contextmanager
def _installed(control_plane: ControlPlane, home: Path, release_ns: str) -> Iterator[None]:
    helm = Helm(control_plane, home)
    helm.install(release_ns, release_ns, "crds.install=false")
    try:
        yield
    finally:
        helm.uninstall(release_ns, release_ns)


@contextlib.contextmanager
def _as_chart(module: ModuleType, kubeconfig: Path, release_ns: str) -> Iterator[None]:
    """The scenario's agents run with the chart's token, leader election on (the chart's
    default), their Lease in the release namespace; everything else stays the admin's. An agent
    the scenario points at another server (a fault proxy, which passes the token on) takes the
    token there."""

    @contextlib.contextmanager
    def chart_agent(admin_config: Path | str, *args: str, **kw: Any) -> Iterator[Agent]:
        kw.setdefault("leader_elect", True)
        flags = ("--leader-election-namespace", release_ns, *args)
        config = kubeconfig_via(kubeconfig, _server(Path(admin_config)))
        try:
            with agents.running_agent(config, *flags, **kw) as agent:
                yield agent
        finally:
            config.unlink(missing_ok=True)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "running_agent", chart_agent)
        yield


def _server(kubeconfig: Path) -> str:
    """The server of the (one) cluster a kubeconfig names."""
    (cluster,) = yaml.safe_load(kubeconfig.read_text())["clusters"]
    return str(cluster["cluster"]["server"])


def _call(
    scenario: Callable[..., None],
    *,
    control_plane: ControlPlane,
    admin: Client,
    namespace: str,
    user: str,
) -> None:
    kube = Kube(admin)
    kubectl = Kubectl(ensure_binaries().kubectl, control_plane.kubeconfig, namespace)
    offered = {"control_plane": control_plane, "kube": kube, "namespace": namespace}
    offered["kubectl"] = kubectl
    offered["user"] = user  # the chart's ServiceAccount, as the audit log names it
    wanted = inspect.signature(scenario).parameters
    scenario(**{name: offered[name] for name in wanted})


def test_every_scenario_passed_under_the_chart_identity(recorded_run: Run) -> None:
    failed = "\n\n".join(f"{name}:\n{error}" for name, error in recorded_run.failures.items())
    assert recorded_run.failures == {}, failed


def test_the_run_was_never_denied(recorded_run: Run) -> None:
    assert recorded_run.denied == [], "the chart's RBAC refused:\n" + "\n".join(recorded_run.denied)


def test_the_chart_grants_every_right_the_run_used(recorded_run: Run) -> None:
    lacking = sorted(
        str(used)
        for used in recorded_run.used
        if not any(covers(grant, used) for grant in recorded_run.granted)
    )
    assert lacking == [], "used, not granted:\n" + "\n".join(lacking)


def test_the_chart_grants_nothing_the_run_did_not_use(recorded_run: Run) -> None:
    exempt = {**ADMISSION_ONLY, **_handed_out()}
    unused = sorted(
        str(grant)
        for grant in recorded_run.granted
        if (grant.verb, grant.group, grant.resource) not in exempt
        and not any(covers(grant, used) for used in recorded_run.used)
    )
    assert unused == [], "granted, never used (remove from the chart):\n" + "\n".join(unused)


def test_every_exemption_is_granted_and_unused(recorded_run: Run) -> None:
    """The exemptions stay true: each is still granted, and no request of the run needed it
    (otherwise it belongs to the recorded rights, not to this list)."""
    for verb, group, resource in {**ADMISSION_ONLY, **_handed_out()}:
        wanted = Right(verb, group, resource, ANY_NAMESPACE)
        assert wanted in recorded_run.granted, f"{wanted}: exempt but not granted"
        assert not any(covers(wanted, used) for used in recorded_run.used), (
            f"{wanted}: the run used it; it is no exemption"
        )
