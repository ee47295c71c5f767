"""Issue 26 item 2: an agent watching every namespace never sees the system namespaces."""

from __future__ import annotations

from syncagent.controller.setup import SYSTEM_NAMESPACES, outside_system_namespaces


def test_every_system_namespace_is_excluded_by_the_api_server() -> None:
    assert SYSTEM_NAMESPACES == ("kube-system", "kube-public", "kube-node-lease")
    assert outside_system_namespaces(None) == (
        "metadata.namespace!=kube-system,metadata.namespace!=kube-public,"
        "metadata.namespace!=kube-node-lease"
    )


def test_a_watch_keeps_its_own_field_selector() -> None:
    narrowed = outside_system_namespaces("type=kubernetes.io/dockerconfigjson")
    assert narrowed.split(",")[0] == "type=kubernetes.io/dockerconfigjson"
    assert narrowed.endswith("metadata.namespace!=kube-node-lease")
