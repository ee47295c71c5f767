"""Keeping a graph's wait-for-leader ConfigMap (vLLM ``mp`` workers mount it).

Upstream creates it for every graph with a multinode component, whatever the backend; so do
we, on every pathway, and for a standalone DCD whose worker pods mount it (our design: they
would otherwise wait for a volume nobody creates). Once it is not wanted any more the
ConfigMap is deleted, with its UID, only if its owner controls it.
"""

from __future__ import annotations

from syncagent.kube import being_deleted, controlled_by
from syncagent.kube.objects import Body
from syncagent.programs.context import GraphContext
from syncagent.programs.view import Obj, Store
from syncagent.programs.writes import Writer
from syncagent.render.multinode import config_map_name, wait_leader_config_map
from syncagent.ssa import owner_of

KIND = "ConfigMap"


async def sync_graph(ctx: GraphContext) -> None:
    """The graph's ConfigMap, on every pathway: wanted while a component is multinode."""
    wanted = any(c.is_multinode for c in ctx.typed.spec.components)
    await sync(ctx.writer, ctx.store, owner=ctx.graph, parent=ctx.name, wanted=wanted)


async def sync(writer: Writer, store: Store, *, owner: Obj, parent: str, wanted: bool) -> None:
    """Apply (``wanted``) or remove the ConfigMap of ``parent``, controlled by ``owner``."""
    namespace = Body(owner).meta.namespace
    live = store.get(KIND, namespace, config_map_name(parent))
    if being_deleted(live):
        return
    ref = owner_of(owner)
    if wanted:
        rendered = wait_leader_config_map(parent, namespace=namespace, owner=ref)
        await writer.apply_owned(rendered, owner=ref, live=live)
    elif live is not None and controlled_by(live, ref.uid):
        await writer.delete(live)
