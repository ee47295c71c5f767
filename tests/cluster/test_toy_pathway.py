"""A fourth pathway is its package plus one registry line (issue 28 item 1).

``tests/support/toypathway`` declares a test-only pathway (a ToySet per graph); its agent is
``syncagent`` composed over the real registry plus that one line. On the real API server it
routes an opted-in graph, renders, reconciles (the ToySet controlled by the graph, the graph's
status on the Toy pathway, Ready once the ToySet is) and passes ``syncagent managers``: no file
of the product names it. The DGD CRD is the one the generator makes from that registry (its
pathway enum), installed for this test and put back after.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from syncagent.api import crdgen
from syncagent.cli.main import run_cli
from syncagent.cli.pathways import PROGRAMS as BUILT_IN
from tests.support.agent import running_agent
from tests.support.crd_swap import replace
from tests.support.graphs import component, graph
from tests.support.kube import DGD, Kube, condition, controller
from tests.support.polling import eventually
from tests.support.toypathway import CRD, MANAGER, OPT_IN, TOY
from tests.support.toypathway.agent import PROGRAMS

DEADLINE = 60.0
OURS = Path(__file__).resolve().parents[2] / "crds" / "nvidia.com_dynamographdeployments.yaml"
LAUNCHER = ("-m", "tests.support.toypathway.agent")


@contextlib.contextmanager
def toy_crds(kube: Kube) -> Iterator[None]:
    replace(kube, CRD)
    replace(kube, crdgen.graph_crd(pathways=PROGRAMS.pathways))
    try:
        yield
    finally:
        replace(kube, yaml.safe_load(OURS.read_text()))


def toy_set(kube: Kube, ns: str, name: str) -> dict | None:
    path = f"/apis/{TOY.api_version}/namespaces/{ns}/{TOY.plural}"
    found = [o for o in kube.request("GET", path)["items"] if o["metadata"]["name"] == name]
    return found[0] if found else None


def toy_graph(ns: str) -> dict:
    return graph(ns, "g", [component("frontend", "frontend")], **{OPT_IN: "true"})


def test_render_routes_to_the_toy_pathway(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    manifest = tmp_path / "g.yaml"
    manifest.write_text(yaml.safe_dump(toy_graph("ns")))
    assert run_cli(["render", "-f", str(manifest), "-o", "json"], programs=PROGRAMS) == 0
    rendered = json.loads(capsys.readouterr().out)
    assert [(r["manager"], r["object"]["kind"]) for r in rendered] == [(MANAGER.name, TOY.kind)]
    assert rendered[0]["object"]["spec"] == {"components": ["frontend"]}
    # the shipped registry has no toy: the same graph renders as Component
    assert run_cli(["render", "-f", str(manifest), "-o", "json"], programs=BUILT_IN) == 0
    assert TOY.kind not in capsys.readouterr().out


def test_the_toy_capability_is_declared_in_its_package_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """``--capability toy=…`` exists because the toy's program declares it: switched off, the
    opted-in graph is not the toy's; the shipped registry does not know the name."""
    manifest = tmp_path / "g.yaml"
    manifest.write_text(yaml.safe_dump(toy_graph("ns")))
    off = ["render", "-f", str(manifest), "-o", "json", "--capability", "toy=false"]
    assert run_cli(off, programs=PROGRAMS) == 0
    assert TOY.kind not in capsys.readouterr().out
    assert run_cli([*off, "--program", "toy"], programs=PROGRAMS) == 1
    assert "--program toy needs --capability toy=true" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        run_cli(off, programs=BUILT_IN)
    assert usage.value.code == 1
    assert "unknown capability 'toy'" in capsys.readouterr().err


def test_the_toy_pathway_reconciles_on_the_api_server(control_plane, kube, namespace, capsys):
    with toy_crds(kube):
        kube.create(toy_graph(namespace))
        with running_agent(
            control_plane.kubeconfig, namespace=namespace, launcher=LAUNCHER
        ) as agent:
            toy = eventually(
                lambda: toy_set(kube, namespace, "g"), deadline=DEADLINE, what="the ToySet"
            )
            # routed there because discovery found ToySets served: its capability is on
            samples = agent.scrape().samples
            for name in ("toy", "toyAPI"):
                assert samples[("syncagent_capability", frozenset({("name", name)}))] == 1
            assert controller(toy)["kind"] == DGD
            assert toy["spec"] == {"components": ["frontend"]}

            def routed() -> dict | None:
                live = kube.get(DGD, namespace, "g") or {}
                routing = (live.get("status") or {}).get("routing") or {}
                return live if routing.get("pathway") == "Toy" else None

            live = eventually(routed, deadline=DEADLINE, what="the graph routed to Toy")
            assert condition(live, "WorkloadPathway")["reason"] == "Toy"
            # the toy records its own annotation with the pathway (Program.records)
            assert live["status"]["routing"] == {"pathway": "Toy", "annotations": {OPT_IN: "true"}}
            assert condition(live, "Ready")["status"] == "False"
            status_path = f"/apis/{TOY.api_version}/namespaces/{namespace}/{TOY.plural}/g/status"
            kube.request(
                "PATCH",
                status_path,
                {"status": {"ready": True}},
                content_type="application/merge-patch+json",
            )
            eventually(
                lambda: condition(kube.get(DGD, namespace, "g"), "Ready")["status"] == "True",
                deadline=DEADLINE,
                what="the graph Ready once its ToySet is",
            )
        argv = ["managers", "g", "-n", namespace, "--kubeconfig", str(control_plane.kubeconfig)]
        capsys.readouterr()
        # exit 0: no finding (an undeclared manager, a kind outside its declaration) on the
        # ToySet, which the toy's watches put in the command's view
        code = run_cli(argv, programs=PROGRAMS)
        out = capsys.readouterr().out
        assert code == 0, out
        assert f"{TOY.kind}/{namespace}/g" in out
        assert MANAGER.name in out
