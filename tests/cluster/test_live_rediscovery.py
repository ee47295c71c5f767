"""Optional APIs installed, removed and failing while the agent runs (issue 14 item 8;
spec/routing.md §1: refresh on a timer and right after a request finds its kind not served, a
discovery error keeps the last result).

The module's own control plane starts WITHOUT the LeaderWorkerSet and DisaggregatedSet CRDs
(the shared planes have them from the start); each test installs or removes the real pinned
CRDs itself, while a real ``syncagent run`` subprocess serves the graphs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import orjson
import pytest

from syncagent.devcluster import ControlPlane
from tests.conftest import our_crds
from tests.support.agent import Agent, running_agent
from tests.support.graphs import ENABLE_DS, component, ds_components, ds_graph, graph
from tests.support.httpfaults import HttpFaultProxy
from tests.support.kube import DCD, DGD, DS, Kube, condition
from tests.support.liveapis import BareControlPlane, install, lws_and_ds, remove
from tests.support.polling import eventually

G = "disagg"
DEADLINE = 90.0
ELIGIBLE = "DisaggregatedSetEligible"
UNAVAILABLE = ("False", "FallbackToComponentProgram", "DisaggregatedSet API is not available")
SELECTED = ("True", "Selected", "DisaggregatedSet pathway selected")
DISCOVERY_FAILED = "discovery failed; keeping the last result"
# The informers' lists and watches of the DS and LWS kinds (never the engine's own requests).
INFORMERS = r"/(disaggregatedsets|leaderworkersets)\?(.*&)?(limit|watch)="


@pytest.fixture(scope="module")
def bare_plane() -> Iterator[ControlPlane]:
    plane = BareControlPlane(extra_crds=our_crds())
    plane.start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture
def control_plane(bare_plane: ControlPlane) -> ControlPlane:
    """Every fixture of this module (kube, namespace, ...) talks to the bare plane."""
    return bare_plane


def _eligible(kube: Kube, ns: str, name: str = G) -> tuple[str, str, str]:
    cond = condition(kube.get(DGD, ns, name), ELIGIBLE)
    return (cond.get("status", ""), cond.get("reason", ""), cond.get("message", ""))


def _pathway(kube: Kube, ns: str, name: str = G) -> str:
    return condition(kube.get(DGD, ns, name), "WorkloadPathway").get("reason", "")


def _uids(kube: Kube, ns: str) -> dict[str, str]:
    """``Kind/name`` -> UID of every object of ours the agent could delete."""
    return {
        f"{kind}/{o['metadata']['name']}": o["metadata"]["uid"]
        for kind in ("Deployment", "Service", DCD, "ServiceAccount", "Role", "RoleBinding")
        for o in kube.list(kind, ns)
        if kind != "ServiceAccount" or o["metadata"]["name"] != "default"
    }


def _records(agent: Agent) -> list[dict]:
    out = []
    for line in agent.logs().splitlines():
        with contextlib.suppress(orjson.JSONDecodeError):
            out.append(orjson.loads(line))
    return out


def _deletes(agent: Agent) -> float:
    return agent.scrape().requests(verbs=("delete",), dry_run="false", exclude=("events",))


def _scale_decode(kube: Kube, ns: str, replicas: int, name: str = G) -> None:
    def change(g: dict) -> None:
        for c in g["spec"]["components"]:
            if c["name"] == "decode":
                c["replicas"] = replicas

    kube.edit_graph(ns, name, change)


def _ds_decode_replicas(kube: Kube, ns: str) -> int | None:
    ds = kube.get(DS, ns, G) or {}
    roles = {r["name"]: r for r in (ds.get("spec") or {}).get("roles") or ()}
    return roles.get("decode", {}).get("spec", {}).get("replicas")


def test_a_waiting_graph_moves_to_ds_when_the_crds_are_installed(control_plane, kube, namespace):
    remove(kube, lws_and_ds())
    kube.create(ds_graph(namespace, G, ds_components(), **{ENABLE_DS: "true"}))
    with running_agent(
        control_plane.kubeconfig, "--discovery-interval", "1s", namespace=namespace
    ) as agent:
        eventually(
            lambda: _eligible(kube, namespace) == UNAVAILABLE,
            deadline=DEADLINE,
            what="the graph waiting for the DisaggregatedSet API",
        )
        assert _pathway(kube, namespace) == "Component"
        install(kube, lws_and_ds())
        ds = eventually(
            lambda: kube.get(DS, namespace, G), deadline=DEADLINE, what="the graph's DS"
        )
        assert [r["name"] for r in ds["spec"]["roles"]] == ["decode", "prefill"]
        eventually(
            lambda: (
                _eligible(kube, namespace) == SELECTED
                and _pathway(kube, namespace) == "DisaggregatedSet"
            ),
            deadline=DEADLINE,
            what="the DisaggregatedSet pathway selected",
        )
        assert agent.proc.poll() is None, "the agent restarted or exited"


def test_b_removed_crds_say_so_and_nothing_of_ours_is_deleted(control_plane, kube, namespace):
    install(kube, lws_and_ds())
    kube.create(ds_graph(namespace, G, ds_components(), **{ENABLE_DS: "true"}))
    other = [component("Frontend", "frontend"), component("decode", "decode")]
    kube.create(graph(namespace, "other", other))
    # A long timer: only the watches' and requests' 404s can tell the agent the APIs went.
    with running_agent(
        control_plane.kubeconfig, "--discovery-interval", "1h", namespace=namespace
    ) as agent:
        eventually(
            lambda: (
                kube.get(DS, namespace, G)
                and {f"{G}-frontend", "other-frontend", "other-decode"}
                <= {o["metadata"]["name"] for o in kube.list(DCD, namespace)}
                and _eligible(kube, namespace) == SELECTED
            ),
            deadline=DEADLINE,
            what="the DS graph and the Component graph deployed",
        )
        before = _uids(kube, namespace)
        remove(kube, lws_and_ds())
        eventually(
            lambda: _eligible(kube, namespace) == UNAVAILABLE,
            deadline=DEADLINE,
            what="a condition saying the DisaggregatedSet API went",
        )
        _scale_decode(kube, namespace, 3, name="other")
        eventually(
            lambda: (kube.get(DCD, namespace, "other-decode") or {})["spec"].get("replicas") == 3,
            deadline=DEADLINE,
            what="the other graph still served",
        )
        after = _uids(kube, namespace)
        assert {k: after.get(k) for k in before} == before
        assert _deletes(agent) == 0
        assert agent.proc.poll() is None


@contextlib.contextmanager
def _served_on_ds(
    control_plane: ControlPlane, kube: Kube, namespace: str, *, interval: str
) -> Iterator[tuple[HttpFaultProxy, Agent, dict]]:
    """A DS graph served by an agent behind an HTTP fault proxy: (proxy, agent, the DS)."""
    install(kube, lws_and_ds())
    kube.create(ds_graph(namespace, G, ds_components(), **{ENABLE_DS: "true"}))
    with (
        HttpFaultProxy(control_plane) as proxy,
        running_agent(
            proxy.kubeconfig(), "--discovery-interval", interval, namespace=namespace
        ) as agent,
    ):
        ds = eventually(
            lambda: _eligible(kube, namespace) == SELECTED and kube.get(DS, namespace, G),
            deadline=DEADLINE,
            what="the graph on the DS pathway",
        )
        yield proxy, agent, ds


def test_c_a_discovery_error_keeps_the_last_result(control_plane, kube, namespace):
    with _served_on_ds(control_plane, kube, namespace, interval="1s") as (proxy, agent, ds):
        before = _uids(kube, namespace)
        failed = agent.logs().count(DISCOVERY_FAILED)
        for group in ("disaggregatedset.x-k8s.io", "leaderworkerset.x-k8s.io"):
            proxy.fail("GET", rf"^/apis/{group}/v1$", 503)
        eventually(
            lambda: agent.logs().count(DISCOVERY_FAILED) >= failed + 2,
            deadline=DEADLINE,
            what="two failed discoveries",
        )
        _scale_decode(kube, namespace, 2)
        eventually(
            lambda: _ds_decode_replicas(kube, namespace) == 2,
            deadline=DEADLINE,
            what="the graph still served on the DS pathway",
        )
        eventually(
            lambda: agent.logs().count(DISCOVERY_FAILED) >= failed + 3,
            deadline=DEADLINE,
            what="discovery still failing after that reconcile",
        )
        assert _eligible(kube, namespace) == SELECTED
        assert _pathway(kube, namespace) == "DisaggregatedSet"
        assert kube.get(DS, namespace, G)["metadata"]["uid"] == ds["metadata"]["uid"]
        assert {n for n in _uids(kube, namespace) if n.startswith(f"{DCD}/")} == {
            f"{DCD}/{G}-frontend"
        }
        after = _uids(kube, namespace)
        assert {k: after.get(k) for k in before} == before
        assert _deletes(agent) == 0


def test_d_a_write_finding_its_kind_gone_refreshes_discovery(control_plane, kube, namespace):
    with _served_on_ds(control_plane, kube, namespace, interval="1h") as (proxy, agent, _):
        # The informers see nothing of what follows; the timer is an hour away.
        proxy.hold("GET", INFORMERS)
        remove(kube, lws_and_ds())
        _scale_decode(kube, namespace, 2)  # the DS program must write the DS
        eventually(
            lambda: _eligible(kube, namespace) == UNAVAILABLE,
            deadline=DEADLINE,
            what="the graph re-routed after the DS write found its kind gone",
        )
        records = _records(agent)
        asked = [r for r in records if r.get("msg") == "kind not served; refreshing discovery"]
        assert f"{DS}/{namespace}/{G}" in {r.get("object") for r in asked}, asked
        watch_404 = [r for r in records if r.get("code") == 404]
        assert not watch_404, "an informer saw the 404, not the write"
        assert _pathway(kube, namespace) == "Component"
