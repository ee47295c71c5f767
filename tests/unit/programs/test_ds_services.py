"""Who may hand a Service to the graph (routing.md §3 handoff rules; disaggregatedset.md §5.1),
and what it selects while the DS is not ready."""

from __future__ import annotations

import pytest

from syncagent.programs.disaggregatedset.render import pending_selector, service_selector
from syncagent.programs.service_cutover import check_service
from syncagent.programs.writes import RefusedError
from syncagent.ssa import OwnerRef

GRAPH = OwnerRef("nvidia.com/v1beta1", "DynamoGraphDeployment", "x", "g-uid")


def _svc(*refs: dict, managers: list[dict] | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "x-decode",
            "namespace": "ns",
            "ownerReferences": list(refs),
            "managedFields": managers or [],
        },
    }


def _ref(kind: str, name: str, uid: str, api: str = "nvidia.com/v1beta1") -> dict:
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": True}


def _check(svc: dict | None, our_dcds: frozenset[str] | set[str] = frozenset()) -> OwnerRef | None:
    return check_service(svc, graph=GRAPH, namespace="ns", name="x-decode", our_dcds=our_dcds)


def test_absent_ours_and_ownerless_need_no_handoff() -> None:
    assert _check(None) is None
    assert _check(_svc(_ref("DynamoGraphDeployment", "x", "g-uid"))) is None
    assert _check(_svc()) is None


def test_dcd_of_this_graph_is_handed_over() -> None:
    old = _check(_svc(_ref("DynamoComponentDeployment", "x-decode", "d-uid")), {"d-uid"})
    assert old is not None
    assert (old.kind, old.name) == ("DynamoComponentDeployment", "x-decode")


def test_foreign_controllers_are_refused_with_the_spec_messages() -> None:
    with pytest.raises(RefusedError) as err:
        _check(_svc(_ref("Deployment", "other", "o-uid", api="apps/v1")))
    assert err.value.message == 'Service ns/x-decode is controlled by apps/v1/Deployment "other"'
    with pytest.raises(RefusedError) as err:
        _check(_svc(_ref("DynamoComponentDeployment", "y-decode", "y-uid")), {"d-uid"})
    assert err.value.message == (
        "Service ns/x-decode is controlled by unrelated DynamoComponentDeployment y-decode"
    )


def test_ownerless_but_edited_by_someone_is_refused() -> None:
    edited = _svc(
        managers=[
            {
                "manager": "kubectl-edit",
                "operation": "Update",
                "apiVersion": "v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:selector": {}}},
            }
        ]
    )
    with pytest.raises(RefusedError) as err:
        _check(edited)
    assert err.value.message == (
        "refusing to reconcile Service x-decode because it is not controlled by "
        "DynamoGraphDeployment ns/x"
    )


# -- selectors while the DS is not ready (docs/ds-rollout-services.md) ---------------------------

DS_NAME = "disaggregatedset.x-k8s.io/name"
DS_ROLE = "disaggregatedset.x-k8s.io/role"
DS_REVISION = "disaggregatedset.x-k8s.io/revision"


def _s(revision: str | None, *, role: str = "decode", ds: str = "x") -> dict[str, str]:
    return service_selector(ds, role, revision)


def test_a_revision_rollout_widens_the_selector_to_every_revision_of_the_role() -> None:
    widened = pending_selector(_s("old1"), target=_s("new2"))
    assert widened == {DS_NAME: "x", DS_ROLE: "decode", "role": "leader"}
    # the new revision's children do not exist yet: the same
    assert pending_selector(_s("old1"), target=_s(None)) == widened
    # and it stays widened until the DS is ready
    assert pending_selector(widened, target=_s("new2")) == widened


def test_other_selectors_are_kept_while_not_ready() -> None:
    dcd = {"nvidia.com/dynamo-component": "decode", "role": "leader"}
    assert pending_selector(dcd, target=_s("r1")) == dcd  # Component -> DS cutover
    assert pending_selector(_s("r1"), target=_s("r1")) == _s("r1")  # same revision
    other_role = _s("r0", role="prefill")
    assert pending_selector(other_role, target=_s("r1")) == other_role
    other_ds = _s("r0", ds="y")
    assert pending_selector(other_ds, target=_s("r1")) == other_ds
