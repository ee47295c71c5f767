"""Grove scale writes (docs/grove.md §1 "Scale writes"): JSON merge patches on ``/scale``.

Server-side apply to a custom resource's ``scale`` subresource does not work (kubernetes#116311),
so desired replicas go through a merge patch under ``syncagent/grove-scale``, and only when the
live child's ``spec.replicas`` differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncagent.kube.objects import Body
from syncagent.programs.grove import scale_field_manager as grove_scale
from syncagent.programs.writes import Writer


def needs_scale(child: Mapping[str, Any] | None, desired: int) -> bool:
    if child is None or Body(child).being_deleted:
        return False  # a child not created yet is patched once it exists
    return (child.get("spec") or {}).get("replicas") != desired


async def patch_scale(writer: Writer, child: Mapping[str, Any], desired: int) -> dict[str, Any]:
    """One merge patch ``{"spec":{"replicas":N}}`` to the child's ``scale`` subresource,
    through the reconcile's writer like every other write."""
    return await writer.merge_patch(
        child,
        {"spec": {"replicas": desired}},
        manager=grove_scale.MANAGER.name,
        subresource="scale",
    )
