"""A component's launch inputs: its backend and, per pod role, the :class:`Launch`."""

from __future__ import annotations

from syncagent.render import labels as L
from syncagent.render.inputs import ComponentSource
from syncagent.render.multinode.backend import Backend, backend_for, backend_name
from syncagent.render.multinode.deployer import Deployer, GroveDeployer, LwsDeployer
from syncagent.render.multinode.gpus import container_gpus
from syncagent.render.multinode.launch import Launch, Role

MAIN = "main"


def _main(source: ComponentSource) -> dict:
    containers = (source.pod_template.get("spec") or {}).get("containers") or []
    return next((dict(c) for c in containers if c.get("name") == MAIN), {})


def backend_of(source: ComponentSource) -> Backend:
    """The backend that rewrites this component's pods; raises ``RenderError``."""
    main = _main(source)
    name = backend_name(
        source.type,
        list(main.get("command") or []),
        list(main.get("args") or []),
        str(source.spec.get("backendFramework") or ""),
    )
    return backend_for(name)


def launch_of(source: ComponentSource, *, role: Role, grove: bool) -> Launch:
    """``role``'s launch inputs; Grove cliques and LeaderWorkerSets (DCD or DS) differ only in
    how a pod finds its leader and rank."""
    deployer: Deployer = GroveDeployer() if grove else LwsDeployer()
    annotations = dict(source.template_annotations)
    if source.origin_version is not None:
        # The component's own template annotation wins over the graph's, as upstream propagates.
        annotations.setdefault(L.ORIGIN_VERSION, source.origin_version)
    main = _main(source)
    return Launch(
        nodes=source.node_count,
        role=role,
        deployer=deployer,
        service=source.component_name,
        parent=source.parent,
        annotations=annotations,
        graph_owned=source.parent_graph is not None,
        upstream_served=bool(source.worker_hash),
        gpus=lambda: container_gpus(main),
    )
