"""Parsing manifests: multi-document streams, skipped kinds, one-line errors."""

from __future__ import annotations

import pytest

from syncagent.api import DynamoComponentDeployment, DynamoGraphDeployment
from syncagent.api.load import LoadError, load_graphs, load_objects
from syncagent.cli.manifestfile import read_input

GRAPH = """\
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: g
  namespace: ns
spec:
  components:
  - name: Frontend
    type: frontend
    podTemplate:
      spec:
        containers:
        - name: main
          image: img:1
"""
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n"
DCD = """\
apiVersion: nvidia.com/v1beta1
kind: DynamoComponentDeployment
metadata:
  name: d
spec:
  type: worker
"""


def test_multi_document_stream_skips_other_kinds() -> None:
    objs = load_objects(f"{CONFIGMAP}---\n{GRAPH}---\n{DCD}---\n", source="f.yaml")
    assert [type(o) for o in objs] == [DynamoGraphDeployment, DynamoComponentDeployment]
    graphs = load_graphs(f"{CONFIGMAP}---\n{GRAPH}", source="f.yaml")
    assert [g.name for g in graphs] == ["g"]


def test_json_input() -> None:
    text = (
        '{"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",'
        ' "metadata": {"name": "j"}, "spec": {"components": []}}'
    )
    assert load_graphs(text)[0].name == "j"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: [b", "f.yaml: not valid YAML: "),
        ("- 1\n- 2\n", "f.yaml: document 1 is a list, not a Kubernetes object"),
        ("just text", "f.yaml: document 1 is a str, not a Kubernetes object"),
        (CONFIGMAP, "f.yaml: no DynamoGraphDeployment or DynamoComponentDeployment"),
        ("", "f.yaml: no DynamoGraphDeployment or DynamoComponentDeployment"),
        ("kind: DynamoGraphDeployment\nmetadata: {name: g}\n", "DynamoGraphDeployment/default/g"),
        (
            "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: g}\n",
            "DynamoGraphDeployment/default/g: apiVersion nvidia.com/v1alpha1 is not supported; "
            "convert it with `syncagent convert -f f.yaml`",
        ),
        (
            "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {}\n",
            "DynamoGraphDeployment/default/?: metadata.name: required",
        ),
        (
            "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\n"
            "metadata: {name: g, namespace: n}\nspec: {components: [{replicas: 1}]}\n",
            "DynamoGraphDeployment/n/g: spec.components[0].name: required",
        ),
        (
            "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\n"
            "metadata: {name: g}\nspec: {components: [{name: a, type: router}]}\n",
            "DynamoGraphDeployment/default/g: spec.components[0].type: Input should be",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_problem(text: str, expected: str) -> None:
    with pytest.raises(LoadError) as info:
        load_objects(text, source="f.yaml")
    message = str(info.value)
    assert message.startswith(expected)
    assert "\n" not in message


def test_dcd_only_stream_has_no_graph() -> None:
    with pytest.raises(LoadError, match="no DynamoGraphDeployment"):
        load_graphs(DCD, source="f.yaml")


def test_read_input_missing_file(tmp_path) -> None:
    with pytest.raises(LoadError, match=r"nope\.yaml: no such file"):
        read_input(str(tmp_path / "nope.yaml"))
    path = tmp_path / "g.yaml"
    path.write_text(GRAPH)
    assert read_input(str(path)) == GRAPH
