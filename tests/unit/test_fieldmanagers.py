"""Field-manager declarations: unique names, resolvable owners, path coverage."""

from __future__ import annotations

import fieldmanagers
from fieldmanagers import ownership, services


def test_every_manager_is_ours_and_unique() -> None:
    names = [m.name for m in fieldmanagers.ALL]
    assert len(names) == len(set(names))
    assert all(fieldmanagers.is_ours(n) for n in names)


def test_per_owner_managers_resolve_to_their_uid() -> None:
    manager = fieldmanagers.by_name("syncagent/owner/1234-abcd")
    assert manager is not None
    assert manager.name == "syncagent/owner/1234-abcd"
    assert manager.owns(".metadata.ownerReferences[uid=1234-abcd]")


def test_paths_cover_descendants_only() -> None:
    assert services.MANAGER.owns(".spec.ports[port=8000,protocol=TCP].targetPort")
    assert not services.MANAGER.owns(".status.loadBalancer")
    assert ownership.MANAGER.owns(".metadata.ownerReferences[uid=x].controller")
    assert not ownership.MANAGER.owns(".metadata.labels.app")


def test_unknown_manager_is_not_declared() -> None:
    assert fieldmanagers.by_name("kubectl-client-side-apply") is None
