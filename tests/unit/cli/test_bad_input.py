"""The input shapes issue 15 found ending in a traceback, a wrong output or a misleading message:
each now ends in exit 1 and one line naming the object and the field (or, for an unknown
field, a ``warning:`` line). The words for values the API server rejects are held against a
real kube-apiserver in ``tests/cluster/test_fuzz_bad_input_cluster.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from syncagent.cli.crds import printcrds as crds
from tests.support.cli import run_cli

REPO = Path(__file__).resolve().parents[3]
AGG = yaml.safe_load((REPO / "examples" / "agg.yaml").read_text())


def mutated(change: Callable[[dict[str, Any]], Any]) -> str:
    doc = copy.deepcopy(AGG)
    change(doc)
    return yaml.safe_dump(doc)


def worker(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["spec"]["components"][1]


def main_container(doc: dict[str, Any]) -> dict[str, Any]:
    return worker(doc)["podTemplate"]["spec"]["containers"][0]


W = "spec.components[1]"
C = f"{W}.podTemplate.spec.containers[0]"
RENDER_CASES = {
    "podTemplate.spec a list": (
        lambda d: worker(d)["podTemplate"].__setitem__("spec", [1]),
        f"{W}.podTemplate.spec",
    ),
    "containers a string": (
        lambda d: worker(d)["podTemplate"]["spec"].__setitem__("containers", "x"),
        f"{W}.podTemplate.spec.containers",
    ),
    "a container a number": (
        lambda d: worker(d)["podTemplate"]["spec"].__setitem__("containers", [5]),
        f"{W}.podTemplate.spec.containers[0]",
    ),
    "args a number": (lambda d: main_container(d).__setitem__("args", 5), f"{C}.args"),
    "env a string": (lambda d: main_container(d).__setitem__("env", "A=1"), f"{C}.env"),
    "resources a list": (
        lambda d: main_container(d).__setitem__("resources", [1]),
        f"{C}.resources",
    ),
    "limits a string": (
        lambda d: main_container(d)["resources"].__setitem__("limits", "x"),
        f"{C}.resources.limits",
    ),
    "pod labels a list": (
        lambda d: worker(d)["podTemplate"].__setitem__("metadata", {"labels": [1]}),
        f"{W}.podTemplate.metadata.labels",
    ),
    "volumes a string": (
        lambda d: worker(d)["podTemplate"]["spec"].__setitem__("volumes", "x"),
        f"{W}.podTemplate.spec.volumes",
    ),
    "replicas 10^12": (lambda d: worker(d).__setitem__("replicas", 10**12), f"{W}.replicas"),
    "replicas true": (lambda d: worker(d).__setitem__("replicas", True), f"{W}.replicas"),
    "a sidecar without a name": (
        lambda d: worker(d)["podTemplate"]["spec"]["containers"].append({"image": "x"}),
        f"{W}.podTemplate.spec.containers[1].name",
    ),
    "nodeCount 10^12": (
        lambda d: worker(d).__setitem__("multinode", {"nodeCount": 10**12}),
        f"{W}.multinode.nodeCount",
    ),
    "a graph name with unicode": (
        lambda d: d["metadata"].__setitem__("name", "qwén"),
        "metadata.name",
    ),
}


@pytest.mark.parametrize("case", sorted(RENDER_CASES))
def test_render_names_the_field_in_one_line(case: str):
    change, field = RENDER_CASES[case]
    code, out, err = run_cli(["render", "-f", "-"], mutated(change))
    assert (code, out) == (1, "")
    (line,) = err.splitlines()
    assert line.startswith("error: DynamoGraphDeployment/default/")
    assert f": {field}: " in line


def test_deep_nesting_is_one_line():
    deep = "a: " + "[" * 5000 + "]" * 5000 + "\n"
    for command in ("render", "convert"):
        code, _, err = run_cli([command, "-f", "-"], deep)
        assert code == 1
        assert err.startswith("error: stdin") or err.startswith("error: -"), err
        assert len(err.splitlines()) == 1


def test_replicaz_is_a_warning_naming_the_known_field():
    code, out, err = run_cli(
        ["render", "-f", "-"], mutated(lambda d: worker(d).__setitem__("replicaz", 3))
    )
    assert code == 0
    assert out
    (line,) = err.splitlines()
    assert line.startswith("warning: DynamoGraphDeployment/default/qwen-agg: ")
    assert 'unknown field "spec.components[1].replicaz"' in line
    assert 'did you mean "replicas"?' in line


def test_a_70_character_graph_name_asks_to_shorten_metadata_name_in_a_short_line():
    code, _, err = run_cli(
        ["render", "-f", "-"], mutated(lambda d: d["metadata"].__setitem__("name", "a" * 70))
    )
    assert code == 1
    (line,) = err.splitlines()
    assert "shorten metadata.name to at most 54 characters" in line
    assert len(line) < 250


def test_an_unknown_api_version_is_not_sent_to_convert():
    code, _, err = run_cli(
        ["render", "-f", "-"], mutated(lambda d: d.__setitem__("apiVersion", "nvidia.com/v9"))
    )
    assert code == 1
    assert "convert" not in err
    assert "set apiVersion: nvidia.com/v1beta1" in err


ALPHA = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g"},
    "spec": {
        "services": {
            "Frontend": {
                "componentType": "frontend",
                "extraPodSpec": {"mainContainer": {"image": "x"}},
            }
        }
    },
}


def alpha_with(**fields: Any) -> dict[str, Any]:
    doc = copy.deepcopy(ALPHA)
    doc["spec"]["services"]["Frontend"].update(fields)
    return doc


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"envs": "A=1"}, "spec.services.Frontend.envs"),
        ({"envs": ["A=1"]}, "spec.services.Frontend.envs"),
        ({"extraPodSpec": "x"}, "spec.services.Frontend.extraPodSpec"),
        (
            {"extraPodSpec": {"mainContainer": "x"}},
            "spec.services.Frontend.extraPodSpec.mainContainer",
        ),
        ({"resources": "x"}, "spec.services.Frontend.resources"),
        ({"labels": [1]}, "spec.services.Frontend.labels"),
        ({"sharedMemory": "x"}, "spec.services.Frontend.sharedMemory"),
    ],
)
def test_convert_refuses_what_it_cannot_convert_faithfully(fields: dict[str, Any], field: str):
    code, out, err = run_cli(["convert", "-f", "-"], yaml.safe_dump(alpha_with(**fields)))
    assert (code, out) == (1, "")
    (line,) = err.splitlines()
    assert line.startswith(f"error: DynamoGraphDeployment/default/g: {field}: must be ")


def test_convert_converts_the_items_of_a_list():
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [ALPHA]})
    code, out, err = run_cli(["convert", "-f", "-"], text)
    assert (code, err) == (0, "")
    (doc,) = list(yaml.safe_load_all(out))
    assert doc["apiVersion"] == "nvidia.com/v1beta1"
    assert doc["spec"]["components"][0]["name"] == "Frontend"


def test_convert_says_so_on_empty_input():
    code, out, err = run_cli(["convert", "-f", "-"], "")
    assert (code, out) == (1, "")
    assert err.startswith("error: stdin: empty input, nothing to convert")


@pytest.mark.parametrize(
    ("content", "why"),
    [("", "the file is empty"), ("hello: world\n", "not a kubeconfig (no clusters")],
)
@pytest.mark.parametrize(
    "command", [["plan", "-f", str(REPO / "examples" / "agg.yaml")], ["managers", "x"]]
)
def test_a_bad_kubeconfig_is_one_line_saying_what_is_wrong(
    tmp_path: Path, content: str, why: str, command: list[str]
):
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(content)
    code, _, err = run_cli([*command, "--kubeconfig", str(kubeconfig)], "")
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(f"error: kubeconfig {kubeconfig}: {why}")


def test_crds_dir_on_an_existing_file(tmp_path: Path):
    target = tmp_path / "file"
    target.write_text("x")
    code, _, err = run_cli(["crds", "--dir", str(target)], "")
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(f"error: --dir {target}: cannot write the CRD files there")


def test_no_command_exits_1_with_the_usage():
    code, out, err = run_cli([], "")
    assert (code, out) == (1, "")
    assert err.startswith("usage: syncagent")
    assert "error: syncagent: a command is required" in err


def test_an_internal_error_is_one_line_with_the_debug_hint(monkeypatch: pytest.MonkeyPatch):
    def broken(args: Any) -> int:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(crds, "run", broken)  # the command is looked up when it runs
    code, _, err = run_cli(["crds"], "")
    assert code == 1
    (line,) = err.splitlines()
    assert line == (
        "error: internal error: ZeroDivisionError: division by zero; this is a bug in syncagent: "
        "rerun with --debug for the traceback and report it"
    )
    code, _, err = run_cli(["crds", "--debug"], "")
    assert code == 1
    assert "Traceback (most recent call last)" in err
    assert err.splitlines()[-1].startswith("error: internal error: ZeroDivisionError")
