import pytest

from syncagent.cli.pathways import PROGRAMS
from syncagent.kube import kinds
from syncagent.programs import capabilities as caps
from syncagent.programs.capabilities import LWS, Setting
from syncagent.programs.disaggregatedset.program import CAPABILITY as DS
from syncagent.programs.grove.program import CAPABILITY as GROVE
from syncagent.runtime.discovery import CapabilityMetrics, Discovery, served_resources
from syncagent.runtime.metrics import Metrics

pytestmark = pytest.mark.anyio

DECLARED = PROGRAMS.capabilities()


async def test_sees_grove_lws_and_ds_groups(async_client):
    served = await served_resources(
        async_client,
        [
            ("grove.io", "v1alpha1"),
            ("leaderworkerset.x-k8s.io", "v1"),
            ("disaggregatedset.x-k8s.io", "v1"),
            ("nope.example.com", "v1"),
        ],
    )
    for kind in (
        kinds.POD_CLIQUE_SET,
        kinds.POD_CLIQUE,
        kinds.POD_CLIQUE_SCALING_GROUP,
        kinds.LEADER_WORKER_SET,
        kinds.DISAGGREGATED_SET,
    ):
        assert kind in served, kind.gvr
    # Subresources are not resources; an unknown group is simply absent (404), not an error.
    assert not any("/" in resource.plural for resource in served)
    assert not any(resource.group == "nope.example.com" for resource in served)


async def test_example_1_capabilities_from_a_server_serving_all_three(async_client):
    metrics = Metrics()
    discovery = Discovery(
        async_client,
        resolve=caps.resolver(caps.capability_overrides((), declared=DECLARED), declared=DECLARED),
        group_versions=PROGRAMS.group_versions(),
        metrics=metrics,
    )
    changes = []
    discovery.add_listener(lambda old, new: changes.append((old, new)))
    assert discovery.capabilities is None
    got = await discovery.start()
    assert (got.has(GROVE), got.has(LWS), got.has(DS)) == (True, True, True)
    assert got.apis["grove"]
    assert got.apis["disaggregatedSet"]
    assert discovery.capabilities == got
    assert changes == [(None, got)]
    assert metrics.of(CapabilityMetrics).capabilities.value(name="disaggregatedSet") == 1
    # An unchanged refresh tells nobody.
    assert await discovery.refresh() == got
    assert len(changes) == 1


async def test_overrides_switch_pathways_off_but_not_the_apis(async_client):
    settings = caps.capability_overrides(
        [("grove", Setting.FALSE), ("lws", Setting.FALSE)], declared=DECLARED
    )
    discovery = Discovery(
        async_client,
        resolve=caps.resolver(settings, declared=DECLARED),
        group_versions=PROGRAMS.group_versions(),
        metrics=Metrics(),
    )
    got = await discovery.start()
    assert not got.has(GROVE)
    assert not got.has(LWS)
    assert not got.has(DS)
    assert got.apis["grove"]
    assert got.apis["disaggregatedSet"]


async def test_required_capability_not_among_the_discovered_groups_refuses_to_start(async_client):
    # Discovery only looks at the groups it is given: without grove.io, grove is "not served".
    settings = caps.capability_overrides([("grove", Setting.TRUE)], declared=DECLARED)
    discovery = Discovery(
        async_client,
        resolve=caps.resolver(settings, declared=DECLARED),
        group_versions=[("leaderworkerset.x-k8s.io", "v1")],
        metrics=Metrics(),
    )
    with pytest.raises(caps.CapabilityRequiredError) as exc:
        await discovery.start()
    assert str(exc.value) == (
        'capability "grove" is required but grove.io/v1alpha1 podcliquesets is not served'
    )
    assert discovery.capabilities is None


async def test_core_groups_work_too(async_client):
    served = await served_resources(async_client, [("", "v1"), ("apps", "v1")])
    assert kinds.CONFIG_MAP in served
    assert kinds.DEPLOYMENT in served
    # Each served resource carries what discovery says of it: its kind and its scope.
    by_plural = {(r.group, r.plural): r for r in served}
    assert (by_plural["", "configmaps"].kind, by_plural["", "configmaps"].namespaced) == (
        "ConfigMap",
        True,
    )
    assert (by_plural["", "nodes"].kind, by_plural["", "nodes"].namespaced) == ("Node", False)
