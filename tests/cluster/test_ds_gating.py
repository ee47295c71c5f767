"""Checkpoint gating across selected roles and coalesced restarts (issue 6 acceptance 7)."""

from __future__ import annotations

from tests.cluster.support.dsgraph import ds_step, wait_ready
from tests.support.agent import running_agent
from tests.support.fake_ds import FakeDsController
from tests.support.fake_workloads import DEADLINE
from tests.support.graphs import ENABLE_DS, annotate, ds_components, ds_graph
from tests.support.kube import DCD, DGD, DS, LWS, Kube, names, ready_reason
from tests.support.polling import eventually

G = "gated"
RESTART_AT = "nvidia.com/restartAt"


def _checkpointed() -> list[dict]:
    components = ds_components()
    components[1]["experimental"] = {
        "checkpoint": {
            "enabled": True,
            "checkpointRef": "ck1",
            "startupPolicy": "WaitForCheckpoint",
        }
    }
    return components


def _roles(kube: Kube, ns: str) -> list[dict]:
    return (kube.get(DS, ns, G) or {}).get("spec", {}).get("roles", [])


def test_checkpoint_holds_every_role_at_zero_until_ready(control_plane, kube, namespace):
    kube.create(ds_graph(namespace, G, _checkpointed()))
    fake = FakeDsController(kube, namespace)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: (
                {f"{G}-decode", f"{G}-prefill"} <= names(kube, DCD, namespace)
                and ready_reason(kube, namespace, G) == "waiting_for_checkpoint"
            ),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the Component graph waiting for its checkpoint",
        )
        kube.edit_graph(
            namespace,
            G,
            annotate({ENABLE_DS: "true"}),
        )
        eventually(
            lambda: len(_roles(kube, namespace)) == 2,
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the DS",
        )
        assert [r["spec"]["replicas"] for r in _roles(kube, namespace)] == [0, 0]
        eventually(
            lambda: ready_reason(kube, namespace, G) == "waiting_for_checkpoint",
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="pending on the checkpoint",
        )
        graph = kube.get(DGD, namespace, G)
        assert graph["status"]["state"] == "pending"
        # the gated DS is never ready: the old DCDs keep serving
        assert {f"{G}-decode", f"{G}-prefill"} <= names(kube, DCD, namespace)
        kube.create(
            {
                "apiVersion": "nvidia.com/v1alpha1",
                "kind": "DynamoCheckpoint",
                "metadata": {"name": "ck1", "namespace": namespace},
                "spec": {},
            }
        )
        kube.merge(
            "DynamoCheckpoint", namespace, "ck1", {"status": {"phase": "Ready"}}, sub="status"
        )
        eventually(
            lambda: [r["spec"]["replicas"] for r in _roles(kube, namespace)] == [1, 1],
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="both roles at 1 once the checkpoint is ready",
        )
        eventually(
            lambda: (
                ready_reason(kube, namespace, G) == "all_resources_are_ready"
                and names(kube, DCD, namespace) == {f"{G}-frontend"}
            ),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="cutover once the children are ready",
        )


def test_sequential_restart_annotates_both_roles_once_and_completes(control_plane, kube, namespace):
    # only the two roles: the order must list every component (api.md V13)
    kube.create(ds_graph(namespace, G, ds_components()[1:], **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, fake, what="Ready")
        before = set(fake.created)
        fake.ready = False
        kube.edit_graph(
            namespace,
            G,
            lambda g: g["spec"].update(
                {
                    "restart": {
                        "id": "r1",
                        "strategy": {"type": "Sequential", "order": ["prefill", "decode"]},
                    }
                }
            ),
        )

        def restarting() -> bool:
            st = (kube.get(DGD, namespace, G) or {}).get("status", {}).get("restart")
            return st == {"observedID": "r1", "phase": "Restarting", "inProgress": ["prefill"]}

        eventually(
            restarting,
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="Restarting [prefill]",
        )
        for role in _roles(kube, namespace):
            lwt = role["spec"]["leaderWorkerTemplate"]
            assert lwt["leaderTemplate"]["metadata"]["annotations"][RESTART_AT] == "r1"
            assert lwt["workerTemplate"]["metadata"]["annotations"][RESTART_AT] == "r1"
        eventually(
            lambda: len(set(fake.created) - before) == 2,
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="one new revision for both roles",
        )
        fake.ready = True

        def completed() -> bool:
            st = (kube.get(DGD, namespace, G) or {}).get("status", {}).get("restart") or {}
            return st.get("phase") == "Completed"

        eventually(
            completed, deadline=DEADLINE, step=ds_step(kube, namespace, fake), what="Completed"
        )
        st = kube.get(DGD, namespace, G)["status"]["restart"]
        assert st == {"observedID": "r1", "phase": "Completed", "inProgress": []}
        # exactly one new revision was rolled: two new children in total, no second step
        assert len(set(fake.created) - before) == 2
        eventually(
            lambda: len(names(kube, LWS, namespace)) == 2,
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the old revision removed",
        )
        assert set(fake.created) - before <= names(kube, LWS, namespace)
