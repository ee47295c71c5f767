"""Acceptance 2: other people's labels, annotations and owner references survive our applies."""

from __future__ import annotations

import pytest
from lightkube.resources.apps_v1 import Deployment

from syncagent.ssa import ApplyOptions, Engine
from tests.cluster.support.objects import configmap, deployment, refs_of

MANAGER = "syncagent/tests-content"


@pytest.mark.anyio
async def test_foreign_metadata_survives_and_dropped_keys_go(async_client, client, namespace):
    engine = Engine(async_client)
    owner = await engine.apply(configmap(namespace, "other-owner"), ApplyOptions(manager="someone"))
    owner_uid = owner.object["metadata"]["uid"]
    ours = {"app": "web", "tier": "backend"}
    await engine.apply(deployment(namespace, labels=ours), ApplyOptions(manager=MANAGER))

    foreign_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "other-owner", "uid": owner_uid}
    client.patch(
        Deployment,
        "web",
        {
            "metadata": {
                "labels": {"team": "x"},
                "annotations": {"example.com/note": "keep"},
                "ownerReferences": [foreign_ref],
            }
        },
        namespace=namespace,
        field_manager="other-team",
    )

    same = await engine.apply(deployment(namespace, labels=ours), ApplyOptions(manager=MANAGER))
    assert same.action == "unchanged"

    dropped = await engine.apply(
        deployment(namespace, labels={"app": "web"}), ApplyOptions(manager=MANAGER)
    )
    assert dropped.action == "configured"
    live = await engine.get(deployment(namespace))
    labels = live["metadata"]["labels"]
    assert "tier" not in labels
    assert labels["app"] == "web"
    assert labels["team"] == "x"
    assert live["metadata"]["annotations"]["example.com/note"] == "keep"
    assert [r["uid"] for r in refs_of(live)] == [owner_uid]
    assert not refs_of(live)[0].get("controller")
