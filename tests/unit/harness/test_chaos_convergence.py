"""What chaos R7 prints when its graphs do not converge (no cluster here): each graph not
converged, its conditions, and its components' ``Available`` beside their Deployments as the
server has them, so the text says whether the agent or the cluster held the graph."""

from __future__ import annotations

from typing import Any

from tests.chaos.support.fleet import converged_in
from tests.support.kube import DCD, DGD


def _available(status: str, message: str) -> dict[str, Any]:
    return {"conditions": [{"type": "Available", "status": status, "message": message}]}


def _ready(status: str) -> dict[str, Any]:
    return {"type": "Ready", "status": status, "reason": "r", "message": "m"}


class _Server:
    """Lists of a namespace, as ``Kube.list`` returns them."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]]) -> None:
        self.objects = objects
        self.listed: list[str] = []

    def list(self, kind: str, ns: str) -> list[dict[str, Any]]:
        self.listed.append(kind)
        return self.objects.get(kind, [])


def _graph(name: str, *, ready: str) -> dict[str, Any]:
    meta = {"name": name, "generation": 3}
    return {"metadata": meta, "status": {"observedGeneration": 3, "conditions": [_ready(ready)]}}


def test_a_graph_not_converged_is_named_with_its_components_and_their_deployments() -> None:
    server = _Server(
        {
            DGD: [_graph("g000", ready="True"), _graph("g001", ready="False")],
            DCD: [
                {
                    "metadata": {
                        "name": "g001-frontend",
                        "generation": 2,
                        "labels": {"nvidia.com/dynamo-graph-deployment-name": "g001"},
                    },
                    "status": {
                        "observedGeneration": 2,
                        **_available("False", "Deployment g001-frontend is not ready"),
                    },
                }
            ],
            "Deployment": [
                {
                    "metadata": {"name": "g001-frontend", "generation": 5},
                    "spec": {"replicas": 1},
                    "status": {
                        "observedGeneration": 5,
                        "readyReplicas": 1,
                        **_available("True", ""),
                    },
                }
            ],
        }
    )
    result = converged_in(server, "ns")  # type: ignore[arg-type]
    assert not result
    text = repr(result)
    assert text.startswith("1 of 2 graphs not converged")
    assert "g000" not in text
    assert "g001 generation 3 observed 3" in text
    assert "Ready=False" in text
    assert (
        "g001-frontend: Available=False (Deployment g001-frontend is not ready), observed 2 of "
        "generation 2; Deployment 1/1 ready, observed 5 of generation 5, Available=True"
    ) in text


def test_converged_graphs_cost_one_list() -> None:
    server = _Server({DGD: [_graph("g000", ready="True")]})
    assert converged_in(server, "ns")  # type: ignore[arg-type]
    assert server.listed == [DGD]
