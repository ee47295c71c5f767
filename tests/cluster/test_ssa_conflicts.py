"""Acceptance 4-6: conflicts, blame data, immutable vs invalid."""

from __future__ import annotations

import pytest
from lightkube.resources.apps_v1 import Deployment

from syncagent.ssa import (
    ApplyOptions,
    ConflictError,
    Engine,
    ImmutableFieldError,
    InvalidError,
    blame,
    managedfields,
)
from tests.cluster.support.objects import IMAGE, deployment, service

MANAGER = "syncagent/tests-workloads"


@pytest.mark.anyio
async def test_conflict_names_path_and_manager_then_force_takes_it_back(
    async_client, client, namespace
):
    engine = Engine(async_client)
    await engine.apply(deployment(namespace, replicas=2), ApplyOptions(manager=MANAGER))
    client.patch(
        Deployment,
        "web",
        {"spec": {"replicas": 5}},
        namespace=namespace,
        field_manager="kubectl-edit",
    )

    writes = engine.counter.writes
    with pytest.raises(ConflictError) as err:
        await engine.apply(deployment(namespace, replicas=2), ApplyOptions(manager=MANAGER))
    assert engine.counter.writes == writes
    assert [(c.path, c.manager, c.operation) for c in err.value.conflicts] == [
        (".spec.replicas", "kubectl-edit", "Update")
    ]
    assert str(err.value).startswith(f"Deployment/{namespace}/web: apply conflicts")

    forced = await engine.apply(
        deployment(namespace, replicas=2), ApplyOptions(manager=MANAGER, force=True)
    )
    assert forced.action == "configured"
    assert [(c.path, c.manager) for c in forced.conflicts] == [(".spec.replicas", "kubectl-edit")]
    assert forced.object["spec"]["replicas"] == 2
    owners = blame(forced.object)
    assert [o.manager for o in owners[".spec.replicas"]] == [MANAGER]


@pytest.mark.anyio
async def test_yielded_paths_stay_with_their_owner_and_the_rest_is_forced(
    async_client, namespace, kubectl
):
    """Engine.apply's ``on_conflict``: what a fight backs off with (design §4.4)."""
    engine = Engine(async_client)
    await engine.apply(deployment(namespace, replicas=2), ApplyOptions(manager=MANAGER))
    kubectl.scale("deployments.apps/web", 5)  # manager "kubectl" on /scale
    kubectl.edit("deployments.apps/web", f"s#image: {IMAGE}#image: registry.example/other:2#")
    asked: list[list[tuple[str, str]]] = []

    def yield_replicas(conflicts, live) -> set[str]:
        assert live is not None
        asked.append(sorted((c.path, c.manager) for c in conflicts))
        return {".spec.replicas", ".spec.template.spec.containers[name=main].ports"}

    desired = deployment(namespace, replicas=2)
    entry = await engine.apply(
        desired, ApplyOptions(manager=MANAGER, force=True, on_conflict=yield_replicas)
    )
    image = ".spec.template.spec.containers[name=main].image"
    assert [(c.path, c.manager) for c in entry.yielded] == [(".spec.replicas", "kubectl")]
    assert [(c.path, c.manager) for c in entry.conflicts] == [(image, "kubectl-edit")]
    assert asked[0] == sorted([(".spec.replicas", "kubectl"), (image, "kubectl-edit")])
    assert entry.object["spec"]["replicas"] == 5  # theirs
    assert entry.object["spec"]["template"]["spec"]["containers"][0]["image"] == IMAGE
    owners = blame(entry.object)
    assert [o.manager for o in owners[".spec.replicas"]] == ["kubectl"]
    assert [o.manager for o in owners[image]] == [MANAGER]
    # A path nobody else holds never reaches the hook, so it is never left out (released):
    # the ports we own stay ours.
    ports = ".spec.template.spec.containers[name=main].ports[containerPort=8000,protocol=TCP]"
    assert [o.manager for o in owners[ports]] == [MANAGER]
    writes = engine.counter.writes
    again = await engine.apply(
        desired, ApplyOptions(manager=MANAGER, force=True, on_conflict=yield_replicas)
    )
    assert again.action == "unchanged"
    assert engine.counter.writes == writes


@pytest.mark.anyio
async def test_blame_decodes_per_path_owners_with_readable_list_keys(
    async_client, client, namespace
):
    engine = Engine(async_client)
    await engine.apply(deployment(namespace), ApplyOptions(manager=MANAGER))
    sidecar = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "main", "env": [{"name": "INJECTED", "value": "1"}]},
                        {"name": "proxy", "image": "registry.example/proxy:1"},
                    ]
                }
            }
        },
    }
    await engine.apply(sidecar, ApplyOptions(manager="injector"))
    live = await engine.get(deployment(namespace))
    owners = blame(live)
    main = ".spec.template.spec.containers[name=main]"

    def managers(path):
        return sorted(o.manager for o in owners[path])

    assert managers(f"{main}.image") == [MANAGER]
    assert managers(f"{main}.ports[containerPort=8000,protocol=TCP]") == [MANAGER]
    assert managers(f"{main}.env[name=INJECTED].value") == ["injector"]
    assert managers(main) == sorted([MANAGER, "injector"])  # both own the item itself
    assert managers(".spec.template.spec.containers[name=proxy].image") == ["injector"]
    assert managers(".spec.replicas") == [MANAGER]
    entry = managedfields.entry_for(live, "injector")
    assert entry is not None
    assert entry.operation == "Apply"
    assert entry.time

    svc = await engine.apply(service(namespace), ApplyOptions(manager="syncagent/tests-services"))
    svc_owners = blame(svc.object)
    assert [o.manager for o in svc_owners[".spec.ports[port=8000,protocol=TCP]"]] == [
        "syncagent/tests-services"
    ]


@pytest.mark.anyio
async def test_changing_the_selector_is_immutable(async_client, namespace):
    engine = Engine(async_client)
    created = await engine.apply(deployment(namespace), ApplyOptions(manager=MANAGER))
    changed = deployment(namespace, selector={"app": "web", "v": "2"})
    with pytest.raises(ImmutableFieldError) as err:
        await engine.apply(changed, ApplyOptions(manager=MANAGER, force=True))
    assert ".spec.selector" in err.value.fields
    assert str(err.value).startswith(f"Deployment/{namespace}/web: immutable field(s)")
    # Our own desired object changed at the version we converged: the (refused) write asked
    # the server itself, no dry run first (docs/write-protocol.md); nothing was stored.
    assert engine.counter.count("apply", dry_run=True) == 0
    live = await engine.read(deployment(namespace))
    assert live["metadata"]["resourceVersion"] == created.resource_version


@pytest.mark.anyio
async def test_plain_invalid_value_is_invalid_not_immutable(async_client, namespace):
    engine = Engine(async_client)
    await engine.apply(deployment(namespace), ApplyOptions(manager=MANAGER))
    with pytest.raises(InvalidError) as err:
        await engine.apply(
            deployment(namespace, replicas=-1), ApplyOptions(manager=MANAGER, force=True)
        )
    assert not isinstance(err.value, ImmutableFieldError)
    assert [c.path for c in err.value.causes] == [".spec.replicas"]
    assert str(err.value).startswith(f"Deployment/{namespace}/web: invalid: .spec.replicas")
